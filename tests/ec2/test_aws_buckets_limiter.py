"""The per-action client limiter sized like AWS's buckets (EC2-SIM-5, ENI-CFG-1 rate-limit metric):
bursts AWS would accept pass at once, each action paces at AWS's refill rate independently, and
throttling slows only the throttled action. SimClock and an injected sleep: nothing sleeps for real.
"""

from __future__ import annotations

import boto3
import pytest
from botocore.stub import Stubber

from reconciler.clock import SimClock
from reconciler.ec2.aws_buckets_limiter import AwsBucketsLimiter
from reconciler.ec2.boto3_adapter import Boto3Ec2, RetryPolicy
from reconciler.ec2.observe import RecordingObserver
from reconciler.ec2.ratelimit import ClientRateLimiter
from reconciler.ec2.sim.throttle import AwsThrottle

ASSIGN = "AssignPrivateIpAddresses"


class SleepRecorder:
    def __init__(self, clock: SimClock) -> None:
        self.clock = clock
        self.sleeps: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.clock.advance(seconds)


def test_burst_of_100_assigns_passes_then_paces_at_5_per_second_EC2_SIM_5() -> None:
    clock = SimClock()
    sleep = SleepRecorder(clock)
    limiter = AwsBucketsLimiter(clock, sleep)
    assert [limiter.acquire(ASSIGN) for _ in range(100)] == [0.0] * 100
    assert clock.now() == 0.0 and sleep.sleeps == []
    paced = [limiter.acquire(ASSIGN) for _ in range(5)]
    assert paced == pytest.approx([0.2] * 5, abs=1e-5)
    assert clock.now() == pytest.approx(1.0, abs=1e-4)


def test_describe_subnets_is_unaffected_by_an_empty_assign_bucket_EC2_SIM_5() -> None:
    clock = SimClock()
    sleep = SleepRecorder(clock)
    limiter = AwsBucketsLimiter(clock, sleep)
    for _ in range(100):
        limiter.acquire(ASSIGN)
    assert limiter.acquire(ASSIGN) > 0  # the assign bucket is in debt now
    sleeps_before = len(sleep.sleeps)
    assert [limiter.acquire("DescribeSubnets") for _ in range(100)] == [0.0] * 100
    assert len(sleep.sleeps) == sleeps_before
    assert limiter.acquire("DescribeSubnets") == pytest.approx(1 / 20, abs=1e-5)  # describe refill 20/s


def test_cilium_single_bucket_makes_the_same_burst_wait_ENI_CFG_1() -> None:
    """The contrast the benchmark measures: qps 4 / burst 20 waits 20 s for 100 assigns."""
    clock = SimClock()
    single = ClientRateLimiter(clock, SleepRecorder(clock))
    waited = sum(single.acquire(ASSIGN) for _ in range(100))
    assert waited == pytest.approx(20.0) and clock.now() == pytest.approx(20.0)


def test_never_sends_a_call_aws_would_throttle_EC2_SIM_5() -> None:
    """Client buckets sized like AWS's, with the arrival guard: every paced call finds an AWS token."""
    clock = SimClock()
    aws = AwsThrottle(clock)
    limiter = AwsBucketsLimiter(clock, SleepRecorder(clock))
    for action in [ASSIGN] * 130 + ["AttachNetworkInterface"] * 60 + ["DescribeSubnets"] * 120:
        limiter.acquire(action)
        assert aws.admit(action), action


def test_throttling_halves_only_that_action_and_recovers() -> None:
    clock = SimClock()
    limiter = AwsBucketsLimiter(clock, SleepRecorder(clock), recovery_calls=10)
    limiter.on_throttled(ASSIGN)
    limiter.on_throttled(ASSIGN)
    assert limiter.qps(ASSIGN) == pytest.approx(1.25)
    assert limiter.qps("CreateTags") == pytest.approx(10.0)  # its own bucket, untouched
    for _ in range(5):
        limiter.on_success(ASSIGN)
    assert limiter.qps(ASSIGN) == pytest.approx(3.75)
    for _ in range(50):
        limiter.on_success(ASSIGN)
    assert limiter.qps(ASSIGN) == pytest.approx(5.0)  # never above AWS's rate


def test_adaptation_slows_the_pacing_of_the_throttled_action() -> None:
    clock = SimClock()
    limiter = AwsBucketsLimiter(clock, SleepRecorder(clock))
    for _ in range(100):
        limiter.acquire(ASSIGN)
    limiter.on_throttled(ASSIGN)
    assert limiter.acquire(ASSIGN) == pytest.approx(1 / 2.5, abs=1e-5)


def test_non_adaptive_limiter_ignores_throttles() -> None:
    limiter = AwsBucketsLimiter(SimClock(), lambda s: None, adaptive=False)
    limiter.on_throttled(ASSIGN)
    assert limiter.qps(ASSIGN) == 5.0


def test_total_cap_limits_all_actions_together() -> None:
    """An explicitly set --limit-ipam-api-qps / --limit-ipam-api-burst still holds (ENI-CFG-1)."""
    clock = SimClock()
    limiter = AwsBucketsLimiter(clock, lambda s: None, total_cap=(10.0, 3))
    waits = [limiter.acquire(a) for a in (ASSIGN, "DescribeSubnets", "CreateTags", "DescribeVpcs")]
    assert waits[:3] == [0.0, 0.0, 0.0]
    assert waits[3] == pytest.approx(0.1, abs=1e-5)


def test_share_scales_every_bucket_and_is_checked() -> None:
    clock = SimClock()
    limiter = AwsBucketsLimiter(clock, lambda s: None, share=0.5)
    assert [limiter.acquire(ASSIGN) for _ in range(50)] == [0.0] * 50
    assert limiter.acquire(ASSIGN) == pytest.approx(0.4, abs=1e-5)
    for bad in (0.0, 1.5):
        with pytest.raises(ValueError, match="share"):
            AwsBucketsLimiter(clock, lambda s: None, share=bad)


def test_boto3_adapter_uses_the_given_limiter_per_action_and_observes_waits() -> None:
    """Boto3Ec2(limiter=...) takes a token for the request's own action and reports the wait to
    cilium_operator_ec2_api_rate_limit_duration_seconds{operation}; throttles reach that action."""
    client = boto3.client("ec2", region_name="us-east-1", aws_access_key_id="a", aws_secret_access_key="b")
    clock = SimClock()
    sleep = SleepRecorder(clock)
    observer = RecordingObserver()
    limiter = AwsBucketsLimiter(clock, sleep, share=0.02)  # 2-token buckets; describes refill 0.4/s
    ec2 = Boto3Ec2(
        client=client, clock=clock, sleep=sleep, observer=observer, limiter=limiter,
        retry=RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=0.001),
    )
    assert ec2.limiter is limiter
    assigned = {
        "NetworkInterfaceId": "eni-1",
        "AssignedPrivateIpAddresses": [{"PrivateIpAddress": "10.0.1.9"}],
    }
    with Stubber(client) as stubber:
        for _ in range(3):
            stubber.add_response("describe_addresses", {"Addresses": []})
        stubber.add_client_error("assign_private_ip_addresses", "RequestLimitExceeded", http_status_code=503)
        stubber.add_response("assign_private_ip_addresses", assigned)
        for _ in range(3):
            ec2.describe_addresses()
        ec2.assign_private_ip_addresses("eni-1", secondary_private_ip_count=1)
    operations = [op for op, _ in observer.rate_limits]
    assert operations == ["DescribeAddresses"] * 3 + [ASSIGN, ASSIGN]
    waits = [w for _, w in observer.rate_limits]
    assert waits[:2] == [0.0, 0.0] and waits[2] == pytest.approx(1 / (20 * 0.02), abs=1e-5)
    assert waits[3:] == [0.0, 0.0]  # the assign bucket is its own: 2 tokens, one per attempt
    assert limiter.qps(ASSIGN) < 5 * 0.02  # the throttle slowed AssignPrivateIpAddresses ...
    assert limiter.qps("DescribeAddresses") == pytest.approx(20 * 0.02)  # ... and nothing else


def test_boto3_adapter_default_stays_the_single_bucket() -> None:
    client = boto3.client("ec2", region_name="us-east-1", aws_access_key_id="a", aws_secret_access_key="b")
    ec2 = Boto3Ec2(client=client, clock=SimClock(), sleep=lambda s: None)
    assert isinstance(ec2.limiter, ClientRateLimiter) and ec2.limiter.qps == 4.0
