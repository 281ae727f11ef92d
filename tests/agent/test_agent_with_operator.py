"""Agent + MultiPoolOperator round trips in multi-pool mode (MP-CRD-1, MP-PRE-1, MP-SEL-3, release)."""

from __future__ import annotations

import ipaddress
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.agent.agent import Agent, AgentConfig, PodStatus
from reconciler.agent.pods import PodInfo
from reconciler.model import CiliumNode
from reconciler.multipool.operator import MultiPoolOperator
from reconciler.multipool.pools import CiliumPodIPPool, PoolFamily
from reconciler.multipool.selectors import LabelSelector

DEFAULT = CiliumPodIPPool("default", PoolFamily(("10.0.0.0/16",), 26), PoolFamily(("fd00::/104",), 120))
BLUE = CiliumPodIPPool("blue", PoolFamily(("10.1.0.0/16",), 28), pod_selector=LabelSelector({"app": "blue"}))


class Loop:
    """Agent and operator exchanging one CiliumNode, each write a new resourceVersion."""

    def __init__(self, agent: Agent, op: MultiPoolOperator) -> None:
        self.agent, self.op, self.rv = agent, op, 0
        self.node = CiliumNode(agent.node_name)

    def _bump(self, **kw: object) -> None:
        self.rv += 1
        self.node = replace(self.node, resource_version=str(self.rv), **kw)  # type: ignore[arg-type]

    def round(self) -> None:
        self._bump(ipam=self.agent.sync(self.node))
        res = self.op.reconcile_node(self.node)
        assert res.error == "", res.error
        if res.changed:
            self._bump(ipam=replace(self.node.ipam, allocated=res.allocated))


def test_pending_pods_get_addresses_after_the_operator_adds_blocks_and_spare_blocks_go_back() -> None:
    op = MultiPoolOperator()
    op.restore([DEFAULT, BLUE], [])
    agent = Agent("n1", AgentConfig(enable_ipv6=True), pools=[DEFAULT, BLUE])
    loop = Loop(agent, op)
    outs = [agent.add_pod(PodInfo("ns", f"p{i}")) for i in range(70)]
    outs.append(agent.add_pod(PodInfo("ns", "b", labels={"app": "blue"})))
    assert all(o.status is PodStatus.PENDING for o in outs)
    for _ in range(3):
        loop.round()
    done = agent.take_completed()
    assert len(done) == 71
    assert all(set(o.ips) == {4, 6} for o in done if o.pools[4] == "default")
    blue = next(o for o in done if o.key == "ns/b")
    assert blue.ips[4].startswith("10.1.0.")
    req = {r.pool: r for r in loop.node.ipam.requested}
    assert (req["default"].ipv4_addrs, req["default"].ipv6_addrs) == (80, 80), "roundUp(70 + 8, 8)"
    assert req["blue"].ipv4_addrs == 1, "blue is not in the pre-allocation map"
    assert len(loop.node.ipam.cidrs_of("default")) == 2 + 1, "two /26 (124 usable) + one /120"
    for i in range(70):
        agent.remove_pod(f"ns/p{i}")
    loop.round()
    loop.round()
    assert loop.node.ipam.cidrs_of("default") == ("10.0.0.0/26", "fd00::/120"), "spare /26 released"
    assert op.blocks_of("n1") == [
        ("blue", "10.1.0.0/28"),
        ("default", "10.0.0.0/26"),
        ("default", "fd00::/120"),
    ]


def test_mp_sel_3_require_pool_match_blocks_until_a_pool_matches() -> None:
    op = MultiPoolOperator()
    op.restore([DEFAULT], [])
    agent = Agent("n1", pools=[DEFAULT])
    loop = Loop(agent, op)
    pod = PodInfo(
        "ns", "x", labels={"app": "blue"}, annotations={"ipam.cilium.io/require-pool-match": "true"}
    )
    out = agent.add_pod(pod)
    assert out.status is PodStatus.BLOCKED and "require-pool-match" in out.reason
    loop.round()
    assert agent.outcome("ns/x").status is PodStatus.BLOCKED  # type: ignore[union-attr]
    op.upsert_pool(BLUE)
    agent.set_pools([DEFAULT, BLUE])
    loop.round()
    loop.round()
    got = agent.outcome("ns/x")
    assert got is not None and got.status is PodStatus.ALLOCATED and got.pools == {4: "blue"}


def test_mp_pool_2_orphaned_block_keeps_its_pods_new_pods_use_the_new_cidr_and_nothing_oscillates() -> None:
    """The documented migration: pool CIDR 10.10/16 -> 10.20/16 while a pod uses 10.10.0.x."""
    old = CiliumPodIPPool("default", PoolFamily(("10.10.0.0/16",), 24))
    new = CiliumPodIPPool("default", PoolFamily(("10.20.0.0/16",), 24))
    op = MultiPoolOperator()
    op.restore([old], [])
    agent = Agent("kind-worker", pools=[old])
    loop = Loop(agent, op)
    agent.add_pod(PodInfo("default", "nginx-old"))
    loop.round()
    loop.round()
    old_ip = agent.outcome("default/nginx-old").ips[4]  # type: ignore[union-attr]
    assert old_ip.startswith("10.10.0.")
    sync = op.set_pools([new])
    assert [(w.cidr, w.node) for w in sync.warnings] == [("10.10.0.0/24", "kind-worker")]
    agent.set_pools([new])
    agent.add_pod(PodInfo("default", "nginx-new"))
    history = []
    for _ in range(4):
        loop.round()
        history.append(loop.node.ipam.allocated)
    assert history[1] == history[2] == history[3], "stable: no release/re-allocate loop"
    assert set(history[-1][0].cidrs) == {"10.10.0.0/24", "10.20.0.0/24"}
    assert agent.outcome("default/nginx-old").ips[4] == old_ip  # type: ignore[union-attr]
    assert agent.outcome("default/nginx-new").ips[4].startswith("10.20.0.")  # type: ignore[union-attr]
    agent.remove_pod("default/nginx-old")
    loop.round()
    loop.round()
    assert loop.node.ipam.cidrs_of("default") == ("10.20.0.0/24",), "the orphan leaves with its last pod"
    assert op.orphans() == []


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 40), st.booleans()), min_size=1, max_size=60))
def test_cluster_invariants_under_churn(events: list[tuple[int, int, bool]]) -> None:
    """Three agents and one operator under random pod churn: an address belongs to one pod cluster-wide,
    lies in a CIDR its node holds, and no CIDR in use is ever dropped from the node's `allocated`."""
    pool = CiliumPodIPPool("default", PoolFamily(("10.0.0.0/22",), 28), PoolFamily(("fd00::/112",), 124))
    op = MultiPoolOperator()
    op.restore([pool], [])
    loops = [Loop(Agent(f"n{i}", AgentConfig(enable_ipv6=True), pools=[pool]), op) for i in range(3)]
    for idx, pod_no, remove in events:
        loop = loops[idx]
        key = f"ns/p{pod_no}"
        if remove:
            loop.agent.remove_pod(key)
        elif all(lp.agent.outcome(key) is None for lp in loops):
            loop.agent.add_pod(PodInfo("ns", f"p{pod_no}"))
        loop.round()
        owners: dict[str, str] = {}
        for lp in loops:
            nets = [ipaddress.ip_network(c) for c in lp.node.ipam.cidrs_of("default")]
            for out in lp.agent.pods():
                for ip in out.ips.values():
                    assert ip not in owners, f"{ip} held by {owners.get(ip)} and {out.key}"
                    owners[ip] = out.key
                    assert any(ipaddress.ip_address(ip) in n for n in nets), (
                        f"{ip} outside {lp.node.name}'s CIDRs"
                    )
