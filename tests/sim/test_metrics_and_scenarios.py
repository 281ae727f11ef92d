"""Metrics turn actor reports into issue 7's figures; scenarios are data with clear errors."""

from __future__ import annotations

import pytest

from reconciler.sim.lower_bound import MUTATING_ACTIONS
from reconciler.sim.metrics import Metrics, percentile
from reconciler.sim.scenario import SCENARIOS, scenario_named


def test_pod_waits_and_all_pods_time() -> None:
    m = Metrics("ours", expected_pods=2)
    m.pod_pending("a", 0.0)
    m.pod_pending("b", 1.0)
    m.pod_got_ip("a", 2.0)
    m.sample(2.0, nodes_ready=1, ips_allocated=10)
    assert m.all_pods_with_ip_at is None and m.pods_waiting == 1
    m.pod_got_ip("b", 4.5)
    m.sample(5.0, nodes_ready=1, ips_allocated=10)
    assert m.all_pods_with_ip_at == 4.5
    assert sorted(m.pod_waits) == [2.0, 3.5]


def test_flapping_counts_releases_within_five_minutes_of_allocation() -> None:
    m = Metrics("ours")
    m.assigned(["10.0.0.1", "10.0.0.2", "10.0.0.3"], 0.0)
    m.released(["10.0.0.1"], 299.0)  # flap
    m.released(["10.0.0.2"], 301.0)  # held long enough
    s = m.summary(MUTATING_ACTIONS)
    assert s["addresses_flapped"] == 1 and s["flapping_share"] == pytest.approx(1 / 3)


def test_throttled_calls_are_not_mutations() -> None:
    m = Metrics("ours")
    m.ec2_call("AssignPrivateIpAddresses", "OK")
    m.ec2_call("AssignPrivateIpAddresses", "RequestLimitExceeded")
    m.ec2_call("DescribeNetworkInterfaces", "OK")
    s = m.summary(MUTATING_ACTIONS)
    assert s["mutating_calls"] == 1 and s["throttled_calls"] == 1
    assert s["throttled_share"] == pytest.approx(1 / 3)


def test_percentile_nearest_rank() -> None:
    assert percentile([5.0, 1.0, 3.0, 2.0, 4.0], 50) == 3.0
    assert percentile([1.0] * 99 + [100.0], 99) == 1.0
    assert percentile([], 99) == 0.0


def test_scenarios_cover_issue_7_and_unknown_names_fail_clearly() -> None:
    wanted = {"demo", "s1-burst", "s2-prefix", "s3-churn", "s4-scale", "s5-multipool", "chaos"}
    assert wanted <= set(SCENARIOS)
    assert SCENARIOS["s2-prefix"].prefix_delegation and SCENARIOS["s3-churn"].release_excess
    assert SCENARIOS["demo"].with_overrides(nodes=10, seed=None).nodes == 10
    with pytest.raises(ValueError, match="unknown scenario 'nope'; choose one of"):
        scenario_named("nope")
