"""The EniOperator facade: per-node isolation, queue pacing, dry-run, concurrency, counters, logs."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from reconciler.eni.config import EniOperatorConfig
from reconciler.eni.log import format_event
from reconciler.eni.operator import EniOperator
from reconciler.eni.runner import SequentialRunner, ThreadPoolRunner

from .helpers import AZ, SimpleAgent, node_for, sim_world


def _op(instances: int = 2, **cfg: Any):  # type: ignore[no-untyped-def]
    clock, sim, world = sim_world(instances=instances, throttling=cfg.pop("throttling", True))
    op = EniOperator(sim, EniOperatorConfig(**cfg), clock, runner=cfg.pop("runner", None))
    op.refresh(force=True)
    return clock, sim, world, op


def test_one_nodes_error_never_stalls_the_others() -> None:
    clock, sim, world, op = _op(instances=3)
    a, b, c = world.instance_ids
    op.on_node_changed(node_for("bad-type", a, world, instance_type="m5.nonexistent", requested_v4=8))
    op.on_node_changed(node_for("no-id", "", world, requested_v4=8))
    op.on_node_changed(node_for("good", c, world, requested_v4=8, first_interface_index=1))
    results = op.run_allocations()
    assert results["good"].allocated_ips == 8 and results["good"].operator_error == ""
    assert results["bad-type"].operator_error == (
        "node bad-type: Instance type 'm5.nonexistent' is not known to EC2; check spec.eni.instance-type "
        "of the CiliumNode (e.g. m5.large)."
    )
    assert results["no-id"].operator_error.startswith("node no-id: spec.instance-id is empty")
    assert b  # the second instance is unused


def test_transient_ec2_error_is_a_sentence_and_the_node_is_retried() -> None:
    clock, sim, world, op = _op(instances=2)
    a, b = world.instance_ids
    sim.faults.script("RequestLimitExceeded", action="CreateNetworkInterface")
    op.on_node_changed(node_for("a", a, world, requested_v4=8, first_interface_index=1))
    op.on_node_changed(node_for("b", b, world, requested_v4=8, first_interface_index=1))
    first = op.run_allocations()
    failed = [n for n, r in first.items() if r.operator_error]
    assert len(failed) == 1
    assert "failed with RequestLimitExceeded" in first[failed[0]].operator_error
    assert op.queued() == failed
    clock.advance(1)
    assert op.run_allocations()[failed[0]].actions == []  # waits for the refresh the failure triggered
    assert op.refresh() is True
    clock.advance(1)
    second = op.run_allocations()
    assert second[failed[0]].operator_error == "" and second[failed[0]].allocated_ips == 8


def test_eni_calc_4_allocation_queue_runs_at_most_once_per_second_largest_first() -> None:
    clock, sim, world, op = _op(instances=2)
    a, b = world.instance_ids
    op.on_node_changed(node_for("small", a, world, requested_v4=9, first_interface_index=1))
    op.on_node_changed(node_for("big", b, world, requested_v4=20, first_interface_index=1))
    assert op.queued() == ["big", "small"]
    assert len(op.run_allocations()) == 2
    op.on_node_changed(node_for("small", a, world, requested_v4=40, first_interface_index=1))
    assert op.run_allocations() == {}  # within the same second
    clock.advance(0.5)
    assert op.run_allocations() == {}
    clock.advance(0.5)
    assert "small" in op.run_allocations()


def test_eni_calc_3_node_change_checks_deficit_only_and_scan_orders_queue() -> None:
    clock, sim, world, op = _op(instances=2, aws_release_excess_ips=True)
    a, b = world.instance_ids
    satisfied = node_for(
        "satisfied", a, world, requested_v4=8, allocated=tuple(f"10.0.0.{i}/32" for i in range(20))
    )
    op.on_node_changed(satisfied)
    assert op.queued() == []  # excess is not acted upon on a node change
    short = node_for("short", b, world, requested_v4=12, first_interface_index=1)
    plan = op.resync([satisfied, short])
    assert [(e.node, e.action) for e in plan.queue] == [("short", "allocate"), ("satisfied", "release")]
    assert plan.demands["short"].needed == 12 and plan.nodes_in_deficit == 1


def test_dry_run_plans_and_logs_every_mutation_and_performs_none(caplog: pytest.LogCaptureFixture) -> None:
    clock, sim, world, op = _op(instances=1, dry_run=True, aws_release_excess_ips=True)
    node = node_for(
        "n", world.instance_ids[0], world, requested_v4=8, first_interface_index=1, requested_v6=1
    )
    caplog.set_level(logging.INFO, logger="reconciler.eni")
    op.on_node_changed(node)
    result = op.run_allocations()["n"]
    assert result.actions and all(a.startswith("dry-run ") for a in result.actions)
    assert "create_eni" in result.actions[0] and "subnet=" in result.actions[0]
    assert not [c for c in sim.calls if not c.action.startswith("Describe")]
    lines = [r.getMessage() for r in caplog.records if "event=dry_run" in r.getMessage()]
    assert lines and "action=create_eni" in lines[0] and "reason=" in lines[0] and "node=n" in lines[0]
    assert op.queued() == []  # dry-run does not spin on the same node


class _CountingRunner:
    """Wraps the thread pool and records the peak number of nodes in flight."""

    def __init__(self, workers: int) -> None:
        self.inner = ThreadPoolRunner(workers)
        self.active = 0
        self.peak = 0
        self.lock = threading.Lock()

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any]) -> list[Any]:
        def wrapped(item: Any) -> Any:
            with self.lock:
                self.active += 1
                self.peak = max(self.peak, self.active)
            try:
                return fn(item)
            finally:
                with self.lock:
                    self.active -= 1

        return self.inner.map(wrapped, items)


def test_parallel_alloc_workers_bounds_concurrency_and_results_match_sequential() -> None:
    outcomes = []
    for runner in (SequentialRunner(), _CountingRunner(3)):
        clock, sim, world = sim_world(instances=12, throttling=False, seed=3)
        op = EniOperator(sim, EniOperatorConfig(parallel_alloc_workers=3), clock, runner=runner)
        op.refresh(force=True)
        for i, iid in enumerate(world.instance_ids):
            op.on_node_changed(node_for(f"n{i}", iid, world, requested_v4=8 + i, first_interface_index=1))
        results = op.run_allocations()
        outcomes.append({n: r.allocated_ips for n, r in results.items()})
        addresses = [ip for e in sim.enis.values() for ip in e.secondary_ips]
        assert len(addresses) == len(set(addresses))
        if isinstance(runner, _CountingRunner):
            assert 1 <= runner.peak <= 3
            runner.inner.close()
    assert outcomes[0] == outcomes[1]


def test_eni_met_1_counters_per_subnet() -> None:
    clock, sim, world, op = _op(instances=1, aws_enable_prefix_delegation=False)
    node = node_for("n", world.instance_ids[0], world, requested_v4=8, first_interface_index=0)
    op.on_node_changed(node)
    op.run_allocations()
    subnet = world.node_subnet(AZ)
    assert op.counters.allocation_ops[subnet] == 1
    assert op.counters.interface_creation_ops[subnet] == 0
    clock.advance(1)
    op.on_node_changed(
        node_for(
            "n",
            world.instance_ids[0],
            world,
            requested_v4=30,
            first_interface_index=0,
            allocated=tuple(f"{ip}/32" for e in sim.enis.values() for ip in e.secondary_ips),
        )
    )
    op.run_allocations()
    assert op.counters.interface_creation_ops[subnet] == 2
    timings = op.counters.drain_timings()
    assert {t.kind for t in timings} == {"ip", "interface"} and all(t.status == "success" for t in timings)
    assert op.counters.drain_timings() == []


def test_reconcile_does_everything_and_the_agent_converges() -> None:
    clock, sim, world, op = _op(instances=2)
    agents = [
        SimpleAgent(node_for(f"n{i}", iid, world, first_interface_index=1))
        for i, iid in enumerate(world.instance_ids)
    ]
    for agent in agents:
        agent.pods = 10
    for tick in range(10):
        clock.advance(1)
        nodes = [a.step() for a in agents]
        results = op.reconcile(nodes, {a.node.name: a.pending for a in agents}, scan=tick % 5 == 0)
        for agent in agents:
            agent.apply(results.get(agent.node.name))
    for agent in agents:
        agent.step()
        assert agent.pending == 0 and len(agent.pod_ips) == 10
        assert op.resync([a.node for a in agents]).demands[agent.node.name].needed == 0


def test_structured_log_lines_are_key_value_with_stable_order() -> None:
    line = format_event(
        "create_eni", {"reason": "no room left", "subnet": "s-1", "node": "n", "count": 3, "eni": None}
    )
    assert line == 'event=create_eni node=n subnet=s-1 reason="no room left" count=3'


def test_eni_cfg_2_cluster_name_from_own_instance_tag_names_gc_and_creation_tags() -> None:
    from reconciler.eni.operator import own_instance_tags

    clock, sim, world, _ = _op(instances=2)
    operator_host, node_host = world.instance_ids
    sim.create_tags([operator_host], {"aws:eks:cluster-name": "eks-blue"})
    tags = own_instance_tags(sim, operator_host)
    assert tags["aws:eks:cluster-name"] == "eks-blue"
    op = EniOperator(sim, EniOperatorConfig(), clock, own_instance_tags=tags)
    op.refresh(force=True)
    assert op.cluster_name == "eks-blue"
    op.on_node_changed(node_for("n", node_host, world, requested_v4=8, first_interface_index=1))
    op.run_allocations()
    created = [e for e in sim.enis.values() if e.description.startswith("Cilium-CNI")]
    assert created and created[0].tags["io.cilium/cluster-name"] == "eks-blue"
    assert own_instance_tags(sim, "") == {}
    named = EniOperator(sim, EniOperatorConfig(cluster_name="flag"), clock, own_instance_tags=tags)
    assert named.cluster_name == "flag"


def test_eni_met_1_gauges_total_deficit_and_capacity() -> None:
    clock, sim, world, op = _op(instances=2)
    a, b = world.instance_ids
    op.on_node_changed(node_for("fits", a, world, requested_v4=8, first_interface_index=1))
    op.on_node_changed(node_for("huge", b, world, requested_v4=100, first_interface_index=1))
    before = op.gauges()
    assert (before.nodes_total, before.nodes_in_deficit, before.nodes_at_capacity) == (2, 2, 0)
    assert before.per_node["huge"].needed == 100 and before.per_node["huge"].used == 92
    op.run_allocations()
    after = op.gauges()
    assert after.nodes_at_capacity == 1
    op.on_node_deleted("huge")
    assert op.gauges().nodes_at_capacity == 0 and op.gauges().nodes_total == 1


def test_eni_arch_6_subnets_and_security_groups_are_per_node() -> None:
    clock, sim, world = sim_world(instances=2, subnets=2)
    op = EniOperator(sim, EniOperatorConfig(), clock)
    extra_sg = sim.add_security_group(world.vpc_id, "pods-b")
    op.refresh(force=True)
    a, b = world.instance_ids
    s1, s2 = world.subnet_ids[AZ]
    op.on_node_changed(node_for("a", a, world, requested_v4=8, first_interface_index=1, subnet_ids=(s1,)))
    op.on_node_changed(
        node_for(
            "b",
            b,
            world,
            requested_v4=8,
            first_interface_index=1,
            subnet_ids=(s2,),
            security_groups=(extra_sg,),
        )
    )
    op.run_allocations()
    ours = {
        e.attachment.instance_id: e
        for e in sim.enis.values()
        if e.description.startswith("Cilium-CNI") and e.attachment
    }
    assert ours[a].subnet_id == s1 and ours[a].security_group_ids == tuple(world.security_group_ids[:1])
    assert ours[b].subnet_id == s2 and ours[b].security_group_ids == (extra_sg,)


def test_eni_param_1_min_allocate_at_bootstrap_without_demand() -> None:
    clock, sim, world, op = _op(instances=1)
    node = node_for("n", world.instance_ids[0], world, min_allocate=12, first_interface_index=1)
    op.resync([node])
    result = op.run_allocations()["n"]
    assert result.allocated_ips == 12 and result.demand is not None and result.demand.needed == 12


def test_instance_missing_from_cache_waits_for_a_refresh_then_reports() -> None:
    clock, sim, world, op = _op(instances=1)
    late = sim.launch_instance(
        "m5.large", world.node_subnet(AZ), security_group_ids=world.security_group_ids[:1]
    )
    op.on_node_changed(node_for("late", late, world, requested_v4=8, first_interface_index=1))
    op.on_node_changed(node_for("ghost", "i-0000000000doesnotexist", world, requested_v4=8))
    first = op.run_allocations()
    assert first["late"].actions == [] and first["ghost"].operator_error in (None, "")
    assert "CreateNetworkInterface" not in {c.action for c in sim.calls}
    clock.advance(1)
    assert op.refresh() is True  # the unknown instances asked for it
    clock.advance(1)
    second = op.run_allocations()
    assert second["late"].allocated_ips == 8
    assert second["ghost"].operator_error == (
        "node ghost: instance i-0000000000doesnotexist has no network interface in EC2; "
        "check spec.instance-id or whether the instance still runs"
    )


class _RecordingRunner:
    """Sequential, and remembers the order in which nodes were worked on."""

    def __init__(self) -> None:
        self.order: list[str] = []

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any]) -> list[Any]:
        self.order.extend(items)
        return [fn(item) for item in items]


def test_eni_calc_4_pod_need_of_every_node_before_any_watermark_then_watermark_next_run() -> None:
    """Two phases of one queue: 'pods' (4 pods short, deficit 12) goes before 'watermark' (deficit 16,
    pre-allocate only) although its deficit is smaller; it stops once its pods are covered (one ENI),
    its status is in that run's result, and the ENI only pre-allocate needs comes a run later."""
    runner = _RecordingRunner()
    clock, sim, world = sim_world(instances=2)
    op = EniOperator(sim, EniOperatorConfig(aws_enable_prefix_delegation=False), clock, runner=runner)
    op.refresh(force=True)
    pods_iid, wm_iid = world.instance_ids
    op.on_node_changed(node_for("pods", pods_iid, world, requested_v4=4 + 8, first_interface_index=1))
    op.on_node_changed(
        node_for("watermark", wm_iid, world, requested_v4=16, pre_allocate=16, first_interface_index=1)
    )

    def enis_of(iid: str) -> int:
        return sum(1 for e in sim.enis.values() if e.attachment and e.attachment.instance_id == iid)

    assert op.queued() == ["pods", "watermark"]
    first = op.run_allocations()
    assert runner.order == ["pods", "watermark"]
    assert first["pods"].allocated_ips == 9 and first["pods"].enis is not None  # publishable now
    assert enis_of(pods_iid) == 1 + 1  # eth0 + the ENI its pods need, not yet the watermark's
    assert first["watermark"].allocated_ips == 16 and enis_of(wm_iid) == 1 + 2
    assert op.queued() == ["pods"]  # the watermark rest (3) stays queued
    clock.advance(1)
    second = op.run_allocations()
    assert second["pods"].allocated_ips == 3 and enis_of(pods_iid) == 1 + 2
    assert op.queued() == []


def test_eni_calc_4_pending_pods_count_as_pod_need_before_the_agent_reports_them() -> None:
    """A node whose agent has not reported its pods yet (usedIPs 0) but has pending pods is phase one."""
    clock, sim, world, op = _op(instances=2, aws_enable_prefix_delegation=False)
    a, b = world.instance_ids
    op.on_node_changed(node_for("quiet", a, world, requested_v4=16, pre_allocate=16, first_interface_index=1))
    op.on_node_changed(node_for("busy", b, world, requested_v4=8, first_interface_index=1))
    assert op.queued() == ["quiet", "busy"]  # both watermark only: largest deficit first
    op.set_pending_pods({"busy": 5})
    assert op.queued() == ["busy", "quiet"]
