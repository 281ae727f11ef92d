"""The lower-bound calculator is the benchmarks' yardstick: every figure here is worked out by hand.

m5.xlarge: 4 ENIs x 15 IPv4 slots (one is the primary), so 14 secondaries per ENI, 224 with /28s.
"""

from __future__ import annotations

import pytest

from reconciler.ec2.api import InstanceTypeLimits
from reconciler.sim.lower_bound import (
    ASSIGN,
    ATTACH,
    AWS_BUCKETS,
    CREATE,
    MODIFY,
    Bucket,
    NodeCalls,
    lower_bound,
    min_time,
    node_calls,
)

M5_XLARGE = InstanceTypeLimits("m5.xlarge", 4, 15, 15, "nitro")
C4_XEN = InstanceTypeLimits("c4.2xlarge", 4, 15, 15, "xen")


@pytest.mark.parametrize(
    ("demand", "assign", "enis", "capacity"),
    [
        (0, 0, 0, 0),
        (1, 1, 0, 14),
        (14, 1, 0, 14),  # eth0 alone, one AssignPrivateIpAddresses (ENI-ALLOC-2)
        (15, 1, 1, 28),  # one more ENI: create + attach + modify (ENI-CREATE-3/4, ENI-PARAM-8)
        (28, 1, 1, 28),  # eth0 + 1 ENI beats 2 new ENIs (4 calls vs 6)
        (29, 1, 2, 42),
        (33, 1, 2, 42),  # S1 per node: 25 pods + pre-allocate 8
        (43, 1, 3, 56),
        (56, 1, 3, 56),  # every slot of every ENI
    ],
)
def test_eni_mode_calls_per_node_ENI_ALLOC_2_ENI_CREATE_3(
    demand: int, assign: int, enis: int, capacity: int
) -> None:
    got = node_calls(demand, M5_XLARGE)
    assert got == NodeCalls(assign=assign, create=enis, attach=enis, modify=enis, capacity=capacity)
    assert got.total == assign + 3 * enis


def test_demand_beyond_instance_limits_is_reported_not_planned_EC2_SIM_1() -> None:
    got = node_calls(60, M5_XLARGE)
    assert got.unsatisfiable == 4 and got.capacity == 56 and got.total == 10


def test_prefix_delegation_fills_eth0_with_one_call_ENI_ALLOC_4() -> None:
    assert node_calls(33, M5_XLARGE, prefix_delegation=True) == NodeCalls(assign=1, capacity=224)
    assert node_calls(225, M5_XLARGE, prefix_delegation=True).total == 4


def test_prefix_delegation_needs_nitro_ENI_ALLOC_4() -> None:
    assert node_calls(33, C4_XEN, prefix_delegation=True).create == 2


def test_first_interface_index_one_skips_eth0_ENI_PARAM_2() -> None:
    assert node_calls(10, M5_XLARGE, first_interface_index=1) == NodeCalls(
        create=1, attach=1, modify=1, capacity=14
    )
    assert node_calls(43, M5_XLARGE, first_interface_index=1).unsatisfiable == 1


def test_no_modify_without_delete_on_termination_ENI_PARAM_8() -> None:
    assert node_calls(15, M5_XLARGE, delete_on_termination=False).total == 3


def test_bucket_starts_full_then_refills_EC2_SIM_5() -> None:
    b = Bucket(100, 5)
    assert b.issue_time(1) == 0.0 and b.issue_time(100) == 0.0
    assert b.issue_time(101) == pytest.approx(0.2)
    assert b.issue_time(600) == pytest.approx(100.0)


def test_assign_only_time_is_bucket_plus_latency() -> None:
    plans = [NodeCalls(assign=1)] * 600
    assert min_time(plans, latency={ASSIGN: 0.5}) == pytest.approx(100.5)


def test_attach_waits_for_its_create_and_its_own_bucket() -> None:
    plans = [NodeCalls(create=1, attach=1)] * 60
    # attach #60 may start at (60-50)/5 = 2 s; create #60 returned at 0 + 1 s -> 2 + 2 = 4 s.
    assert min_time(plans, latency={CREATE: 1.0, ATTACH: 2.0}) == pytest.approx(4.0)
    slow_create = {**AWS_BUCKETS, CREATE: Bucket(10, 1)}
    # create #20 starts at 10 s, returns at 11 s; attach bucket is not the limit -> 11.5 s.
    plans = [NodeCalls(create=1, attach=1)] * 20
    assert min_time(plans, buckets=slow_create, latency={CREATE: 1.0, ATTACH: 0.5}) == pytest.approx(11.5)


def test_s1_burst_bound_counts_full_demand_and_times_pods_only() -> None:
    lb = lower_bound([33] * 1000, M5_XLARGE, pod_demands=[25] * 1000)
    assert dict(lb.calls_by_action) == {ASSIGN: 1000, CREATE: 2000, ATTACH: 2000, MODIFY: 2000}
    assert lb.mutating_calls == 7000
    # pods need eth0 + 1 ENI each: 1000 attaches, the 1000th at (1000-50)/5 = 190 s.
    assert lb.seconds == pytest.approx(190.0)


def test_s2_prefix_bound_is_one_assign_per_node() -> None:
    lb = lower_bound([33] * 1000, M5_XLARGE, prefix_delegation=True)
    assert dict(lb.calls_by_action) == {ASSIGN: 1000}
    assert lb.seconds == pytest.approx((1000 - 100) / 5)


def test_bound_uses_the_same_buckets_as_the_simulator_EC2_SIM_5() -> None:
    from reconciler.ec2.sim.throttle import bucket_size

    for action, bucket in AWS_BUCKETS.items():
        assert bucket_size(action) == (bucket.capacity, bucket.refill), action
