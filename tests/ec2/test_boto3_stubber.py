"""Boto3Ec2 request shapes and response parsing for calls moto lacks (prefixes, IPv6 prefixes,
pagination tokens), checked by botocore's Stubber against the real EC2 service model."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from reconciler.clock import SimClock
from reconciler.ec2.api import CreateNetworkInterfaceRequest
from reconciler.ec2.boto3_adapter import Boto3Ec2
from reconciler.ec2.observe import RecordingObserver

ENI = "eni-0a1b2c3d4e5f60718"


def _wire_eni(**extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "NetworkInterfaceId": ENI,
        "SubnetId": "subnet-1",
        "VpcId": "vpc-1",
        "AvailabilityZone": "us-east-1a",
        "Status": "available",
        "MacAddress": "02:00:00:00:00:01",
        "PrivateIpAddress": "10.0.1.10",
        "PrivateIpAddresses": [{"PrivateIpAddress": "10.0.1.10", "Primary": True}],
        "Groups": [{"GroupId": "sg-1", "GroupName": "nodes"}],
        "TagSet": [{"Key": "io.cilium/cilium-managed", "Value": "true"}],
        "Description": "Cilium-CNI (i-1)",
    }
    base.update(extra)
    return base


@pytest.fixture
def stubbed() -> Iterator[tuple[Boto3Ec2, Stubber, RecordingObserver]]:
    client = boto3.client(
        "ec2", region_name="us-east-1", aws_access_key_id="AKIDEXAMPLE", aws_secret_access_key="s"
    )
    observer = RecordingObserver()
    clock = SimClock()
    ec2 = Boto3Ec2(client=client, clock=clock, sleep=clock.advance, observer=observer)
    with Stubber(client) as stubber:
        yield ec2, stubber, observer
        stubber.assert_no_pending_responses()


def test_create_with_prefix_counts_tags_and_client_token(stubbed: tuple[Boto3Ec2, Stubber, Any]) -> None:
    """ENI-CREATE-3: Ipv4PrefixCount + Ipv6PrefixCount=1, tags and ClientToken in one create."""
    ec2, stubber, _ = stubbed
    stubber.add_response(
        "create_network_interface",
        {
            "NetworkInterface": _wire_eni(
                Ipv4Prefixes=[{"Ipv4Prefix": "10.0.1.32/28"}, {"Ipv4Prefix": "10.0.1.48/28"}],
                Ipv6Prefixes=[{"Ipv6Prefix": "2600:1f18:1:100:1::/80"}],
            )
        },
        {
            "SubnetId": "subnet-1",
            "Description": "Cilium-CNI (i-1)",
            "Groups": ["sg-1"],
            "Ipv4PrefixCount": 2,
            "Ipv6PrefixCount": 1,
            "TagSpecifications": [
                {
                    "ResourceType": "network-interface",
                    "Tags": [{"Key": "io.cilium/cilium-managed", "Value": "true"}],
                }
            ],
            "ClientToken": "i-1/eni/1",
        },
    )
    eni = ec2.create_network_interface(
        CreateNetworkInterfaceRequest(
            subnet_id="subnet-1",
            security_group_ids=("sg-1",),
            description="Cilium-CNI (i-1)",
            ipv4_prefix_count=2,
            ipv6_prefix_count=1,
            tags={"io.cilium/cilium-managed": "true"},
            client_token="i-1/eni/1",
        )
    )
    assert eni.ipv4_prefixes == ("10.0.1.32/28", "10.0.1.48/28")
    assert eni.ipv6_prefixes == ("2600:1f18:1:100:1::/80",)
    assert eni.tags == {"io.cilium/cilium-managed": "true"} and eni.security_group_ids == ("sg-1",)


def test_assign_ipv4_prefix_count(stubbed: tuple[Boto3Ec2, Stubber, Any]) -> None:
    """ENI-ALLOC-4: AssignPrivateIpAddresses(Ipv4PrefixCount) returns the new /28s."""
    ec2, stubber, _ = stubbed
    stubber.add_response(
        "assign_private_ip_addresses",
        {"NetworkInterfaceId": ENI, "AssignedIpv4Prefixes": [{"Ipv4Prefix": "10.0.2.16/28"}]},
        {"NetworkInterfaceId": ENI, "Ipv4PrefixCount": 1},
    )
    result = ec2.assign_private_ip_addresses(ENI, ipv4_prefix_count=1)
    assert result.ipv4_prefixes == ("10.0.2.16/28",) and result.private_ips == ()


def test_assign_explicit_prefixes_and_secondary_count(stubbed: tuple[Boto3Ec2, Stubber, Any]) -> None:
    ec2, stubber, _ = stubbed
    stubber.add_response(
        "assign_private_ip_addresses",
        {"NetworkInterfaceId": ENI, "AssignedIpv4Prefixes": [{"Ipv4Prefix": "10.0.2.32/28"}]},
        {"NetworkInterfaceId": ENI, "Ipv4Prefixes": ["10.0.2.32/28"]},
    )
    stubber.add_response(
        "assign_private_ip_addresses",
        {
            "NetworkInterfaceId": ENI,
            "AssignedPrivateIpAddresses": [
                {"PrivateIpAddress": "10.0.1.20"},
                {"PrivateIpAddress": "10.0.1.21"},
            ],
        },
        {"NetworkInterfaceId": ENI, "SecondaryPrivateIpAddressCount": 2},
    )
    assert ec2.assign_private_ip_addresses(ENI, ipv4_prefixes=["10.0.2.32/28"]).ipv4_prefixes == (
        "10.0.2.32/28",
    )
    assert ec2.assign_private_ip_addresses(ENI, secondary_private_ip_count=2).private_ips == (
        "10.0.1.20",
        "10.0.1.21",
    )


def test_unassign_whole_prefix(stubbed: tuple[Boto3Ec2, Stubber, Any]) -> None:
    """ENI-REL-2: a /28 goes back whole with UnassignPrivateIpAddresses(Ipv4Prefixes)."""
    ec2, stubber, _ = stubbed
    stubber.add_response(
        "unassign_private_ip_addresses", {}, {"NetworkInterfaceId": ENI, "Ipv4Prefixes": ["10.0.2.16/28"]}
    )
    ec2.unassign_private_ip_addresses(ENI, ipv4_prefixes=["10.0.2.16/28"])


def test_assign_ipv6_prefix(stubbed: tuple[Boto3Ec2, Stubber, Any]) -> None:
    """ENI-V6-1: AssignIpv6Addresses(Ipv6PrefixCount=1) returns the /80."""
    ec2, stubber, _ = stubbed
    stubber.add_response(
        "assign_ipv6_addresses",
        {"NetworkInterfaceId": ENI, "AssignedIpv6Prefixes": ["2600:1f18:1:100:2::/80"]},
        {"NetworkInterfaceId": ENI, "Ipv6PrefixCount": 1},
    )
    assert ec2.assign_ipv6_prefixes(ENI, 1) == ("2600:1f18:1:100:2::/80",)


def test_describe_network_interfaces_follows_next_token(
    stubbed: tuple[Boto3Ec2, Stubber, RecordingObserver],
) -> None:
    """ENI-CACHE-1: every page is read; each page is one rate-limited, observed request."""
    ec2, stubber, observer = stubbed
    filters = [{"Name": "vpc-id", "Values": ["vpc-1"]}]
    second = _wire_eni(NetworkInterfaceId="eni-0000000000000002")
    stubber.add_response(
        "describe_network_interfaces",
        {"NetworkInterfaces": [_wire_eni()], "NextToken": "page-2"},
        {"Filters": filters, "MaxResults": 1000},
    )
    stubber.add_response(
        "describe_network_interfaces",
        {"NetworkInterfaces": [second]},
        {"Filters": filters, "MaxResults": 1000, "NextToken": "page-2"},
    )
    enis = ec2.describe_network_interfaces(filters={"vpc-id": ["vpc-1"]})
    assert [e.id for e in enis] == [ENI, "eni-0000000000000002"]
    assert [c[:2] for c in observer.calls] == [("DescribeNetworkInterfaces", "OK")] * 2
    assert len(observer.rate_limits) == 2


def test_parse_attached_eni_with_prefixes_and_public_ip(stubbed: tuple[Boto3Ec2, Stubber, Any]) -> None:
    ec2, stubber, _ = stubbed
    wire = _wire_eni(
        Status="in-use",
        Attachment={
            "AttachmentId": "eni-attach-1",
            "InstanceId": "i-1",
            "DeviceIndex": 2,
            "DeleteOnTermination": True,
        },
        PrivateIpAddresses=[
            {"PrivateIpAddress": "10.0.1.11", "Primary": False},
            {"PrivateIpAddress": "10.0.1.10", "Primary": True},
        ],
        Ipv4Prefixes=[{"Ipv4Prefix": "10.0.1.32/28"}],
        Association={"PublicIp": "198.51.100.7"},
    )
    stubber.add_response(
        "describe_network_interfaces", {"NetworkInterfaces": [wire]}, {"NetworkInterfaceIds": [ENI]}
    )
    [eni] = ec2.describe_network_interfaces(ids=[ENI])
    assert eni.private_ips == ("10.0.1.10", "10.0.1.11") and eni.secondary_ips == ("10.0.1.11",)
    assert (eni.instance_id, eni.device_index, eni.attachment_id, eni.delete_on_termination) == (
        "i-1",
        2,
        "eni-attach-1",
        True,
    )
    assert eni.address_slots_used == 3 and eni.public_ip == "198.51.100.7"


def test_describe_instance_types_parses_limits(stubbed: tuple[Boto3Ec2, Stubber, Any]) -> None:
    ec2, stubber, _ = stubbed
    stubber.add_response(
        "describe_instance_types",
        {
            "InstanceTypes": [
                {
                    "InstanceType": "m5.large",
                    "Hypervisor": "nitro",
                    "BareMetal": False,
                    "NetworkInfo": {
                        "MaximumNetworkInterfaces": 3,
                        "Ipv4AddressesPerInterface": 10,
                        "Ipv6AddressesPerInterface": 10,
                    },
                }
            ]
        },
        {"InstanceTypes": ["m5.large"]},
    )
    [limits] = ec2.describe_instance_types(["m5.large"])
    assert (limits.max_network_interfaces, limits.ipv4_per_interface, limits.hypervisor) == (3, 10, "nitro")


def test_delete_on_termination_request_shape(stubbed: tuple[Boto3Ec2, Stubber, Any]) -> None:
    """ENI-PARAM-8: ModifyNetworkInterfaceAttribute(Attachment={AttachmentId, DeleteOnTermination})."""
    ec2, stubber, _ = stubbed
    stubber.add_response(
        "modify_network_interface_attribute",
        {},
        {
            "NetworkInterfaceId": ENI,
            "Attachment": {"AttachmentId": "eni-attach-1", "DeleteOnTermination": True},
        },
    )
    ec2.set_delete_on_termination(ENI, "eni-attach-1", True)
