"""What a simulation run measures: pods with an IP over time, pod waits, EC2 calls, flapping.

Actors report facts (a pod appeared, a pod got an IP, an address was assigned or released, an EC2
call returned); this module turns them into the figures issue 7 compares with its targets. It keeps
per-event cost O(1) so a 1,000-node run stays cheap.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

FLAP_WINDOW_S = 300.0  # issue 7: allocate-then-release of the same capacity within 5 minutes


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty list; 0.0 for an empty one."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(math.ceil(q / 100.0 * len(ordered)), 1)
    return ordered[rank - 1]


@dataclass
class Sample:
    t: float
    pods: int
    pods_with_ip: int
    nodes_ready: int
    ips_allocated: int


@dataclass
class Metrics:
    """Counters and series for one policy in one run."""

    policy: str
    samples: list[Sample] = field(default_factory=list)
    pod_waits: list[float] = field(default_factory=list)
    calls: Counter[str] = field(default_factory=Counter)
    throttled: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    addresses_allocated: int = 0
    addresses_flapped: int = 0
    all_pods_with_ip_at: float | None = None
    _pending_since: dict[str, float] = field(default_factory=dict)
    _allocated_at: dict[str, float] = field(default_factory=dict)
    pods_with_ip: int = 0
    pods: int = 0
    expected_pods: int = 0  # the initial fill: all_pods_with_ip_at waits until this many exist
    steady_from: float | None = None  # pods created from here on count as churn (S3's wait target)
    churn_waits: list[float] = field(default_factory=list)

    # --- pods ----------------------------------------------------------------------------------
    def pod_pending(self, pod: str, t: float) -> None:
        self._pending_since[pod] = t
        self.pods += 1

    def pod_got_ip(self, pod: str, t: float) -> None:
        since = self._pending_since.pop(pod, None)
        if since is not None:
            self.pod_waits.append(t - since)
            if self.steady_from is not None and since >= self.steady_from:
                self.churn_waits.append(t - since)
            self.pods_with_ip += 1
            if (
                self.all_pods_with_ip_at is None
                and not self._pending_since
                and self.pods >= self.expected_pods
            ):
                self.all_pods_with_ip_at = t

    def pod_gone(self, pod: str, had_ip: bool) -> None:
        self.pods -= 1
        if had_ip:
            self.pods_with_ip -= 1
        else:
            self._pending_since.pop(pod, None)

    @property
    def pods_waiting(self) -> int:
        return len(self._pending_since)

    def oldest_wait(self, now: float) -> float:
        return max((now - t for t in self._pending_since.values()), default=0.0)

    # --- EC2 -----------------------------------------------------------------------------------
    def ec2_call(self, action: str, outcome: str) -> None:
        """`outcome` is "OK" or the AWS error code."""
        self.calls[action] += 1
        if outcome == "RequestLimitExceeded":
            self.throttled[action] += 1
        elif outcome != "OK":
            self.errors[outcome] += 1

    def assigned(self, addresses: Iterable[str], t: float) -> None:
        for a in addresses:
            self._allocated_at[a] = t
            self.addresses_allocated += 1

    def released(self, addresses: Iterable[str], t: float) -> None:
        """A release within FLAP_WINDOW_S of the same address's allocation is one flap."""
        for a in addresses:
            at = self._allocated_at.pop(a, None)
            if at is not None and t - at <= FLAP_WINDOW_S:
                self.addresses_flapped += 1

    # --- series --------------------------------------------------------------------------------
    def sample(self, t: float, nodes_ready: int, ips_allocated: int) -> None:
        self.samples.append(Sample(t, self.pods, self.pods_with_ip, nodes_ready, ips_allocated))

    # --- results -------------------------------------------------------------------------------
    @property
    def total_calls(self) -> int:
        return sum(self.calls.values())

    def mutating_calls(self, mutating: frozenset[str]) -> int:
        return sum(n - self.throttled[a] for a, n in self.calls.items() if a in mutating)

    def summary(self, mutating: frozenset[str]) -> dict[str, Any]:
        total = self.total_calls
        throttled = sum(self.throttled.values())
        return {
            "policy": self.policy,
            "all_pods_with_ip_s": self.all_pods_with_ip_at,
            "pods": self.pods,
            "pods_with_ip": self.pods_with_ip,
            "pods_waiting": self.pods_waiting,
            "pod_wait_max_s": max(self.pod_waits, default=0.0),
            "pod_wait_p50_s": percentile(self.pod_waits, 50),
            "pod_wait_p99_s": percentile(self.pod_waits, 99),
            "churn_pod_wait_max_s": max(self.churn_waits, default=0.0)
            if self.steady_from is not None
            else None,
            "churn_pod_wait_p99_s": percentile(self.churn_waits, 99)
            if self.steady_from is not None
            else None,
            "churn_pods": len(self.churn_waits),
            "ec2_calls": total,
            "ec2_calls_by_action": dict(sorted(self.calls.items())),
            "mutating_calls": self.mutating_calls(mutating),
            "throttled_calls": throttled,
            "throttled_share": throttled / total if total else 0.0,
            "errors_by_code": dict(sorted(self.errors.items())),
            "addresses_allocated": self.addresses_allocated,
            "addresses_flapped": self.addresses_flapped,
            "flapping_share": (
                self.addresses_flapped / self.addresses_allocated if self.addresses_allocated else 0.0
            ),
        }

    def series(self) -> list[Mapping[str, float]]:
        return [
            {"t": s.t, "pods": s.pods, "pods_with_ip": s.pods_with_ip, "ips_allocated": s.ips_allocated}
            for s in self.samples
        ]
