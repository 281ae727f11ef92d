"""`AwsBucketsLimiter`: one client-side token bucket per EC2 action, sized like AWS's own (EC2-SIM-5).

Cilium's single bucket (qps 4 / burst 20) makes a burst of 100 AssignPrivateIpAddresses wait ~20 s
although AWS would accept all of them at once, and lets a describe storm starve mutations. Sizing
each action's client bucket like AWS's bucket (the table in reconciler.ec2.sim.throttle -- one source
of truth) spends exactly the account's budget: no wait AWS would not impose, no call AWS would
throttle. Each action's bucket adapts like `ClientRateLimiter` (RequestLimitExceeded halves that
action's rate, successes win it back) because other clients in the account draw from the same AWS
buckets; `share` < 1 reserves part of the budget for them up front. An optional `total_cap`
(Cilium's `--limit-ipam-api-qps` / `--limit-ipam-api-burst`, when a user sets them) caps all calls
together on top.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from reconciler.clock import Clock
from reconciler.ec2.ratelimit import ClientRateLimiter
from reconciler.ec2.sim.throttle import bucket_size

# Arrive just after AWS's identically sized bucket has the token, not a rounding error before it.
ARRIVAL_GUARD_S = 1e-6


class AwsBucketsLimiter:
    """Per-action adaptive buckets (AWS's sizes times `share`), created full on first use; thread-safe."""

    def __init__(
        self,
        clock: Clock,
        sleep: Callable[[float], None],
        *,
        share: float = 1.0,
        adaptive: bool = True,
        total_cap: tuple[float, float] | None = None,
        recovery_calls: int = 50,
    ) -> None:
        if not 0 < share <= 1:
            raise ValueError(f"the EC2 rate limiter share is a fraction in (0, 1], not {share}")
        self.share = share
        self._clock = clock
        self._sleep = sleep
        self._adaptive = adaptive
        self._recovery_calls = recovery_calls
        self._actions: dict[str, ClientRateLimiter] = {}
        self.total: ClientRateLimiter | None = None
        if total_cap is not None:
            qps, burst = total_cap
            self.total = ClientRateLimiter(clock, sleep, qps=qps, burst=burst, adaptive=False)
        self._lock = threading.Lock()

    def bucket(self, action: str) -> ClientRateLimiter:
        """The client bucket of `action` (a key of reconciler.ec2.sim.throttle, e.g. CreateTags)."""
        with self._lock:
            return self._bucket_locked(action)

    def _bucket_locked(self, action: str) -> ClientRateLimiter:
        limiter = self._actions.get(action)
        if limiter is None:
            capacity, rate = bucket_size(action)
            limiter = self._actions[action] = ClientRateLimiter(
                self._clock,
                self._sleep,
                qps=rate * self.share,
                burst=max(1.0, capacity * self.share),
                adaptive=self._adaptive,
                recovery_calls=self._recovery_calls,
            )
        return limiter

    def qps(self, action: str) -> float:
        """The current (possibly adapted) rate of `action`'s bucket."""
        return self.bucket(action).qps

    def acquire(self, action: str) -> float:
        """Wait until both `action`'s bucket and the total cap (if any) have a token; returns the wait."""
        with self._lock:
            wait = self._bucket_locked(action).reserve()
            if self.total is not None:
                wait = max(wait, self.total.reserve())
        if wait > 0:
            wait += ARRIVAL_GUARD_S
            self._sleep(wait)
        return wait

    def on_throttled(self, action: str) -> None:
        """AWS throttled `action`: halve that action's rate only; other actions have their own buckets."""
        self.bucket(action).on_throttled()

    def on_success(self, action: str) -> None:
        self.bucket(action).on_success()
