"""ENI-REL-1 with hysteresis: a wholly unused CIDR goes only after a minimum idle time and while the
node keeps a spare margin; ENI-REL-1's own condition (free after removal >= demand - in-use) holds for
every release, and a released CIDR is never re-added while status.eni.enis still lists it."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.agent.agent import ENI, Agent, AgentConfig, AgentConfigError
from reconciler.agent.localpool import LocalPool
from reconciler.agent.pods import PodInfo
from reconciler.agent.release import IMMEDIATE, CidrUse, ReleasePolicy, releasable
from reconciler.cidr import parse_cidr
from reconciler.clock import SimClock
from reconciler.model import CiliumNode, IpamSpec, PoolAllocation


def eni_node(addresses: list[str], pre: int = 2, rv: str = "1") -> CiliumNode:
    eni = {"id": "eni-0", "number": 0, "ip": "10.0.0.10", "addresses": addresses, "prefixes": []}
    return CiliumNode.from_obj(
        {
            "metadata": {"name": "n1", "resourceVersion": rv},
            "spec": {"ipam": {"pre-allocate": pre}},
            "status": {"eni": {"enis": {"eni-0": eni}}},
        }
    )


SIX = [f"10.0.0.{i}" for i in range(11, 17)]  # six /32s


def v4_cidrs(agent: Agent, node: CiliumNode) -> list[str]:
    return [c for a in agent.sync(node).allocated for c in a.cidrs]


def test_eni_rel_1_nothing_released_before_the_idle_time_then_released_when_spare() -> None:
    clock = SimClock()
    agent = Agent("n1", AgentConfig(mode=ENI, release=ReleasePolicy(300.0, 0)), clock=clock)
    n = eni_node(SIX, pre=2)
    agent.add_pod(PodInfo("ns", "a"))
    for _ in range(299):
        assert len(v4_cidrs(agent, n)) == 6, f"idle only {clock.now()} s: nothing released yet"
        clock.advance(1.0)
    assert len(v4_cidrs(agent, n)) == 6
    clock.advance(1.0)
    # 1 in use + 2 pre-allocate -> 2 free needed: three of the five free /32s go, last first.
    assert v4_cidrs(agent, n) == ["10.0.0.11/32", "10.0.0.12/32", "10.0.0.13/32"]


def test_eni_rel_1_spare_margin_keeps_one_more_cidr_free() -> None:
    clock = SimClock()
    agent = Agent("n1", AgentConfig(mode=ENI, release=ReleasePolicy(300.0, 1)), clock=clock)
    n = eni_node(SIX, pre=2)
    agent.add_pod(PodInfo("ns", "a"))
    agent.sync(n)
    clock.advance(300.0)
    assert v4_cidrs(agent, n) == [f"{ip}/32" for ip in SIX[:4]], "2 needed + one /32 of margin stay free"


def test_eni_rel_1_an_address_taken_restarts_the_idle_time() -> None:
    clock = SimClock()
    agent = Agent("n1", AgentConfig(mode=ENI, release=ReleasePolicy(300.0, 0)), clock=clock)
    n = eni_node(SIX[:3], pre=0)
    agent.add_pod(PodInfo("ns", "a"))
    agent.sync(n)
    clock.advance(200.0)
    for name in ("b", "c"):
        agent.add_pod(PodInfo("ns", name))  # .12 and .13 now in use
    agent.remove_pod("ns/b")
    agent.remove_pod("ns/c")  # idle again from t=200
    clock.advance(200.0)
    assert len(v4_cidrs(agent, n)) == 3, "idle 200 s since the last pod left, not 400"
    clock.advance(100.0)
    assert v4_cidrs(agent, n) == ["10.0.0.11/32"]


def test_eni_rel_1_never_re_added_while_listed_even_when_pods_wait() -> None:
    clock = SimClock()
    agent = Agent("n1", AgentConfig(mode=ENI, release=ReleasePolicy(60.0, 0)), clock=clock)
    n = eni_node(SIX, pre=0)
    agent.sync(n)
    clock.advance(60.0)
    assert v4_cidrs(agent, n) == [], "no demand: every idle /32 goes"
    for i in range(3):
        agent.add_pod(PodInfo("ns", f"p{i}"))
    for step in range(5):
        clock.advance(600.0)
        assert v4_cidrs(agent, replace(n, resource_version=str(step + 2))) == [], "still listed"
    fewer = eni_node(SIX[:2], pre=0, rv="9")
    assert v4_cidrs(agent, fewer) == [], "still listed: stays released"
    back = eni_node(SIX[:2] + ["10.0.0.99"], pre=0, rv="10")
    assert v4_cidrs(agent, back) == ["10.0.0.99/32"], "a newly offered address is adopted at once"


def test_multi_pool_blocks_still_go_at_once() -> None:
    """Hysteresis is for ENI mode (ENI-REL-2 holds released addresses on an ENI slot)."""
    agent = Agent("n1", AgentConfig(pre_allocation={"default": 0}), clock=SimClock())
    ipam = IpamSpec(allocated=(PoolAllocation("default", ("10.0.0.0/28",)),))
    node = replace(CiliumNode("n1"), ipam=ipam)
    assert agent.sync(node).allocated == ()


@pytest.mark.parametrize(
    ("policy", "fragment"),
    [
        (ReleasePolicy(-1.0, 0), "min idle time -1.0"),
        (ReleasePolicy(float("nan"), 0), "min idle time nan"),
        (ReleasePolicy(300.0, -1), "spare CIDRs -1"),
    ],
)
def test_bad_release_policy_is_one_sentence(policy: ReleasePolicy, fragment: str) -> None:
    with pytest.raises(AgentConfigError, match=fragment):
        Agent("n1", AgentConfig(mode=ENI, release=policy))


# ------------------------------------------------------------------ the pure decision


@st.composite
def cidr_uses(draw: st.DrawFn) -> tuple[list[CidrUse], int, float, ReleasePolicy]:
    count = draw(st.integers(0, 8))
    size = draw(st.sampled_from([1, 16]))
    uses: list[CidrUse] = []
    for i in range(count):
        used = draw(st.integers(0, size)) if draw(st.booleans()) else 0
        idle = None if used else draw(st.floats(0.0, 1000.0))
        removed = draw(st.booleans()) if used else False
        net = parse_cidr(f"10.{i}.0.0/{32 if size == 1 else 28}")
        uses.append(CidrUse(net, used, size - used, idle, removed))
    free_needed = draw(st.integers(0, 40))
    now = draw(st.floats(0.0, 2000.0))
    policy = ReleasePolicy(draw(st.floats(0.0, 600.0)), draw(st.integers(0, 2)))
    return uses, free_needed, now, policy


@settings(max_examples=150, deadline=None)
@given(cidr_uses())
def test_eni_rel_1_every_release_is_idle_unused_and_leaves_enough_free(
    case: tuple[list[CidrUse], int, float, ReleasePolicy],
) -> None:
    uses, free_needed, now, policy = case
    going = releasable(uses, free_needed, now, policy)
    by_net = {u.net: u for u in uses}
    for net in going:
        u = by_net[net]
        assert u.used == 0 and not u.removed
        assert u.idle_since is not None and now - u.idle_since >= policy.min_idle_s
    left = sum(u.free for u in uses if not u.removed and u.net not in going)
    if going:
        size = max(u.size for u in uses if not u.removed)
        assert left >= free_needed + policy.spare_cidrs * size, "ENI-REL-1 condition plus the margin"
    bare = releasable(uses, free_needed, now, IMMEDIATE)
    assert sum(by_net[n].free for n in going) <= sum(by_net[n].free for n in bare), "only stricter"


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=12), st.integers(0, 6), st.floats(0.0, 400.0))
def test_eni_rel_1_local_pool_releases_nothing_younger_than_the_idle_time(
    pods_per_step: list[int], free_needed: int, step: float
) -> None:
    clock = SimClock()
    lp = LocalPool(allow_first=True, allow_last=True, clock=clock)
    lp.update([parse_cidr(f"10.0.0.{i}/32") for i in range(8)])
    policy = ReleasePolicy(300.0, 0)
    last_busy: dict[str, float] = {}
    held: list[str] = []
    for wanted in pods_per_step:
        while len(held) > wanted:
            ip = held.pop()
            lp.release(ip)
            last_busy[f"{ip}/32"] = clock.now()
        while len(held) < wanted and (ip := lp.allocate("pod")) is not None:
            held.append(ip)
            last_busy[f"{ip}/32"] = clock.now()
        for cidr in lp.release_excess(free_needed, policy):
            assert clock.now() - last_busy.get(cidr, 0.0) >= 300.0, f"{cidr} went before 300 s idle"
            assert lp.free >= free_needed
        clock.advance(step)
