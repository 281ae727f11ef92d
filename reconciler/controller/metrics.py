"""Prometheus metrics with Cilium's exact names and labels (ENI-MET-1).

Dashboards built for Cilium's operator must work unchanged, so names are Cilium's: the `*_ops`
counters have no `_total` suffix (client_golang style), `resync_total` has it. prometheus-client
would add `_total` to every counter, so those three are exported by a small collector and their
HELP/TYPE lines are written back to the bare name in `exposition()`.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Iterator

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.metrics_core import Metric

disable_created_metrics()  # Cilium exports no *_created series

NS = "cilium_operator"
IPAM = f"{NS}_ipam"

OPS_COUNTERS = {
    "ip_allocation_ops": "Number of IP allocation operations",
    "ip_release_ops": "Number of IP release operations",
    "interface_creation_ops": "Number of interfaces allocated",
}
NODE_CATEGORIES = ("total", "in-deficit", "at-capacity")
_DURATION_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)


class _OpsCollector:
    """The three per-subnet operation counters, exported under their bare Cilium names."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: dict[str, defaultdict[str, float]] = {n: defaultdict(float) for n in OPS_COUNTERS}

    def inc(self, name: str, subnet_id: str, amount: float = 1.0) -> None:
        with self._lock:
            self._values[name][subnet_id] += amount

    def value(self, name: str, subnet_id: str) -> float:
        with self._lock:
            return self._values[name].get(subnet_id, 0.0)

    def collect(self) -> Iterator[Metric]:
        with self._lock:
            snapshot = {n: dict(v) for n, v in self._values.items()}
        for name, doc in OPS_COUNTERS.items():
            full = f"{IPAM}_{name}"
            metric = Metric(full, doc, "counter")
            for subnet_id, value in sorted(snapshot[name].items()):
                metric.add_sample(full, {"subnet_id": subnet_id}, value)
            yield metric


class IpamMetrics:
    """Every ENI-MET-1 metric in its own registry (one per operator, so tests stay isolated).

    Also an `Ec2CallObserver` (reconciler/ec2/observe.py) for the EC2 API histograms.
    """

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.available_ips = Gauge(
            f"{IPAM}_available_ips", "Total number of IPs available for allocation", ["target_node"],
            registry=r,
        )
        self.used_ips = Gauge(f"{IPAM}_used_ips", "Total number of IPs in use", ["target_node"], registry=r)
        self.needed_ips = Gauge(
            f"{IPAM}_needed_ips", "Number of IPs that are needed to reach the watermark", ["target_node"],
            registry=r,
        )
        self.nodes = Gauge(f"{IPAM}_nodes", "Number of nodes by category", ["category"], registry=r)
        self.resync = Counter(f"{IPAM}_resync", "Number of synchronization operations with external IPAM API",
                              registry=r)
        self.allocation_duration = Histogram(
            f"{IPAM}_allocation_duration_seconds",
            "Allocation ip or interface latency in seconds",
            ["type", "status", "subnet_id"],
            buckets=_DURATION_BUCKETS,
            registry=r,
        )
        self.ec2_duration = Histogram(
            f"{NS}_ec2_api_duration_seconds",
            "Duration of interactions with API",
            ["operation", "response_code"],
            buckets=_DURATION_BUCKETS,
            registry=r,
        )
        self.ec2_rate_limit = Histogram(
            f"{NS}_ec2_api_rate_limit_duration_seconds",
            "Duration of client-side rate limiter blocking",
            ["operation"],
            buckets=_DURATION_BUCKETS,
            registry=r,
        )
        self._ops = _OpsCollector()
        r.register(self._ops)
        self._nodes_seen: set[str] = set()
        for category in NODE_CATEGORIES:
            self.nodes.labels(category=category).set(0)

    # -- per node ------------------------------------------------------------------------------
    def set_node(self, node: str, available: int, used: int, needed: int) -> None:
        self.available_ips.labels(target_node=node).set(available)
        self.used_ips.labels(target_node=node).set(used)
        self.needed_ips.labels(target_node=node).set(needed)
        self._nodes_seen.add(node)

    def forget_node(self, node: str) -> None:
        if node in self._nodes_seen:
            self._nodes_seen.discard(node)
            for gauge in (self.available_ips, self.used_ips, self.needed_ips):
                gauge.remove(node)

    def set_node_counts(self, total: int, in_deficit: int, at_capacity: int) -> None:
        self.nodes.labels(category="total").set(total)
        self.nodes.labels(category="in-deficit").set(in_deficit)
        self.nodes.labels(category="at-capacity").set(at_capacity)

    # -- operations ----------------------------------------------------------------------------
    def allocation_op(self, subnet_id: str, amount: int = 1) -> None:
        self._ops.inc("ip_allocation_ops", subnet_id, amount)

    def release_op(self, subnet_id: str, amount: int = 1) -> None:
        self._ops.inc("ip_release_ops", subnet_id, amount)

    def interface_creation_op(self, subnet_id: str, amount: int = 1) -> None:
        self._ops.inc("interface_creation_ops", subnet_id, amount)

    def ops_value(self, name: str, subnet_id: str) -> float:
        return self._ops.value(name, subnet_id)

    def resynced(self) -> None:
        self.resync.inc()

    def observe_allocation(self, type_: str, status: str, subnet_id: str, seconds: float) -> None:
        self.allocation_duration.labels(type=type_, status=status, subnet_id=subnet_id).observe(seconds)

    # -- Ec2CallObserver -----------------------------------------------------------------------
    def observe_call(self, operation: str, response_code: str, duration_seconds: float) -> None:
        self.ec2_duration.labels(operation=operation, response_code=response_code).observe(duration_seconds)

    def observe_rate_limit(self, operation: str, waited_seconds: float) -> None:
        self.ec2_rate_limit.labels(operation=operation).observe(waited_seconds)

    # -- exposition ----------------------------------------------------------------------------
    def exposition(self) -> bytes:
        text = generate_latest(self.registry).decode()
        for name in OPS_COUNTERS:
            full = f"{IPAM}_{name}"
            text = text.replace(f"# HELP {full}_total ", f"# HELP {full} ")
            text = text.replace(f"# TYPE {full}_total counter", f"# TYPE {full} counter")
        return text.encode()
