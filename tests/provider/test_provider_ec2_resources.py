"""DualStackSubnet and Ec2Tags against a real moto EC2 server (ENI-V6-4, ENI-PARAM-3/4/5)."""

from __future__ import annotations

import ipaddress
from typing import Any

import pytest

from provider._props import UNKNOWN
from provider.dual_stack_subnet import DualStackSubnetProvider
from provider.ec2_tags import Ec2TagsProvider

pytestmark = pytest.mark.moto


@pytest.fixture()
def dual_vpc(moto_ec2: Any) -> dict[str, Any]:
    vpc = moto_ec2.create_vpc(CidrBlock="10.20.0.0/16", AmazonProvidedIpv6CidrBlock=True)["Vpc"]
    return moto_ec2.describe_vpcs(VpcIds=[vpc["VpcId"]])["Vpcs"][0]


@pytest.fixture()
def v4_vpc(moto_ec2: Any) -> dict[str, Any]:
    return dict(moto_ec2.create_vpc(CidrBlock="10.30.0.0/16")["Vpc"])


def subnet_props(endpoint: str, vpc_id: str, cidr: str, **extra: Any) -> dict[str, Any]:
    return {
        "vpc_id": vpc_id,
        "cidr_block": cidr,
        "availability_zone": "us-east-1a",
        "tags": {"team": "net"},
        "endpoint_url": endpoint,
        "region": "us-east-1",
        "__provider": "opaque",
        **extra,
    }


def live_subnet(ec2: Any, subnet_id: str) -> dict[str, Any]:
    return dict(ec2.describe_subnets(SubnetIds=[subnet_id])["Subnets"][0])


def test_eni_v6_4_subnet_gets_next_free_64_and_delete_is_idempotent(
    moto_ec2: Any, moto_endpoint: str, dual_vpc: dict[str, Any]
) -> None:
    provider = DualStackSubnetProvider()
    block = ipaddress.ip_network(dual_vpc["Ipv6CidrBlockAssociationSet"][0]["Ipv6CidrBlock"])
    first = provider.check({}, subnet_props(moto_endpoint, dual_vpc["VpcId"], "10.20.1.0/24"))
    assert first.failures == []
    a = provider.create(first.inputs)
    b = provider.create(
        provider.check({}, subnet_props(moto_endpoint, dual_vpc["VpcId"], "10.20.2.0/24")).inputs
    )
    assert a.outs is not None and b.outs is not None
    v6_a = ipaddress.ip_network(a.outs["ipv6_cidr_block_assigned"])
    v6_b = ipaddress.ip_network(b.outs["ipv6_cidr_block_assigned"])
    assert v6_a.prefixlen == v6_b.prefixlen == 64
    assert v6_a.subnet_of(block) and v6_b.subnet_of(block) and not v6_a.overlaps(v6_b)  # type: ignore[arg-type]
    live = live_subnet(moto_ec2, a.id)
    assert live["AssignIpv6AddressOnCreation"] is True
    assert {"Key": "team", "Value": "net"} in live["Tags"]
    assert live["AvailabilityZone"] == "us-east-1a"

    again = provider.create(first.inputs)  # interrupted-create retry adopts, never duplicates
    assert again.id == a.id

    no_az = provider.check(
        {}, subnet_props(moto_endpoint, dual_vpc["VpcId"], "10.20.3.0/24", availability_zone=None)
    )
    c = provider.create(no_az.inputs)
    refreshed = provider.read(c.id, c.outs or {})
    assert refreshed.outs is not None and refreshed.outs["availability_zone"] is None
    assert refreshed.outs["availability_zone_assigned"]  # the live AZ is reported separately
    assert provider.diff(c.id, refreshed.outs, no_az.inputs).changes is False  # refresh adds no replace
    provider.delete(c.id, refreshed.outs)

    for created in (a, b):
        provider.delete(created.id, created.outs or {})
        provider.delete(created.id, created.outs or {})
        assert provider.read(created.id, created.outs or {}).id == ""


def test_eni_v6_4_explicit_64_and_out_of_block_refused(moto_endpoint: str, dual_vpc: dict[str, Any]) -> None:
    provider = DualStackSubnetProvider()
    block = ipaddress.ip_network(dual_vpc["Ipv6CidrBlockAssociationSet"][0]["Ipv6CidrBlock"])
    wanted = str(list(block.subnets(new_prefix=64))[7])
    ok = provider.check(
        {}, subnet_props(moto_endpoint, dual_vpc["VpcId"], "10.20.9.0/24", ipv6_cidr_block=wanted)
    )
    assert ok.failures == []
    created = provider.create(ok.inputs)
    assert created.outs is not None and created.outs["ipv6_cidr_block_assigned"] == wanted
    outside = provider.check(
        {},
        subnet_props(
            moto_endpoint, dual_vpc["VpcId"], "10.20.10.0/24", ipv6_cidr_block="2001:db8:ffff:1::/64"
        ),
    )
    assert [f.property for f in outside.failures] == ["ipv6_cidr_block"]
    assert "outside the IPv6 block" in outside.failures[0].reason
    provider.delete(created.id, created.outs)


def test_eni_v6_4_ipv6_less_vpc_refused_in_check_and_create(
    moto_ec2: Any, moto_endpoint: str, v4_vpc: dict[str, Any]
) -> None:
    provider = DualStackSubnetProvider()
    props = subnet_props(moto_endpoint, v4_vpc["VpcId"], "10.30.1.0/24")
    result = provider.check({}, props)
    assert [f.property for f in result.failures] == ["vpc_id"]
    assert (
        "has no IPv6 CIDR block" in result.failures[0].reason and v4_vpc["VpcId"] in result.failures[0].reason
    )
    with pytest.raises(RuntimeError, match="has no IPv6 CIDR block"):
        provider.create(result.inputs)
    subnets = moto_ec2.describe_subnets(Filters=[{"Name": "vpc-id", "Values": [v4_vpc["VpcId"]]}])["Subnets"]
    assert subnets == []


def test_subnet_check_validates_syntax_and_tolerates_unknowns() -> None:
    provider = DualStackSubnetProvider()
    bad = provider.check(
        {},
        {
            "vpc_id": "x",
            "cidr_block": "10.0.0.1/24",
            "ipv6_cidr_block": "2001:db8::/56",
            "tags": {"a": 1},
            "assign_ipv6_address_on_creation": "yes",
        },
    )
    reasons = {f.property: f.reason for f in bad.failures}
    assert set(reasons) == {
        "vpc_id",
        "cidr_block",
        "ipv6_cidr_block",
        "tags",
        "assign_ipv6_address_on_creation",
    }
    assert "use the network address 10.0.0.0/24" in reasons["cidr_block"]
    assert "/64" in reasons["ipv6_cidr_block"]
    too_big = provider.check({}, {"vpc_id": UNKNOWN, "cidr_block": "10.0.0.0/8"})
    assert [f.property for f in too_big.failures] == ["cidr_block"]
    preview = provider.check({}, {"vpc_id": UNKNOWN, "cidr_block": UNKNOWN, "tags": {"k": UNKNOWN}})
    assert preview.failures == []


def test_subnet_diff_replaces_immutable_and_updates_tags_in_place(
    moto_ec2: Any, moto_endpoint: str, dual_vpc: dict[str, Any]
) -> None:
    provider = DualStackSubnetProvider()
    inputs = provider.check(
        {}, subnet_props(moto_endpoint, dual_vpc["VpcId"], "10.20.20.0/24", tags={"team": "net", "old": "x"})
    ).inputs
    created = provider.create(inputs)
    assert created.outs is not None
    moto_ec2.create_tags(Resources=[created.id], Tags=[{"Key": "foreign", "Value": "keep"}])
    new = {**inputs, "tags": {"team": "ops"}, "assign_ipv6_address_on_creation": False}
    diff = provider.diff(created.id, created.outs, new)
    assert diff.changes and diff.replaces == []
    outs = provider.update(created.id, created.outs, new).outs
    live = live_subnet(moto_ec2, created.id)
    tags = {t["Key"]: t["Value"] for t in live["Tags"]}
    assert tags == {"team": "ops", "foreign": "keep"}
    assert live["AssignIpv6AddressOnCreation"] is False
    moved = provider.diff(created.id, created.outs, {**new, "cidr_block": "10.20.21.0/24"})
    assert moved.replaces == ["cidr_block"] and moved.delete_before_replace is False
    same = provider.diff(created.id, created.outs, {**new, "availability_zone": "us-east-1b"})
    assert same.replaces == ["availability_zone"] and same.delete_before_replace is True
    assert provider.diff(created.id, created.outs, {**new, "cidr_block": UNKNOWN}).replaces == ["cidr_block"]
    provider.delete(created.id, outs or {})


def test_ec2_tags_own_only_their_keys(moto_ec2: Any, moto_endpoint: str, v4_vpc: dict[str, Any]) -> None:
    subnet = moto_ec2.create_subnet(VpcId=v4_vpc["VpcId"], CidrBlock="10.30.5.0/24")["Subnet"]["SubnetId"]
    moto_ec2.create_tags(Resources=[subnet], Tags=[{"Key": "Name", "Value": "theirs"}])
    provider = Ec2TagsProvider()
    props = {
        "resource_id": subnet,
        "tags": {"kubernetes.io/role/cilium": "1", "tier": "pods"},
        "endpoint_url": moto_endpoint,
        "region": "us-east-1",
    }
    inputs = provider.check({}, props).inputs
    created = provider.create(inputs)
    provider.create(inputs)  # idempotent

    def live() -> dict[str, str]:
        return {t["Key"]: t["Value"] for t in live_subnet(moto_ec2, subnet).get("Tags", [])}

    assert live() == {"Name": "theirs", "kubernetes.io/role/cilium": "1", "tier": "pods"}
    new = {**inputs, "tags": {"kubernetes.io/role/cilium": "1", "zone": "a"}}
    diff = provider.diff(created.id, created.outs or {}, new)
    assert diff.changes and diff.replaces == []
    outs = provider.update(created.id, created.outs or {}, new).outs or {}
    assert live() == {"Name": "theirs", "kubernetes.io/role/cilium": "1", "zone": "a"}
    moto_ec2.create_tags(Resources=[subnet], Tags=[{"Key": "zone", "Value": "re-set-by-someone"}])
    read = provider.read(created.id, outs)
    assert read.outs is not None and read.outs["tags"] == {
        "kubernetes.io/role/cilium": "1",
        "zone": "re-set-by-someone",
    }
    provider.delete(created.id, outs)
    provider.delete(created.id, outs)
    assert live() == {"Name": "theirs", "zone": "re-set-by-someone"}  # a value someone else set is theirs
    assert provider.diff(created.id, outs, {**new, "resource_id": "sg-123"}).replaces == ["resource_id"]


def test_ec2_tags_check_and_missing_resource(moto_endpoint: str) -> None:
    provider = Ec2TagsProvider()
    bad = provider.check({}, {"resource_id": "nothing", "tags": {"aws:x": "1"}})
    assert {f.property for f in bad.failures} == {"resource_id", "tags"}
    assert any("reserved 'aws:' prefix" in f.reason for f in bad.failures)
    assert provider.check({}, {"resource_id": UNKNOWN, "tags": UNKNOWN}).failures == []
    with pytest.raises(RuntimeError, match="does not exist"):
        provider.create(
            {
                "resource_id": "subnet-0000000000deadbee",
                "tags": {"a": "b"},
                "endpoint_url": moto_endpoint,
                "region": "us-east-1",
            }
        )


def test_check_names_a_vpc_that_does_not_exist(moto_endpoint: str) -> None:
    """A wrong vpc_id fails `pulumi preview` with one sentence, not only at create."""
    result = DualStackSubnetProvider().check(
        {}, subnet_props(moto_endpoint, "vpc-0123456789abcdef0", "10.20.4.0/24")
    )
    assert [(f.property, f.reason) for f in result.failures] == [
        ("vpc_id", "VPC vpc-0123456789abcdef0 does not exist; fix vpc_id.")
    ]
