"""ENI mode in the agent: ENI-ARCH-4 conversion, ENI-ARCH-5 demand, ENI-REL-1 release, ENI-V6-3."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from reconciler.agent.agent import Agent, AgentConfig, PodStatus
from reconciler.agent.eni import eni_cidrs
from reconciler.agent.pods import PodInfo
from reconciler.agent.release import ReleasePolicy
from reconciler.clock import SimClock
from reconciler.model import CiliumNode, PoolAllocation, PoolRequest


def eni(
    eni_id: str,
    number: int,
    ip: str,
    addresses: list[str],
    prefixes: list[str] = (),  # type: ignore[assignment]
    v6: list[str] = (),
    tags: dict[str, str] | None = None,
) -> dict[str, Any]:  # type: ignore[assignment]
    return {
        "id": eni_id,
        "number": number,
        "ip": ip,
        "addresses": list(addresses),
        "prefixes": list(prefixes),
        "ipv6-prefixes": list(v6),
        "tags": tags or {},
    }


def node(enis: list[dict[str, Any]], eni_spec: dict[str, Any] | None = None, pre: int = 2) -> CiliumNode:
    return CiliumNode.from_obj(
        {
            "metadata": {"name": "n1", "resourceVersion": "1"},
            "spec": {"eni": eni_spec or {}, "ipam": {"pre-allocate": pre}},
            "status": {"eni": {"enis": {e["id"]: e for e in enis}}},
        }
    )


def test_eni_arch_4_secondary_ips_prefixes_and_ipv6_prefixes() -> None:
    n = node(
        [
            eni("eni-1", 1, "10.0.1.10", ["10.0.1.11", "10.0.1.12"], ["10.0.2.0/28"], ["2600:1f18::/80"]),
            eni("eni-0", 0, "10.0.0.10", ["10.0.0.11"]),
            eni("eni-2", 2, "10.0.3.10", ["10.0.3.11"], tags={"no-pods": "true"}),
        ],
        {"first-interface-index": 1, "exclude-interface-tags": {"no-pods": "true"}},
    )
    cidrs, problems = eni_cidrs(n)
    assert problems == []
    assert [str(c) for c in cidrs[4]] == ["10.0.1.11/32", "10.0.1.12/32", "10.0.2.0/28"]
    assert [str(c) for c in cidrs[6]] == ["2600:1f18::/80"]


def test_eni_arch_4_primary_only_with_use_primary_address() -> None:
    enis = [eni("eni-0", 0, "10.0.0.10", ["10.0.0.10", "10.0.0.11"])]
    assert [str(c) for c in eni_cidrs(node(enis))[0][4]] == ["10.0.0.11/32"]
    with_primary = node(enis, {"use-primary-address": True})
    assert [str(c) for c in eni_cidrs(with_primary)[0][4]] == ["10.0.0.10/32", "10.0.0.11/32"]


def test_eni_agent_publishes_default_pool_and_every_prefix_address_is_usable() -> None:
    agent = Agent("n1", AgentConfig(mode="eni", enable_ipv6=True))
    n = node([eni("eni-0", 0, "10.0.0.10", ["10.0.0.11"], ["10.0.2.0/28"], ["2600:1f18::/80"])], pre=16)
    outs = [agent.add_pod(PodInfo("ns", f"p{i}")) for i in range(17)]
    assert all(o.status is PodStatus.PENDING for o in outs), "no CIDRs known before the first sync"
    ipam = agent.sync(n)
    done = agent.take_completed()
    assert len(done) == 17, "1 /32 + 16 addresses of the /28 (first and last usable in ENI mode)"
    assert {o.ips[4] for o in done} >= {"10.0.0.11", "10.0.2.0", "10.0.2.15"}
    assert done[0].ips[6].startswith("2600:1f18::")
    assert ipam.allocated == (PoolAllocation("default", ("10.0.0.11/32", "10.0.2.0/28", "2600:1f18::/80")),)
    assert ipam.requested == (PoolRequest("default", 17 + 16, 17 + 16),), "ENI-ARCH-5: in-use + pending + pre"


def test_eni_arch_4_pod_asking_for_another_pool_fails_clearly() -> None:
    agent = Agent("n1", AgentConfig(mode="eni"))
    out = agent.add_pod(PodInfo("ns", "p", namespace_annotations={"ipam.cilium.io/ip-pool": "blue"}))
    assert out.status is PodStatus.FAILED
    assert "pool blue" in out.reason and "ENI mode" in out.reason and "remove the annotation" in out.reason
    fine = agent.add_pod(PodInfo("ns", "q", annotations={"ipam.cilium.io/ip-pool": "default"}))
    assert fine.status is PodStatus.PENDING


def test_eni_rel_1_release_and_never_readd_while_listed_ipv6_never_released() -> None:
    clock = SimClock()
    no_margin = ReleasePolicy(min_idle_s=300.0, spare_cidrs=0)
    agent = Agent("n1", AgentConfig(mode="eni", enable_ipv6=True, release=no_margin), clock=clock)
    n = node(
        [
            eni(
                "eni-0",
                0,
                "10.0.0.10",
                ["10.0.0.11", "10.0.0.12", "10.0.0.13", "10.0.0.14"],
                v6=["2600:1f18::/80"],
            )
        ],
        pre=2,
    )
    agent.add_pod(PodInfo("ns", "a"))
    assert "10.0.0.14/32" in agent.sync(n).allocated[0].cidrs, "hysteresis: not idle for 300 s yet"
    clock.advance(300.0)
    ipam = agent.sync(n)
    # 1 in use, need 1 + 2 = 3 -> free needed 2: two /32s stay free, the last one is released
    assert ipam.allocated[0].cidrs == ("10.0.0.11/32", "10.0.0.12/32", "10.0.0.13/32", "2600:1f18::/80")
    again = agent.sync(replace(n, resource_version="2"))
    assert again.allocated == ipam.allocated, "10.0.0.14 is still in status.eni.enis: not re-added"
    for i in range(5):
        agent.add_pod(PodInfo("ns", f"more{i}"))
    assert "10.0.0.14/32" not in agent.sync(n).allocated[0].cidrs[:4], "never re-added while listed"
    gone = node(
        [eni("eni-0", 0, "10.0.0.10", ["10.0.0.11", "10.0.0.12", "10.0.0.13"], v6=["2600:1f18::/80"])]
    )
    agent.sync(gone)
    back = agent.sync(n)
    assert "10.0.0.14/32" in back.allocated[0].cidrs, "offered anew after EC2 released it"
    assert "2600:1f18::/80" in back.allocated[0].cidrs
