"""MP-MASQ-1: per-pod masquerade decision, taken when the pod gets its address."""

from __future__ import annotations

import pytest

from reconciler.agent.agent import Agent, AgentConfig, AgentConfigError
from reconciler.agent.masquerade import MasqueradeConfig, masquerade_decision
from reconciler.agent.pods import PodInfo
from reconciler.model import CiliumNode, IpamSpec, PoolAllocation
from reconciler.multipool.pools import CiliumPodIPPool, PoolFamily

V4 = PoolFamily(("10.0.0.0/16",), 24)
PLAIN = CiliumPodIPPool("blue", V4)
SKIP = CiliumPodIPPool(
    "bgp", PoolFamily(("10.1.0.0/16",), 24), annotations={"ipam.cilium.io/skip-masquerade": "true"}
)


@pytest.mark.parametrize(
    ("pool", "spec", "config", "expected"),
    [
        ("default", None, MasqueradeConfig(), True),
        ("blue", PLAIN, MasqueradeConfig(), True),
        ("bgp", SKIP, MasqueradeConfig(), False),
        ("blue", PLAIN, MasqueradeConfig(only_masquerade_default_pool=True), False),
        ("default", None, MasqueradeConfig(only_masquerade_default_pool=True), True),
        ("blue", PLAIN, MasqueradeConfig(enable_masquerade=False), False),
    ],
)
def test_mp_masq_1_decision(
    pool: str, spec: CiliumPodIPPool | None, config: MasqueradeConfig, expected: bool
) -> None:
    decision, why = masquerade_decision(pool, spec, "default", config)
    assert decision is expected and why


def test_mp_masq_1_config_needs_ebpf_or_egress_interfaces() -> None:
    bad = MasqueradeConfig(
        only_masquerade_default_pool=True, bpf_masquerade=False, egress_masquerade_interfaces="eth+"
    )
    assert "needs eBPF masquerading" in bad.problems()[0]
    assert "egressMasqueradeInterfaces" in MasqueradeConfig(bpf_masquerade=False).problems()[0]
    with pytest.raises(AgentConfigError, match="needs eBPF masquerading"):
        Agent("n1", AgentConfig(masquerade=bad))


def test_mp_masq_1_change_affects_a_pod_only_once_rescheduled() -> None:
    agent = Agent("n1", pools=[PLAIN])
    node = CiliumNode("n1", ipam=IpamSpec(allocated=(PoolAllocation("blue", ("10.0.0.0/24",)),)))
    agent.add_pod(PodInfo("ns", "a", annotations={"ipam.cilium.io/ip-pool": "blue"}))
    agent.add_pod(PodInfo("ns", "keep", annotations={"ipam.cilium.io/ip-pool": "blue"}))
    agent.sync(node)
    first = agent.outcome("ns/a")
    assert first is not None and first.masquerade is True
    agent.set_pools([CiliumPodIPPool("blue", V4, annotations={"ipam.cilium.io/skip-masquerade": "true"})])
    agent.sync(node)
    assert agent.outcome("ns/a").masquerade is True, "running pod keeps its decision"  # type: ignore[union-attr]
    agent.remove_pod("ns/a")
    again = agent.add_pod(PodInfo("ns", "a", annotations={"ipam.cilium.io/ip-pool": "blue"}))
    assert again.masquerade is False
