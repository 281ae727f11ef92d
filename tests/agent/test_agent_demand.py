"""MP-PRE-1 (roundUp per pool and family) and ENI-ARCH-5 (linear) demand."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.agent.agent import Agent, AgentConfig
from reconciler.agent.demand import DemandConfigError, eni_needed, multi_pool_needed, parse_pre_allocation
from reconciler.agent.pods import PodInfo
from reconciler.model import CiliumNode, PoolRequest
from reconciler.multipool.pools import CiliumPodIPPool, PoolFamily


@pytest.mark.parametrize(
    ("in_use", "pending", "pre", "needed"),
    [
        (0, 0, 16, 16),
        (1, 0, 16, 32),
        (15, 0, 16, 32),
        (16, 0, 16, 32),
        (17, 0, 16, 48),
        (3, 2, 8, 16),
        (0, 0, 8, 8),
        (5, 3, 0, 8),
        (0, 0, 0, 0),
    ],
)
def test_mp_pre_1_table(in_use: int, pending: int, pre: int, needed: int) -> None:
    assert multi_pool_needed(in_use, pending, pre) == needed


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 500), st.integers(0, 200), st.integers(0, 64))
def test_mp_pre_1_matches_brute_force(in_use: int, pending: int, pre: int) -> None:
    """Reference: the smallest multiple of pre that is >= inUse + pending + pre (no rounding for pre 0)."""
    total = in_use + pending + pre
    expected = total if pre == 0 else next(k * pre for k in range(0, total + 2) if k * pre >= total)
    got = multi_pool_needed(in_use, pending, pre)
    assert got == expected
    assert got >= in_use + pending + pre, "may exceed preAlloc but never falls short"


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 500), st.integers(0, 200), st.integers(0, 64))
def test_eni_arch_5_linear(in_use: int, pending: int, pre: int) -> None:
    assert eni_needed(in_use, pending, pre) == in_use + pending + pre


def test_pre_allocation_map_parsing() -> None:
    assert parse_pre_allocation(None) == {"default": 8}
    assert parse_pre_allocation("default=16, blue=4") == {"default": 16, "blue": 4}
    with pytest.raises(DemandConfigError, match="is not pool=count"):
        parse_pre_allocation("default")
    with pytest.raises(DemandConfigError, match="whole number"):
        parse_pre_allocation("default=-1")


@pytest.mark.parametrize("count", ["\u00b2", "\u2460"])
def test_mp_pre_1_digit_like_signs_are_a_config_error_not_a_traceback(count: str) -> None:
    """MP-PRE-1: '²' and '①' pass str.isdigit() but int() rejects them; the user gets the
    one-sentence DemandConfigError, not a ValueError traceback."""
    with pytest.raises(DemandConfigError, match="whole number"):
        parse_pre_allocation(f"default={count}")


def test_agent_requests_per_pool_and_family_and_unlisted_pools_preallocate_zero() -> None:
    """MP-PRE-1: default pool pre-allocates 8 per family; a pool not in the map asks only for its use."""
    pools = [
        CiliumPodIPPool(n, PoolFamily(("10.0.0.0/16",), 24), PoolFamily(("fd00::/104",), 120))
        for n in ("default", "blue")
    ]
    agent = Agent("n1", AgentConfig(enable_ipv6=True, pre_allocation={"default": 8}), pools=pools)
    agent.add_pod(PodInfo("ns", "a", annotations={"ipam.cilium.io/ip-pool": "blue"}))
    ipam = agent.sync(CiliumNode("n1"))
    assert ipam.requested == (PoolRequest("blue", 1, 1), PoolRequest("default", 8, 8))


def test_eni_requested_uses_spec_pre_allocate() -> None:
    agent = Agent("n1", AgentConfig(mode="eni"))
    for i in range(3):
        agent.add_pod(PodInfo("ns", f"p{i}"))
    node = CiliumNode.from_obj({"metadata": {"name": "n1"}, "spec": {"ipam": {"pre-allocate": 5}}})
    assert agent.sync(node).requested == (PoolRequest("default", 8, 0),), "0 in use + 3 pending + 5"
