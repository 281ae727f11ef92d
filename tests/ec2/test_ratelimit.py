"""Token buckets on a simulated clock: the client-side limiter waits (qps 4 / burst 20, ENI-CFG-1)
and adapts to throttling; nothing sleeps for real."""

from __future__ import annotations

import pytest

from reconciler.clock import SimClock
from reconciler.ec2.ratelimit import ClientRateLimiter, TokenBucket


def test_token_bucket_take_and_refill() -> None:
    clock = SimClock()
    bucket = TokenBucket(3, 2.0, clock)
    assert [bucket.try_take() for _ in range(4)] == [True, True, True, False]
    clock.advance(0.5)
    assert bucket.try_take() and not bucket.try_take()
    clock.advance(100)
    assert bucket.tokens == 3.0  # never above capacity
    with pytest.raises(ValueError):
        TokenBucket(0, 1, clock)


def test_client_limiter_defaults_burst_20_then_4_per_second() -> None:
    clock = SimClock()
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        clock.advance(seconds)

    limiter = ClientRateLimiter(clock, sleep)
    observed = [limiter.acquire() for _ in range(24)]
    assert observed[:20] == [0.0] * 20
    assert observed[20:] == pytest.approx([0.25] * 4)
    assert clock.now() == pytest.approx(1.0) and waits == pytest.approx([0.25] * 4)


def test_client_limiter_reservations_queue_up_across_callers() -> None:
    """Without the sleep advancing time (parallel workers), each reservation waits longer."""
    clock = SimClock()
    limiter = ClientRateLimiter(clock, lambda s: None, qps=4, burst=1)
    assert [limiter.acquire() for _ in range(3)] == pytest.approx([0.0, 0.25, 0.5])


def test_client_limiter_halves_on_throttle_and_recovers_slowly() -> None:
    clock = SimClock()
    limiter = ClientRateLimiter(clock, clock.advance, qps=4, burst=20, recovery_calls=40)
    limiter.on_throttled()
    limiter.on_throttled()
    assert limiter.qps == pytest.approx(1.0)
    for _ in range(10):
        limiter.on_success()
    assert limiter.qps == pytest.approx(2.0)
    for _ in range(100):
        limiter.on_success()
    assert limiter.qps == pytest.approx(4.0)  # never above the configured rate
    for _ in range(20):
        limiter.on_throttled()
    assert limiter.qps == pytest.approx(limiter.min_qps) and limiter.min_qps > 0


def test_client_limiter_rejects_bad_flags() -> None:
    with pytest.raises(ValueError, match="limit-ipam-api-qps"):
        ClientRateLimiter(SimClock(), lambda s: None, qps=0)
    with pytest.raises(ValueError, match="limit-ipam-api-burst"):
        ClientRateLimiter(SimClock(), lambda s: None, burst=0)
