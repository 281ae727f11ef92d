"""What the simulator records per call, and how long calls take (EC2-SIM-6, benchmarks).

Latency: each call has a duration from `LatencyModel`. The call's effects apply at its start time;
the `CallRecord` carries `started_at` and `finished_at = started_at + latency`. How a caller lives
through the latency is the caller's choice:

- pass `sleep=clock.advance` (a `SimClock`) to `SimulatedEc2`: every call advances simulated time
  by its latency before returning -- right for a single-threaded simulation loop;
- or leave `sleep=None` and let a discrete-event loop read `sim.last_call.finished_at` (or
  `sim.latency_for(action)` beforehand) and schedule the caller's continuation at that time.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class CallRecord:
    action: str
    params: Mapping[str, object]
    outcome: str  # "OK" or the AWS error code
    started_at: float
    finished_at: float
    pages: int = 1  # HTTP requests a paginated describe takes (each costs a token and a latency)

    @property
    def ok(self) -> bool:
        return self.outcome == "OK"


@dataclass(frozen=True)
class LatencyModel:
    """Seconds per call: `per_action` overrides `default`; +/- `jitter` fraction, uniformly."""

    default: float = 0.0
    per_action: Mapping[str, float] = field(default_factory=dict)
    jitter: float = 0.0

    def latency_for(self, action: str, rng: random.Random) -> float:
        base = self.per_action.get(action, self.default)
        if base <= 0:
            return 0.0
        if self.jitter <= 0:
            return base
        return max(0.0, base * (1.0 + rng.uniform(-self.jitter, self.jitter)))


# Typical EC2 round-trip times (seconds), for benchmarks that want realistic waits.
TYPICAL_LATENCY = LatencyModel(
    default=0.15,
    per_action={
        "CreateNetworkInterface": 0.5,
        "AttachNetworkInterface": 0.8,
        "AssignPrivateIpAddresses": 0.3,
        "UnassignPrivateIpAddresses": 0.3,
        "AssignIpv6Addresses": 0.3,
        "DeleteNetworkInterface": 0.4,
        "DescribeNetworkInterfaces": 0.6,
    },
    jitter=0.2,
)
