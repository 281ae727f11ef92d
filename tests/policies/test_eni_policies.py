"""Resource policies for ENI mode: watermarks (ENI-PARAM-1), subnets (ENI-V6-4), IAM (ENI-PERM-1)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from policy_harness import validate_resource

from policies.rules.iam_actions import ALWAYS, required_actions
from policies.rules.views import AWS_SUBNET_TYPE, DYNAMIC_TYPE, OUR_DYNAMIC_PREFIX

SUBNET_TYPE = OUR_DYNAMIC_PREFIX + "DualStackSubnet"
IAM_TYPE = OUR_DYNAMIC_PREFIX + "IpamIamPolicy"
CNI_TYPE = OUR_DYNAMIC_PREFIX + "CniConfiguration"


def cni(**ipam: Any) -> dict[str, Any]:
    return {"kind": "CniConfiguration", "name": "cni-configuration", "ipam": ipam, "__provider": "pickled"}


def test_consistent_watermarks_pass() -> None:
    props = cni(**{"pre-allocate": 8, "min-allocate": 10, "max-allocate": 40, "max-above-watermark": 4})
    assert validate_resource("eni-watermarks-consistent", CNI_TYPE, props) == []
    assert validate_resource("eni-watermarks-consistent", CNI_TYPE, cni(**{"max-allocate": 0})) == []


@pytest.mark.parametrize(
    ("ipam", "fragment"),
    [
        ({"min-allocate": 50, "max-allocate": 40}, "ipam.min-allocate 50 exceeds ipam.max-allocate 40"),
        ({"pre-allocate": 16, "max-allocate": 10}, "ipam.pre-allocate 16 exceeds ipam.max-allocate 10"),
        ({"pre-allocate": -1}, "ipam.pre-allocate is -1; set it to a whole number of 0 or more."),
        ({"max-above-watermark": "lots"}, "ipam.max-above-watermark is 'lots'"),
        # pass str.isdigit() after lstrip("-") but int() refuses them: a violation, not a crash
        ({"pre-allocate": "8\u00b2"}, "ipam.pre-allocate is '8\u00b2'"),
        ({"pre-allocate": "--8"}, "ipam.pre-allocate is '--8'"),
    ],
)
def test_inconsistent_watermarks_are_mandatory_violations(ipam: dict[str, Any], fragment: str) -> None:
    messages = validate_resource("eni-watermarks-consistent", CNI_TYPE, cni(**ipam))
    assert len(messages) == 1
    assert messages[0].startswith("CNI configuration 'cni-configuration' ")
    assert fragment in messages[0]


def dual_stack(**props: Any) -> dict[str, Any]:
    base = {
        "vpc_id": "vpc-1",
        "cidr_block": "10.0.1.0/24",
        "availability_zone": "us-east-1a",
        "assign_ipv6_address_on_creation": True,
        "__provider": "pickled",
    }
    return {**base, **props}


def test_dual_stack_subnet_passes_with_or_without_explicit_ipv6_block() -> None:
    for props in (dual_stack(), dual_stack(ipv6_cidr_block="2600:1f18:abcd:ef01::/64")):
        assert validate_resource("eni-dual-stack-subnets", SUBNET_TYPE, props, {"ipv6EniMode": True}) == []


def test_subnet_cidr_shapes_follow_ec2() -> None:
    """EC2-SIM-2: IPv4 /16../28, IPv6 exactly /64."""
    bad = dual_stack(cidr_block="10.0.0.0/29", ipv6_cidr_block="2600:1f18:abcd::/56")
    messages = validate_resource("eni-dual-stack-subnets", SUBNET_TYPE, bad, name="pods-a")
    assert messages == [
        "subnet 'pods-a' IPv4 CIDR '10.0.0.0/29' is not between /16 and /28 as EC2 requires; "
        "pick a prefix length in that range.",
        "subnet 'pods-a' IPv6 CIDR '2600:1f18:abcd::/56' must be a /64 in EC2; "
        "use a /64 from the VPC's IPv6 block.",
    ]


def test_ipv4_only_aws_subnet_is_refused_only_in_ipv6_eni_mode() -> None:
    """ENI-V6-4: with IPv6 ENI mode every ENI subnet must be dual-stack."""
    subnet = {"vpcId": "vpc-1", "cidrBlock": "10.0.2.0/24"}
    assert validate_resource("eni-dual-stack-subnets", AWS_SUBNET_TYPE, subnet, name="legacy") == []
    messages = validate_resource(
        "eni-dual-stack-subnets", AWS_SUBNET_TYPE, subnet, {"ipv6EniMode": True}, name="legacy"
    )
    assert len(messages) == 1
    assert messages[0].startswith("subnet 'legacy' has no IPv6 CIDR but IPv6 ENI mode is on")
    with_v6 = {**subnet, "ipv6CidrBlock": "2600:1f18:abcd:ef02::/64"}
    assert validate_resource("eni-dual-stack-subnets", AWS_SUBNET_TYPE, with_v6, {"ipv6EniMode": True}) == []


def iam(**options: Any) -> dict[str, Any]:
    return {
        "role_name": "cilium-operator",
        "policy_name": "cilium-ipam",
        "path": "/",
        **options,
        "__provider": "pickled",
    }


def test_iam_resource_built_for_the_configured_features_passes() -> None:
    props = iam(release_excess_ips=True, ipv6=True, cluster_name="prod")
    config = {"releaseExcessIps": True, "ipv6EniMode": True}
    assert validate_resource("eni-iam-permissions", IAM_TYPE, props, config) == []


def test_iam_resource_missing_a_configured_feature_is_flagged() -> None:
    """ENI-PERM-1: release-excess needs UnassignPrivateIpAddresses, IPv6 needs AssignIpv6Addresses."""
    messages = validate_resource(
        "eni-iam-permissions",
        IAM_TYPE,
        iam(cluster_name="prod"),
        {"releaseExcessIps": True, "ipv6EniMode": True},
    )
    assert messages == [
        "IAM policy 'cilium-ipam' does not grant ec2:UnassignPrivateIpAddresses, ec2:AssignIpv6Addresses "
        "(needed by ipv6, releaseExcessIps); add these actions or enable the matching options on the "
        "policy resource."
    ]


def aws_policy(actions: list[str]) -> dict[str, Any]:
    document = {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": actions, "Resource": "*"}],
    }
    return {"name": "operator", "policy": json.dumps(document)}


def test_hand_written_aws_policy_documents_are_checked_with_wildcards_understood() -> None:
    complete = aws_policy(required_actions({"instanceTagsFilter": True}))
    config = {"instanceTagsFilter": True}
    assert validate_resource("eni-iam-permissions", "aws:iam/policy:Policy", complete, config) == []
    wildcard = aws_policy(
        ["ec2:Describe*", "ec2:AssignPrivateIpAddresses", "ec2:*NetworkInterface*", "ec2:CreateTags"]
    )
    assert validate_resource("eni-iam-permissions", "aws:iam/policy:Policy", wildcard, config) == []
    partial = aws_policy([a for a in ALWAYS if a != "ec2:CreateTags"])
    messages = validate_resource("eni-iam-permissions", "aws:iam/policy:Policy", partial, config)
    assert len(messages) == 1
    assert (
        "does not grant ec2:CreateTags, ec2:DescribeInstances (needed by instanceTagsFilter)" in messages[0]
    )


def test_unrelated_aws_policies_are_ignored() -> None:
    s3_only = aws_policy(["s3:GetObject"])
    assert validate_resource("eni-iam-permissions", "aws:iam/policy:Policy", s3_only) == []


def test_policy_action_table_agrees_with_the_provider_table() -> None:
    """Two independent ENI-PERM-1 tables (pack and provider) must agree for every feature combination."""
    from provider import iam_actions as provider_iam

    for release in (False, True):
        for ipv6 in (False, True):
            for gc_default in (False, True):
                for tags_filter in (False, True):
                    for static in (False, True):
                        options = provider_iam.IpamPermissionOptions(
                            release_excess_ips=release,
                            ipv6=ipv6,
                            eni_gc=gc_default,
                            instance_tags_filter={"k": "v"} if tags_filter else {},
                            static_ip=static,
                        )
                        ours = required_actions(
                            {
                                "releaseExcessIps": release,
                                "ipv6": ipv6,
                                "gcWithDefaultTags": gc_default,
                                "instanceTagsFilter": tags_filter,
                                "staticIp": static,
                            }
                        )
                        assert sorted(ours) == sorted(provider_iam.required_ec2_actions(options))


def test_generic_dynamic_resources_are_recognised_by_shape() -> None:
    """Fallback for a plain pulumi.dynamic.Resource: subnet and IAM props are recognised by their keys."""
    bad_subnet = dual_stack(cidr_block="10.0.0.0/30")
    assert validate_resource("eni-dual-stack-subnets", DYNAMIC_TYPE, bad_subnet)
    assert validate_resource("eni-iam-permissions", DYNAMIC_TYPE, iam(), {"releaseExcessIps": True})
