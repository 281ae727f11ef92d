"""What the engine hands back to its drivers: per-node results, a scan plan and metric counters.

The fields map onto CiliumNode writes (`enis` -> status.eni.enis, `operator_error` ->
status.ipam.operator-status.error) and onto the ENI-MET-1 metrics.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field

from reconciler.eni.calc import NodeDemand, QueueEntry
from reconciler.model import EniStatus


@dataclass
class NodeResult:
    """The outcome of working on one node.

    `enis`: the new status.eni.enis, or None when unchanged. `operator_error`: the sentence to write
    to status.ipam.operator-status.error, "" to clear it, None when this pass has no opinion.
    `actions`: one line per EC2 mutation performed (or, in dry-run, planned), with its reason.
    """

    node: str
    enis: dict[str, EniStatus] | None = None
    operator_error: str | None = None
    actions: list[str] = field(default_factory=list)
    allocated_ips: int = 0
    released_ips: int = 0
    created_enis: int = 0
    at_capacity: bool = False
    demand: NodeDemand | None = None

    def merge(self, other: NodeResult) -> NodeResult:
        """Combine two passes over the same node; the later one wins where both speak."""
        return NodeResult(
            node=self.node,
            enis=other.enis if other.enis is not None else self.enis,
            operator_error=other.operator_error if other.operator_error is not None else self.operator_error,
            actions=self.actions + other.actions,
            allocated_ips=self.allocated_ips + other.allocated_ips,
            released_ips=self.released_ips + other.released_ips,
            created_enis=self.created_enis + other.created_enis,
            at_capacity=self.at_capacity or other.at_capacity,
            demand=other.demand or self.demand,
        )


@dataclass(frozen=True)
class Plan:
    """A scan (ENI-CALC-3/4): every node's numbers and the ordered queue of work."""

    demands: dict[str, NodeDemand]
    queue: list[QueueEntry]

    @property
    def nodes_in_deficit(self) -> int:
        return sum(1 for d in self.demands.values() if d.needed > 0)

    @property
    def allocations(self) -> list[str]:
        return [e.node for e in self.queue if e.action == "allocate"]

    @property
    def releases(self) -> list[str]:
        return [e.node for e in self.queue if e.action == "release"]


@dataclass(frozen=True)
class Gauges:
    """ENI-MET-1 gauges: `per_node` feeds available/used/needed {target_node}; the counts feed
    `cilium_operator_ipam_nodes{category=total|in-deficit|at-capacity}`."""

    per_node: dict[str, NodeDemand]
    nodes_total: int
    nodes_in_deficit: int
    nodes_at_capacity: int


@dataclass(frozen=True)
class OpTiming:
    kind: str  # "ip", "prefix", "ipv6-prefix", "interface", "release"
    status: str  # "success" or an AWS error code
    subnet_id: str
    seconds: float


class Counters:
    """Cumulative, thread-safe counters behind the ENI-MET-1 metrics (keyed by subnet)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.allocation_ops: Counter[str] = Counter()
        self.release_ops: Counter[str] = Counter()
        self.interface_creation_ops: Counter[str] = Counter()
        self.ec2_errors: Counter[str] = Counter()
        self.timings: list[OpTiming] = []
        self.resyncs = 0

    def add(self, name: str, subnet_id: str, n: int = 1) -> None:
        with self._lock:
            getattr(self, name)[subnet_id] += n

    def time(self, timing: OpTiming) -> None:
        with self._lock:
            self.timings.append(timing)
            del self.timings[:-10_000]

    def drain_timings(self) -> list[OpTiming]:
        """Timings since the last drain (the metrics exporter turns them into histogram samples)."""
        with self._lock:
            out, self.timings = self.timings, []
            return out
