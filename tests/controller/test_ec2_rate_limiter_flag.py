"""`--ec2-api-rate-limiter=aws-buckets|single` (EC2-SIM-5, ENI-CFG-1): the operator ships the
per-action limiter the benchmarks measure, keeps Cilium's single bucket on request, and honours an
explicitly set --limit-ipam-api-qps / --limit-ipam-api-burst as a ceiling."""

from __future__ import annotations

import pytest

from reconciler.cli import build_parser, main
from reconciler.clock import SimClock
from reconciler.controller.config import OperatorConfig, build_config, merge_sources
from reconciler.controller.metrics import IpamMetrics
from reconciler.controller.runtime import build_ec2, ec2_rate_limiter
from reconciler.ec2.aws_buckets_limiter import AwsBucketsLimiter
from reconciler.ec2.boto3_adapter import Boto3Ec2
from reconciler.ec2.ratelimit import ClientRateLimiter


def config_from(argv: list[str], env: dict[str, str] | None = None) -> OperatorConfig:
    args = build_parser().parse_args(["operator", "--ipam=eni", *argv])
    return build_config(merge_sources(args, env or {}))


def test_default_is_aws_buckets_without_a_cap_and_ciliums_numbers_stay_ENI_CFG_1() -> None:
    cfg = config_from([])
    assert cfg.ec2_api_rate_limiter == "aws-buckets" and cfg.ec2_api_rate_cap is None
    assert (cfg.eni.limit_ipam_api_qps, cfg.eni.limit_ipam_api_burst) == (4.0, 20)


def test_single_is_accepted_from_flag_and_environment() -> None:
    assert config_from(["--ec2-api-rate-limiter=single"]).ec2_api_rate_limiter == "single"
    env = {"CILIUM_IPAM_EC2_API_RATE_LIMITER": "single"}
    assert config_from([], env).ec2_api_rate_limiter == "single"


@pytest.mark.parametrize(
    ("argv", "env", "cap"),
    [
        (["--limit-ipam-api-qps=10"], {}, (10.0, 20)),
        (["--limit-ipam-api-burst=50"], {}, (4.0, 50)),
        ([], {"CILIUM_IPAM_LIMIT_IPAM_API_QPS": "4"}, (4.0, 20)),  # set to Cilium's value: still a cap
        (["--ec2-api-rate-limiter=single", "--limit-ipam-api-qps=10"], {}, None),  # single uses them
    ],
)
def test_explicit_cilium_limits_cap_the_total_with_aws_buckets(
    argv: list[str], env: dict[str, str], cap: tuple[float, int] | None
) -> None:
    assert config_from(argv, env).ec2_api_rate_cap == cap


def test_a_bad_limiter_name_exits_2_with_one_sentence(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["operator", "--ipam=eni", "--ec2-api-rate-limiter=fast"]) == 2
    err = capsys.readouterr().err
    assert "--ec2-api-rate-limiter must be aws-buckets or single (got 'fast')" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_runtime_builds_aws_buckets_by_default() -> None:
    clock = SimClock()
    limiter = ec2_rate_limiter(config_from([]), clock, clock.advance)
    assert isinstance(limiter, AwsBucketsLimiter) and limiter.total is None
    assert [limiter.acquire("AssignPrivateIpAddresses") for _ in range(100)] == [0.0] * 100


def test_runtime_builds_ciliums_single_bucket_on_request() -> None:
    clock = SimClock()
    limiter = ec2_rate_limiter(config_from(["--ec2-api-rate-limiter=single", "--limit-ipam-api-qps=8"]),
                               clock, clock.advance)
    assert isinstance(limiter, ClientRateLimiter) and limiter.qps == 8.0
    assert sum(limiter.acquire("AssignPrivateIpAddresses") for _ in range(100)) == pytest.approx(80 / 8)


def test_runtime_caps_aws_buckets_with_explicit_cilium_limits() -> None:
    clock = SimClock()
    limiter = ec2_rate_limiter(config_from(["--limit-ipam-api-qps=2", "--limit-ipam-api-burst=5"]),
                               clock, clock.advance)
    assert isinstance(limiter, AwsBucketsLimiter) and limiter.total is not None
    waits = [limiter.acquire(a) for a in ["DescribeSubnets", "CreateTags"] * 3]
    assert waits[:5] == [0.0] * 5 and waits[5] == pytest.approx(0.5, abs=1e-5)


def test_build_ec2_hands_the_chosen_limiter_to_boto3(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    for argv, kind in (([], AwsBucketsLimiter), (["--ec2-api-rate-limiter=single"], ClientRateLimiter)):
        cfg = config_from([*argv, "--aws-region=us-east-1", "--ec2-endpoint=http://127.0.0.1:1"])
        ec2 = build_ec2(cfg, SimClock(), IpamMetrics())
        assert isinstance(ec2, Boto3Ec2) and isinstance(ec2.limiter, kind)
