"""Boto3Ec2 retries (tenacity, full jitter) and error mapping, with an injected sleep: throttling
and 5xx are retried invisibly, NotFound only right after our own create, user errors never."""

from __future__ import annotations

from collections.abc import Iterator

import boto3
import pytest
from botocore.stub import Stubber

from reconciler.clock import SimClock
from reconciler.ec2.api import (
    CreateNetworkInterfaceRequest,
    InsufficientCidrBlocks,
    InvalidParameter,
    LimitExceeded,
    NotFound,
    ServerError,
    Throttled,
    Unauthorized,
    error_class_for,
)
from reconciler.ec2.boto3_adapter import Boto3Ec2, RetryPolicy
from reconciler.ec2.observe import RecordingObserver

ENI = "eni-0a1b2c3d4e5f60718"
SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
ASSIGNED = {"NetworkInterfaceId": ENI, "AssignedPrivateIpAddresses": [{"PrivateIpAddress": "10.0.1.9"}]}
ASSIGN_PARAMS = {"NetworkInterfaceId": ENI, "SecondaryPrivateIpAddressCount": 1}


class Harness:
    def __init__(self) -> None:
        self.client = boto3.client(
            "ec2", region_name="us-east-1", aws_access_key_id="AKIDEXAMPLE", aws_secret_access_key=SECRET
        )
        self.clock = SimClock()
        self.sleeps: list[float] = []
        self.observer = RecordingObserver()
        self.ec2 = Boto3Ec2(
            client=self.client,
            clock=self.clock,
            sleep=self._sleep,
            observer=self.observer,
            retry=RetryPolicy(max_attempts=5, base_delay=0.5, max_delay=8.0, consistency_window=30.0),
        )
        self.stubber = Stubber(self.client)

    def _sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.clock.advance(seconds)


@pytest.fixture
def h() -> Iterator[Harness]:
    harness = Harness()
    with harness.stubber:
        yield harness


def test_throttling_is_retried_and_never_surfaces(h: Harness) -> None:
    """EC2-SIM-5 / ENI-CFG-1: RequestLimitExceeded twice, then success; the caller sees success."""
    for _ in range(2):
        h.stubber.add_client_error(
            "assign_private_ip_addresses", "RequestLimitExceeded", http_status_code=503
        )
    h.stubber.add_response("assign_private_ip_addresses", ASSIGNED, ASSIGN_PARAMS)
    assert h.ec2.assign_private_ip_addresses(ENI, secondary_private_ip_count=1).private_ips == ("10.0.1.9",)
    assert len(h.sleeps) == 2 and all(0 <= s <= 8.0 for s in h.sleeps)
    assert [c[1] for c in h.observer.calls] == ["RequestLimitExceeded", "RequestLimitExceeded", "OK"]
    assert h.ec2.limiter.qps < 4.0  # adapted down after throttling


def test_server_errors_are_retried(h: Harness) -> None:
    h.stubber.add_client_error("describe_vpcs", "InternalError", http_status_code=500)
    h.stubber.add_client_error("describe_vpcs", "Unavailable", http_status_code=503)
    h.stubber.add_response(
        "describe_vpcs", {"Vpcs": [{"VpcId": "vpc-1", "CidrBlock": "10.0.0.0/16"}]}, {"MaxResults": 1000}
    )
    assert [v.id for v in h.ec2.describe_vpcs()] == ["vpc-1"]
    assert len(h.sleeps) == 2


def test_retries_stop_after_max_attempts(h: Harness) -> None:
    for _ in range(5):
        h.stubber.add_client_error(
            "assign_private_ip_addresses", "RequestLimitExceeded", http_status_code=503
        )
    with pytest.raises(Throttled) as err:
        h.ec2.assign_private_ip_addresses(ENI, secondary_private_ip_count=1)
    assert err.value.code == "RequestLimitExceeded" and len(h.sleeps) == 4
    assert "AssignPrivateIpAddresses" in str(err.value)


@pytest.mark.parametrize(
    ("code", "status", "cls"),
    [
        ("PrivateIpAddressLimitExceeded", 400, LimitExceeded),
        ("InsufficientCidrBlocks", 400, InsufficientCidrBlocks),
        ("InvalidParameterCombination", 400, InvalidParameter),
        ("UnauthorizedOperation", 403, Unauthorized),
        ("InvalidNetworkInterfaceID.NotFound", 400, NotFound),
    ],
)
def test_user_errors_are_not_retried(h: Harness, code: str, status: int, cls: type) -> None:
    h.stubber.add_client_error(
        "assign_private_ip_addresses", code, service_message="Nope.", http_status_code=status
    )
    with pytest.raises(cls) as err:
        h.ec2.assign_private_ip_addresses(ENI, secondary_private_ip_count=1)
    assert err.value.code == code and h.sleeps == []
    assert str(err.value) == f"EC2 AssignPrivateIpAddresses failed with {code}: Nope."


def test_not_found_right_after_create_is_retried(h: Harness) -> None:
    """EC2-SIM-6: a just-created ENI may be unknown to the next call for a moment."""
    h.stubber.add_response(
        "create_network_interface",
        {
            "NetworkInterface": {
                "NetworkInterfaceId": ENI,
                "SubnetId": "subnet-1",
                "PrivateIpAddress": "10.0.1.5",
            }
        },
        {"SubnetId": "subnet-1", "Description": ""},
    )
    h.stubber.add_client_error("attach_network_interface", "InvalidNetworkInterfaceID.NotFound")
    h.stubber.add_response("attach_network_interface", {"AttachmentId": "eni-attach-1"})
    eni = h.ec2.create_network_interface(CreateNetworkInterfaceRequest(subnet_id="subnet-1"))
    assert h.ec2.attach_network_interface(eni.id, "i-1", 1) == "eni-attach-1"
    assert len(h.sleeps) == 1


def test_not_found_long_after_create_is_not_retried(h: Harness) -> None:
    h.stubber.add_response(
        "create_network_interface",
        {"NetworkInterface": {"NetworkInterfaceId": ENI, "SubnetId": "subnet-1"}},
        {"SubnetId": "subnet-1", "Description": ""},
    )
    h.stubber.add_client_error("attach_network_interface", "InvalidNetworkInterfaceID.NotFound")
    h.ec2.create_network_interface(CreateNetworkInterfaceRequest(subnet_id="subnet-1"))
    h.clock.advance(31.0)
    with pytest.raises(NotFound):
        h.ec2.attach_network_interface(ENI, "i-1", 1)
    assert h.sleeps == []


def test_credentials_never_appear_in_repr_or_errors(h: Harness) -> None:
    h.stubber.add_client_error("describe_addresses", "AuthFailure", http_status_code=401)
    with pytest.raises(Unauthorized) as err:
        h.ec2.describe_addresses()
    for text in (repr(h.ec2), str(err.value), repr(err.value)):
        assert SECRET not in text and "AKIDEXAMPLE" not in text


def test_region_and_endpoint_are_configurable() -> None:
    ec2 = Boto3Ec2(
        session=boto3.Session(aws_access_key_id="a", aws_secret_access_key="b"),
        region="eu-west-1",
        endpoint_url="http://127.0.0.1:5999",
    )
    assert repr(ec2) == "Boto3Ec2(region='eu-west-1', endpoint='http://127.0.0.1:5999')"


def test_missing_region_is_one_clear_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_CONFIG_FILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    with pytest.raises(InvalidParameter) as err:
        Boto3Ec2(session=boto3.Session(aws_access_key_id="a", aws_secret_access_key="b"))
    assert err.value.code == "NoRegion" and "AWS_REGION" in str(err.value)


def test_error_classes_by_code() -> None:
    assert error_class_for("InvalidSubnetID.NotFound") is NotFound
    assert error_class_for("InvalidIPAddress.InUse").__name__ == "InUse"
    assert error_class_for("SomethingNew", 502) is ServerError
    assert error_class_for("RequestLimitExceeded") is Throttled


def test_rate_limit_waits_are_observed(h: Harness) -> None:
    """cilium_operator_ec2_api_rate_limit_duration_seconds gets the client-side wait per request."""
    h.ec2.limiter = type(h.ec2.limiter)(h.clock, h._sleep, qps=2.0, burst=1)
    for _ in range(3):
        h.stubber.add_response("describe_addresses", {"Addresses": []})
    for _ in range(3):
        h.ec2.describe_addresses()
    assert [round(w, 3) for _, w in h.observer.rate_limits] == [0.0, 0.5, 0.5]
    assert h.clock.now() == pytest.approx(1.0)
