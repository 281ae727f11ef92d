"""ENI-ARCH-5 and ENI-CALC-1..4: the seed's formulas, branch by branch."""

from __future__ import annotations

import pytest

from reconciler.eni.calc import (
    NodeDemand,
    excess_ips,
    ipv4_addresses_in,
    needed_ips,
    node_demand,
    pod_need,
    scan_queue,
    surge_allocate,
    two_phase_order,
    used_ips,
)
from reconciler.model import CiliumNode, IpamSpec, PoolAllocation, PoolRequest


@pytest.mark.parametrize(
    ("requested", "pre", "expected"),
    [(20, 8, 12), (8, 8, 0), (3, 8, 0), (0, 0, 0), (5, 0, 5)],
)
def test_eni_arch_5_used_ips_is_requested_minus_pre_allocate_floored(
    requested: int, pre: int, expected: int
) -> None:
    assert used_ips(requested, pre) == expected


def test_eni_arch_5_available_counts_v4_cidrs_of_default_pool_only() -> None:
    """A /32 counts 1, a /28 counts 16, IPv6 /80s and other pools do not count."""
    node = CiliumNode(
        name="n",
        ipam=IpamSpec(
            pre_allocate=8,
            requested=(PoolRequest("default", 30, 5),),
            allocated=(
                PoolAllocation("default", ("10.0.0.5/32", "10.0.0.6/32", "10.0.1.16/28", "2600::/80")),
                PoolAllocation("other", ("10.9.0.0/24",)),
            ),
        ),
    )
    demand = node_demand(node)
    assert ipv4_addresses_in(["10.0.0.5/32", "10.0.1.16/28", "2600::/80"]) == 17
    assert demand.available == 18
    assert demand.used == 22
    assert demand.wants_ipv6 is True


# ENI-CALC-1: (available, used, pre, min, max) -> needed, one row per branch of the seed's code.
CALC_1 = [
    # pre-allocate term wins (min-allocate unset)
    pytest.param(10, 8, 8, 0, 0, 6, id="pre-allocate-term"),
    # min-allocate term wins at bootstrap
    pytest.param(0, 0, 8, 20, 0, 20, id="min-allocate-term"),
    # both terms negative -> clamped to 0
    pytest.param(40, 10, 8, 20, 0, 0, id="no-deficit-clamped-to-zero"),
    # max-allocate caps the deficit
    pytest.param(10, 10, 8, 0, 12, 2, id="max-allocate-caps"),
    # max-allocate already reached -> 0 even with a big deficit
    pytest.param(12, 12, 8, 0, 12, 0, id="max-allocate-reached"),
    # max-allocate above available+needed -> no effect
    pytest.param(10, 8, 8, 0, 100, 6, id="max-allocate-not-binding"),
    # max-allocate below available (over-provisioned) -> max(negative, 0) = 0
    pytest.param(20, 20, 8, 0, 10, 0, id="max-allocate-below-available"),
    # max-allocate = 0 means no cap
    pytest.param(0, 100, 8, 0, 0, 108, id="max-allocate-zero-no-cap"),
]


@pytest.mark.parametrize(("available", "used", "pre", "min_", "max_", "expected"), CALC_1)
def test_eni_calc_1_needed_ips(
    available: int, used: int, pre: int, min_: int, max_: int, expected: int
) -> None:
    assert needed_ips(available, used, pre, min_, max_) == expected


def test_eni_calc_1_matches_seed_expression_exhaustively() -> None:
    """The function is the seed's expression term by term over a grid (no rounding, floor at 0)."""
    for available in range(0, 30, 3):
        for used in range(0, 30, 4):
            for pre in (0, 4, 8):
                for min_ in (0, 5, 16):
                    for max_ in (0, 10, 25):
                        seed = max(pre - (available - used), min_ - available)
                        if max_ > 0:
                            seed = min(max(max_ - available, 0), seed)
                        assert needed_ips(available, used, pre, min_, max_) == max(seed, 0)


# ENI-CALC-2: (available, used, pre, min, max-above-watermark) -> excess.
CALC_2 = [
    pytest.param(10, 0, 8, 10, 0, 0, id="available-at-upper-bound"),
    pytest.param(5, 0, 8, 10, 2, 0, id="available-below-upper-bound"),
    pytest.param(30, 2, 8, 10, 2, 18, id="used-and-used-plus-pre-within-bound"),
    pytest.param(30, 4, 8, 10, 2, 18, id="second-branch-boundary-used-plus-pre-equals-bound"),
    pytest.param(30, 6, 8, 10, 2, 12, id="used-plus-pre-over-bound-default-branch"),
    pytest.param(30, 20, 8, 10, 2, 0, id="default-branch-clamped-to-zero"),
    pytest.param(20, 5, 8, 0, 0, 15, id="default-branch-no-min-no-watermark"),
]


@pytest.mark.parametrize(("available", "used", "pre", "min_", "maw", "expected"), CALC_2)
def test_eni_calc_2_excess_ips(
    available: int, used: int, pre: int, min_: int, maw: int, expected: int
) -> None:
    assert excess_ips(available, used, pre, min_, maw) == expected


def test_eni_calc_2_matches_seed_switch_exhaustively() -> None:
    for available in range(0, 40, 3):
        for used in range(0, 40, 5):
            for pre in (0, 8):
                for min_ in (0, 10):
                    for maw in (0, 4):
                        upper = min_ + maw
                        if available <= upper:
                            seed = 0
                        elif used <= upper and used + pre <= upper:
                            seed = available - upper
                        else:
                            seed = max(available - used - upper, 0)
                        assert excess_ips(available, used, pre, min_, maw) == seed


@pytest.mark.parametrize(("pending", "needed", "surge"), [(10, 4, 6), (4, 4, 0), (2, 4, 0), (0, 0, 0)])
def test_eni_alloc_2_surge_is_pending_minus_needed_only_when_more_pods_wait(
    pending: int, needed: int, surge: int
) -> None:
    assert surge_allocate(pending, needed) == surge


def _demand(name: str, needed: int, excess: int) -> NodeDemand:
    return NodeDemand(name, 0, 0, needed, excess, False, 0)


def test_eni_calc_4_queue_deficits_largest_first_then_releases() -> None:
    demands = [
        _demand("a", 3, 0),
        _demand("b", 0, 5),
        _demand("c", 9, 0),
        _demand("d", 0, 0),
        _demand("e", 3, 0),
        _demand("f", 0, 9),
    ]
    queue = scan_queue(demands, release_enabled=True)
    assert [(e.node, e.action, e.amount) for e in queue] == [
        ("c", "allocate", 9),
        ("a", "allocate", 3),
        ("e", "allocate", 3),
        ("f", "release", 9),
        ("b", "release", 5),
    ]


def test_eni_calc_3_no_releases_without_release_excess_flag() -> None:
    queue = scan_queue([_demand("a", 0, 5), _demand("b", 1, 0)], release_enabled=False)
    assert [(e.node, e.action) for e in queue] == [("b", "allocate")]


@pytest.mark.parametrize(
    ("used", "pending", "available", "expected"),
    [(25, 25, 0, 25), (25, 25, 14, 11), (25, 25, 28, 0), (0, 25, 0, 25), (0, 0, 0, 0), (3, 0, 10, 0)],
)
def test_eni_calc_4_pod_need_is_what_the_pods_lack_not_the_watermark(
    used: int, pending: int, available: int, expected: int
) -> None:
    """Pending pods may not be in usedIPs yet (agent not synced); in-flight goes into `available`."""
    assert pod_need(used, pending, available) == expected


def test_eni_calc_4_two_phases_pod_needs_first_then_watermark_largest_first_each() -> None:
    amounts = {"wm-big": 30, "wm-small": 2, "pods-small": 3, "pods-big": 10}
    needs = {"pods-small": 1, "pods-big": 4, "wm-big": 0}
    assert two_phase_order(amounts, needs) == ["pods-big", "pods-small", "wm-big", "wm-small"]
