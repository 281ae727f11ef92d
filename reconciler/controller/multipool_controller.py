"""Multi-pool mode: drive `MultiPoolOperator` from CiliumPodIPPools and CiliumNodes (SPEC section 2).

Each leadership term: create the auto-create pools that do not exist yet (MP-CFG-1), then
`restore` every node's existing blocks before anything new is handed out. Afterwards pool events
re-sync the pool set (refusals and MP-POOL-2 warnings are logged), and each triggered node is
reconciled; new blocks are *added* to `spec.ipam.pools.allocated` (the agent owns removals and
`requested`, MP-CRD-1) with the node's resourceVersion, re-planned on conflict.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from reconciler.clock import Clock
from reconciler.cluster.store import (
    CILIUM_NODE_CONFIG,
    CILIUM_POD_IP_POOL,
    AlreadyExists,
    ClusterStore,
    JsonObj,
    StoreError,
)
from reconciler.controller.base import ControllerBase, StepReport
from reconciler.controller.informer import Informer
from reconciler.controller.logs import log_event
from reconciler.controller.metrics import IpamMetrics
from reconciler.controller.writes import Mutation, add_allocated, compose, set_operator_error
from reconciler.model import CiliumNode
from reconciler.multipool.autocreate import parse_auto_create, pools_to_create
from reconciler.multipool.operator import MultiPoolOperator
from reconciler.multipool.pools import CiliumPodIPPool

log = logging.getLogger("cilium_ipam.controller.multipool")


class MultiPoolController(ControllerBase):
    def __init__(
        self,
        store: ClusterStore,
        clock: Clock,
        is_leader: Callable[[], bool],
        auto_create: Any = "",
        metrics: IpamMetrics | None = None,
        trigger_min_interval: float = 0.010,
    ) -> None:
        super().__init__(store, clock, is_leader, trigger_min_interval)
        self.metrics = metrics or IpamMetrics()
        self.auto_create = parse_auto_create(auto_create) if auto_create else []
        self.pools = Informer(store, CILIUM_POD_IP_POOL)
        self.node_configs = Informer(store, CILIUM_NODE_CONFIG)
        self.pools.add_handler(self._on_pool)
        self.engine: MultiPoolOperator | None = None
        self._pools_dirty = True

    def informers(self) -> list[Informer]:
        return [*super().informers(), self.pools, self.node_configs]

    def ready(self) -> bool:
        return not self.leading or (self.engine is not None and self.engine.ready)

    def _on_pool(self, type_: str, old: JsonObj | None, new: JsonObj | None) -> None:
        with self._lock:
            self._pools_dirty = True
        self.wake.set()

    def _current_pools(self) -> list[CiliumPodIPPool]:
        return [CiliumPodIPPool.from_obj(o) for o in self.pools.objects()]

    def _current_nodes(self) -> list[CiliumNode]:
        return [CiliumNode.from_obj(o) for o in self.cilium_nodes.objects()]

    # -- terms ---------------------------------------------------------------------------------
    def _create_auto_pools(self) -> None:
        """MP-CFG-1: create configured pools that do not exist; existing pools are never changed."""
        existing = [p.name for p in self._current_pools()]
        for pool in pools_to_create(self.auto_create, existing):
            if not self.is_leader():
                return
            try:
                created = self.store.create(CILIUM_POD_IP_POOL, pool.to_obj())
                self.pools.cache[("", pool.name)] = created
                log_event(log, "pool-created", action="auto-create", pool=pool.name)
            except AlreadyExists:
                continue
            except StoreError as exc:
                log_event(log, "pool-create-failed", logging.WARNING, pool=pool.name, reason=str(exc))

    def start_term(self) -> None:
        self._create_auto_pools()
        self.engine = MultiPoolOperator()
        plan = self.engine.restore(self._current_pools(), self._current_nodes())
        for pool, error in plan.pool_errors.items():
            log_event(log, "pool-refused", logging.ERROR, pool=pool, reason=error)
        for warning in plan.warnings:
            log.warning(warning.log_line())
        with self._lock:
            self._pools_dirty = False
        log_event(log, "work-started", action="leading", reason="acquired the lease")
        super().start_term()

    def end_term(self) -> None:
        self.engine = None
        super().end_term()

    # -- one step ------------------------------------------------------------------------------
    def step(self) -> StepReport:
        report = StepReport()
        if not self._check_term(report):
            self._take_deleted_cilium_nodes()
            return report
        engine = self.engine
        assert engine is not None
        self._delete_orphaned_cilium_nodes(report)
        for name in self._take_deleted_cilium_nodes():
            engine.forget_node(name)
            self.triggers.forget(name)
        with self._lock:
            pools_dirty, self._pools_dirty = self._pools_dirty, False
        if pools_dirty:
            sync = engine.set_pools(self._current_pools())
            for pool, error in sync.errors.items():
                log_event(log, "pool-refused", logging.ERROR, pool=pool, reason=error)
            for warning in (*sync.warnings, *sync.adopted):
                log.warning(warning.log_line())
            for obj in self.cilium_nodes.objects():  # new pools or CIDRs may satisfy waiting nodes
                self.triggers.fire(obj["metadata"]["name"])
        for name in self.triggers.due():
            current = self.cilium_nodes.get(name)
            if current is None:
                continue
            node = CiliumNode.from_obj(current)
            result = engine.reconcile_node(node)
            report.nodes_triggered += 1
            for warning in result.warnings:
                log.warning(warning.log_line())
            additions = self._additions(node, result)
            if additions:
                self.write(name, compose(*additions), status=False, report=report)
            if (result.error or "") != node.operator_error:
                self.write(name, set_operator_error(result.error), status=True, report=report)
                self.events.node_error(current, name, result.error)
        self.metrics.set_node_counts(total=len(self.cilium_nodes.cache), in_deficit=0, at_capacity=0)
        return report

    @staticmethod
    def _additions(node: CiliumNode, result: Any) -> list[Mutation]:
        """Blocks the engine holds for the node that its spec does not list yet (additions only)."""
        out: list[Mutation] = []
        for alloc in result.allocated:
            have = set(node.ipam.cidrs_of(alloc.pool))
            new = [c for c in alloc.cidrs if c not in have]
            if new:
                out.append(add_allocated(alloc.pool, new))
        return out
