"""Token buckets on a `Clock`: EC2's server-side throttling (EC2-SIM-5) and our client-side limiter.

`TokenBucket` is the shared arithmetic. `ClientRateLimiter` is Cilium's single client bucket
(`--limit-ipam-api-qps` 4 / `--limit-ipam-api-burst` 20, ENI-CFG-1) and `Boto3Ec2`'s default: it
reserves a token, sleeps through an injected `sleep` for as long as the reservation needs, returns the
wait (for `cilium_operator_ec2_api_rate_limit_duration_seconds`), and adapts: each
RequestLimitExceeded halves its rate (down to a floor), each success gives back a small step of the
configured rate. `Ec2RateLimiter` is the shape `Boto3Ec2` needs; the per-action limiter sized like
AWS's buckets (reconciler.ec2.aws_buckets_limiter) has it too.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Protocol

from reconciler.clock import Clock


class Ec2RateLimiter(Protocol):
    """What `Boto3Ec2` calls around each EC2 request; `action` is the API name, e.g. DescribeSubnets."""

    def acquire(self, action: str) -> float:
        """Wait (through the injected sleep) for permission to send `action`; returns the seconds waited."""
        ...

    def on_throttled(self, action: str) -> None: ...

    def on_success(self, action: str) -> None: ...


class TokenBucket:
    """`capacity` tokens, refilled at `rate` per second of `clock` time; starts full."""

    def __init__(self, capacity: float, rate: float, clock: Clock) -> None:
        if capacity <= 0 or rate <= 0:
            raise ValueError(f"a token bucket needs capacity and rate > 0 (got {capacity}, {rate})")
        self.capacity = float(capacity)
        self.rate = float(rate)
        self._clock = clock
        self._tokens = float(capacity)
        self._updated = clock.now()

    def _refill(self) -> float:
        now = self._clock.now()
        if now > self._updated:
            self._tokens = min(self.capacity, self._tokens + (now - self._updated) * self.rate)
            self._updated = now
        return self._tokens

    @property
    def tokens(self) -> float:
        return self._refill()

    def try_take(self, count: float = 1.0) -> bool:
        """Take `count` tokens if they are there now (server-side semantics: reject otherwise)."""
        if self._refill() >= count:
            self._tokens -= count
            return True
        return False

    def reserve(self, count: float = 1.0) -> float:
        """Take `count` tokens, going into debt if needed; returns the seconds to wait for them."""
        self._refill()
        self._tokens -= count
        return 0.0 if self._tokens >= 0 else -self._tokens / self.rate

    def set_rate(self, rate: float) -> None:
        self._refill()
        self.rate = float(rate)


class ClientRateLimiter:
    """Client-side limiter for EC2 calls; thread-safe, sleeps via the injected function."""

    def __init__(
        self,
        clock: Clock,
        sleep: Callable[[float], None],
        *,
        qps: float = 4.0,
        burst: float = 20,
        adaptive: bool = True,
        min_qps: float | None = None,
        recovery_calls: int = 50,
    ) -> None:
        if qps <= 0 or burst < 1:
            raise ValueError(
                f"--limit-ipam-api-qps must be > 0 and --limit-ipam-api-burst >= 1 (got {qps}, {burst})"
            )
        self.base_qps = float(qps)
        self.min_qps = float(min_qps if min_qps is not None else max(qps / 16.0, 0.05))
        self.adaptive = adaptive
        self._recovery_step = self.base_qps / max(recovery_calls, 1)
        self._bucket = TokenBucket(burst, qps, clock)
        self._sleep = sleep
        self._lock = threading.Lock()

    @property
    def qps(self) -> float:
        return self._bucket.rate

    def reserve(self) -> float:
        """Take one token now (into debt if needed) without sleeping; returns the seconds to wait."""
        with self._lock:
            return self._bucket.reserve()

    def acquire(self, action: str = "") -> float:
        """Wait for one token, whatever the action; returns the seconds waited (0.0 if one was ready)."""
        wait = self.reserve()
        if wait > 0:
            self._sleep(wait)
        return wait

    def on_throttled(self, action: str = "") -> None:
        """EC2 said RequestLimitExceeded: halve the rate (multiplicative decrease)."""
        if not self.adaptive:
            return
        with self._lock:
            self._bucket.set_rate(max(self.min_qps, self._bucket.rate / 2.0))

    def on_success(self, action: str = "") -> None:
        """A call went through: recover a small step toward the configured rate (additive increase)."""
        if not self.adaptive:
            return
        with self._lock:
            if self._bucket.rate < self.base_qps:
                self._bucket.set_rate(min(self.base_qps, self._bucket.rate + self._recovery_step))
