"""ENI mode: drive the `EniOperator` engine from the cluster and write its results back.

Per step, while leading: ENI-NODE-1 deletions; CiliumNode deletions and triggered nodes (10 ms min
interval per node) into the engine; pending pods for surge (ENI-ALLOC-2); EC2 cache refresh when due
(ENI-CACHE-2); publish (ENI-PUB-1); the 1-minute scan with release and GC (ENI-CALC-3/4, ENI-REL,
ENI-GC-1); the allocation queue (the engine keeps it to once per second); then the results are
written with resourceVersion, and the engine's counters are exported as ENI-MET-1 metrics.

The engine is built fresh for each leadership term (`engine_factory`), from CiliumNodes and EC2
only, so a standby that takes over never trusts another process's memory.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from reconciler.clock import Clock
from reconciler.cluster.store import POD, ClusterStore, JsonObj
from reconciler.controller.base import ControllerBase, StepReport
from reconciler.controller.informer import Informer
from reconciler.controller.logs import log_event
from reconciler.controller.metrics import IpamMetrics
from reconciler.controller.pods import PendingPods
from reconciler.controller.triggers import SCAN_INTERVAL, Every
from reconciler.controller.writes import Mutation, compose, set_eni_status, set_operator_error
from reconciler.eni.calc import node_demand
from reconciler.model import CiliumNode

log = logging.getLogger("cilium_ipam.controller.eni")

EngineFactory = Callable[[], Any]
"""() -> a fresh EniOperator (already holding a leader-gated Ec2Api)."""


class EniController(ControllerBase):
    def __init__(
        self,
        store: ClusterStore,
        clock: Clock,
        is_leader: Callable[[], bool],
        engine_factory: EngineFactory,
        metrics: IpamMetrics | None = None,
        scan_interval: float = SCAN_INTERVAL,
        trigger_min_interval: float = 0.010,
    ) -> None:
        super().__init__(store, clock, is_leader, trigger_min_interval)
        self.engine_factory = engine_factory
        self.metrics = metrics or IpamMetrics()
        self.pods = Informer(store, POD)
        self.pending = PendingPods()
        self.pods.add_handler(self._on_pod)
        self.engine: Any = None
        self.scan = Every(clock, scan_interval)
        self._pending_dirty = True
        self._exported: dict[str, dict[str, int]] = {}
        self._at_capacity: set[str] = set()
        self._demands: dict[str, Any] = {}

    def informers(self) -> list[Informer]:
        return [*super().informers(), self.pods]

    def _on_pod(self, type_: str, old: JsonObj | None, new: JsonObj | None) -> None:
        with self._lock:
            changed = self.pending.handle(type_, old, new)
            if changed:
                self._pending_dirty = True
                for node in changed:
                    self.triggers.fire(node)
        if changed:
            self.wake.set()

    # -- readiness -----------------------------------------------------------------------------
    def ready(self) -> bool:
        """/readyz: a standby is ready; a leader once its EC2 cache is loaded and stable."""
        if not self.leading:
            return True
        return self.engine is not None and bool(self.engine.cache.stable)

    # -- terms ---------------------------------------------------------------------------------
    def start_term(self) -> None:
        self.engine = self.engine_factory()
        self.engine.refresh(force=True)
        self.scan.reset()
        self._pending_dirty = True
        self._exported = {}
        self._demands = {}
        log_event(log, "work-started", action="leading", reason="acquired the lease")
        super().start_term()

    def end_term(self) -> None:
        self.engine = None
        for name in list(self._demands):  # a standby exports no per-node numbers
            self.metrics.forget_node(name)
        self._demands = {}
        self._at_capacity = set()
        self.metrics.set_node_counts(total=0, in_deficit=0, at_capacity=0)
        super().end_term()

    # -- one step ------------------------------------------------------------------------------
    def step(self) -> StepReport:
        report = StepReport()
        if not self._check_term(report):
            self._take_deleted_cilium_nodes()
            return report
        engine = self.engine
        self._delete_orphaned_cilium_nodes(report)
        for name in self._take_deleted_cilium_nodes():
            engine.on_node_deleted(name)
            self.metrics.forget_node(name)
            self._at_capacity.discard(name)
            self._demands.pop(name, None)
            self.triggers.forget(name)
        with self._lock:
            if self._pending_dirty:
                self._pending_dirty = False
                engine.set_pending_pods(self._pending_counts())
        for name in self.triggers.due():
            obj = self.cilium_nodes.get(name)
            if obj is not None:
                node = CiliumNode.from_obj(obj)
                engine.on_node_changed(node)
                report.nodes_triggered += 1
                if node.instance_id and engine.cache.manages_instance(node.instance_id):
                    self._demands[name] = demand = node_demand(node)
                    self.metrics.set_node(name, demand.available, demand.used, demand.needed)
        engine.refresh()
        results: dict[str, Any] = {}
        self._merge(results, engine.publish())
        if self.scan.due():
            report.scanned = True
            nodes = [CiliumNode.from_obj(o) for o in self.cilium_nodes.objects()]
            plan = engine.resync(nodes, self._pending_counts())
            self._export_plan(plan)
            self._merge(results, engine.run_release(plan))
            engine.run_gc()
        self._merge(results, engine.run_allocations())
        self._write_results(results, report)
        self._export_counters()
        self.metrics.set_node_counts(
            total=len(self._demands),
            in_deficit=sum(1 for d in self._demands.values() if d.needed > 0),
            at_capacity=len(self._at_capacity & set(self._demands)),
        )
        return report

    def _pending_counts(self) -> dict[str, int]:
        with self._lock:
            return self.pending.counts()

    @staticmethod
    def _merge(into: dict[str, Any], more: Mapping[str, Any]) -> None:
        for name, result in more.items():
            into[name] = into[name].merge(result) if name in into else result

    def _write_results(self, results: Mapping[str, Any], report: StepReport) -> None:
        for name, result in results.items():
            for line in result.actions:
                log_event(log, "ec2-action", node=name, action=line)
            if result.at_capacity:
                self._at_capacity.add(name)
            elif result.allocated_ips:
                self._at_capacity.discard(name)
            mutations: list[Mutation] = []
            if result.enis is not None:
                mutations.append(set_eni_status(result.enis))
            if result.operator_error is not None:
                mutations.append(set_operator_error(result.operator_error))
                if self.is_leader():
                    self.events.node_error(self.cilium_nodes.get(name), name, result.operator_error)
            if mutations:
                self.write(name, compose(*mutations), status=True, report=report)

    # -- metrics -------------------------------------------------------------------------------
    def _export_plan(self, plan: Any) -> None:
        self._demands = dict(plan.demands)
        for name, demand in plan.demands.items():
            self.metrics.set_node(name, demand.available, demand.used, demand.needed)
        self.metrics.resynced()

    def _export_counters(self) -> None:
        counters = self.engine.counters
        for attr, inc in (
            ("allocation_ops", self.metrics.allocation_op),
            ("release_ops", self.metrics.release_op),
            ("interface_creation_ops", self.metrics.interface_creation_op),
        ):
            seen = self._exported.setdefault(attr, {})
            for subnet, total in dict(getattr(counters, attr)).items():
                if int(total) > seen.get(subnet, 0):
                    inc(subnet, int(total) - seen.get(subnet, 0))
                seen[subnet] = int(total)
        for timing in counters.drain_timings():
            self.metrics.observe_allocation(timing.kind, timing.status, timing.subnet_id, timing.seconds)
