"""Observer hook for EC2 calls, so metrics stay out of the adapters (ENI-MET-1).

The controller plugs Prometheus in: `observe_call` feeds
`cilium_operator_ec2_api_duration_seconds{operation,response_code}` and `observe_rate_limit` feeds
`cilium_operator_ec2_api_rate_limit_duration_seconds{operation}`. `operation` is the EC2 action name
(e.g. "AssignPrivateIpAddresses"); `response_code` is "OK" or the AWS error code (e.g.
"RequestLimitExceeded"). Cilium itself puts the HTTP status line ("503 Service Unavailable") in that
label for failures; the error code is more useful for alerts and "OK" matches Cilium for successes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

OK = "OK"


class Ec2CallObserver(Protocol):
    def observe_call(self, operation: str, response_code: str, duration_seconds: float) -> None: ...

    def observe_rate_limit(self, operation: str, waited_seconds: float) -> None: ...


class NullObserver:
    """Observes nothing (the default)."""

    def observe_call(self, operation: str, response_code: str, duration_seconds: float) -> None:
        return None

    def observe_rate_limit(self, operation: str, waited_seconds: float) -> None:
        return None


@dataclass
class RecordingObserver:
    """Keeps every observation in lists; for tests and benchmarks."""

    calls: list[tuple[str, str, float]] = field(default_factory=list)
    rate_limits: list[tuple[str, float]] = field(default_factory=list)

    def observe_call(self, operation: str, response_code: str, duration_seconds: float) -> None:
        self.calls.append((operation, response_code, duration_seconds))

    def observe_rate_limit(self, operation: str, waited_seconds: float) -> None:
        self.rate_limits.append((operation, waited_seconds))
