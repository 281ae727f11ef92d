"""What both IPAM modes' controllers share: informers, leadership terms, ENI-NODE-1, result writes.

A controller is steppable: `step()` does one round of work and returns; it never sleeps. The real
process calls it from a loop thread while informer threads feed events; tests and the simulator call
`poll_informers(0)` then `step()` on a SimClock. Event handlers only record what happened (thread
safe); `step()` acts on it, so every decision is taken with the leader check right in front of it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from reconciler.clock import Clock
from reconciler.cluster.memory import clone
from reconciler.cluster.store import CILIUM_NODE, NODE, ClusterStore, JsonObj, NotFound, StoreError, name_of
from reconciler.controller.events import EventRecorder
from reconciler.controller.informer import Informer
from reconciler.controller.logs import log_event
from reconciler.controller.triggers import NodeTriggers
from reconciler.controller.writes import Mutation, TooManyConflicts, write_with_retry

log = logging.getLogger("cilium_ipam.controller")


@dataclass
class StepReport:
    """What one step did (tests and the simulator read it; the process logs it)."""

    leading: bool = False
    term_started: bool = False
    nodes_triggered: int = 0
    writes: int = 0
    deleted_cilium_nodes: int = 0
    scanned: bool = False


class ControllerBase:
    def __init__(
        self,
        store: ClusterStore,
        clock: Clock,
        is_leader: Callable[[], bool],
        trigger_min_interval: float = 0.010,
    ) -> None:
        self.store = store
        self.clock = clock
        self.is_leader = is_leader
        self.cilium_nodes = Informer(store, CILIUM_NODE)
        self.k8s_nodes = Informer(store, NODE)
        self.triggers = NodeTriggers(clock, trigger_min_interval)
        self.wake = threading.Event()
        self._lock = threading.RLock()
        self._deleted_cilium_nodes: list[str] = []
        self._deleted_k8s_nodes: list[str] = []
        self.cilium_nodes.add_handler(self._on_cilium_node)
        self.k8s_nodes.add_handler(self._on_k8s_node)
        self.leading = False
        self.events = EventRecorder(store)

    # -- informers -----------------------------------------------------------------------------
    def informers(self) -> list[Informer]:
        return [self.cilium_nodes, self.k8s_nodes]

    def poll_informers(self, timeout: float = 0.0) -> int:
        """Tests / simulator: one watch round on every informer (0 = drain without waiting)."""
        return sum(i.poll(timeout) for i in self.informers())

    def synced(self) -> bool:
        return all(i.synced for i in self.informers())

    def _on_cilium_node(self, type_: str, old: JsonObj | None, new: JsonObj | None) -> None:
        name = name_of(new or old or {})
        with self._lock:
            if type_ == "DELETED":
                self._deleted_cilium_nodes.append(name)
            else:
                self.triggers.fire(name)
        self.wake.set()

    def _on_k8s_node(self, type_: str, old: JsonObj | None, new: JsonObj | None) -> None:
        if type_ == "DELETED":
            with self._lock:
                self._deleted_k8s_nodes.append(name_of(old or {}))
            self.wake.set()

    # -- leadership ----------------------------------------------------------------------------
    def _check_term(self, report: StepReport) -> bool:
        """Start or end a leadership term; returns whether we lead now."""
        leading = self.is_leader()
        if leading and not self.leading:
            self.start_term()  # raises -> still not leading; the next step tries again
            self.leading = True
            report.term_started = True
        elif not leading and self.leading:
            self.leading = False
            self.end_term()
        report.leading = leading
        return leading

    def start_term(self) -> None:
        """Rebuild engine state from the cluster (subclasses); every known node is triggered."""
        with self._lock:
            for obj in self.cilium_nodes.objects():
                self.triggers.fire(name_of(obj))

    def end_term(self) -> None:
        """Drop all engine state at once: a new term rebuilds it from CiliumNodes + EC2."""
        self.triggers.clear()
        log_event(log, "work-stopped", logging.WARNING, reason="leadership lost")

    # -- ENI-NODE-1 ----------------------------------------------------------------------------
    def _delete_orphaned_cilium_nodes(self, report: StepReport) -> None:
        """ENI-NODE-1: a deleted Kubernetes Node takes its CiliumNode with it."""
        with self._lock:
            names, self._deleted_k8s_nodes = self._deleted_k8s_nodes, []
        for name in names:
            if not self.is_leader():
                return
            try:
                self.store.delete(CILIUM_NODE, name)
                report.deleted_cilium_nodes += 1
                log_event(log, "cilium-node-deleted", node=name, action="delete", reason="Node deleted")
            except NotFound:
                continue
            except StoreError as exc:
                log_event(log, "cilium-node-delete-failed", logging.WARNING, node=name, reason=str(exc))
                with self._lock:
                    self._deleted_k8s_nodes.append(name)

    def _take_deleted_cilium_nodes(self) -> list[str]:
        with self._lock:
            names, self._deleted_cilium_nodes = self._deleted_cilium_nodes, []
        return names

    # -- writes --------------------------------------------------------------------------------
    def write(self, name: str, mutation: Mutation, *, status: bool, report: StepReport) -> bool:
        """One conflict-safe write, only while leading; False when skipped or lost."""
        if not self.is_leader():
            return False
        cached = self.cilium_nodes.get(name)
        if cached is not None and mutation(clone(cached)) is None:
            return True  # our view already says so; a newer version arrives as an event and re-triggers
        wrote = [False]

        def tracked(obj: JsonObj) -> JsonObj | None:
            out = mutation(obj)
            wrote[0] = out is not None
            return out

        try:
            out = write_with_retry(self.store, name, tracked, status=status)
        except TooManyConflicts as exc:
            log_event(log, "write-gave-up", logging.WARNING, node=name, reason=str(exc))
            self.triggers.fire(name)
            return False
        except StoreError as exc:
            log_event(log, "write-failed", logging.WARNING, node=name, reason=str(exc))
            self.triggers.fire(name)
            return False
        if out is not None and wrote[0]:
            report.writes += 1
        return out is not None
