"""ENI-PERM-1: the exact EC2 action list per option combination (pure, no AWS)."""

from __future__ import annotations

import itertools
import json

import pytest

from provider.iam_actions import (
    BASE_ACTIONS,
    IpamPermissionOptions,
    policy_document,
    policy_json,
    required_ec2_actions,
)

BASE = {f"ec2:{a}" for a in BASE_ACTIONS}

# (options, extra actions beyond the always-required twelve) -- written from SPEC ENI-PERM-1 by hand.
TABLE = [
    (IpamPermissionOptions(), {"ec2:DescribeTags"}),
    (IpamPermissionOptions(eni_gc=False), set()),
    (IpamPermissionOptions(cluster_name="prod"), set()),
    (IpamPermissionOptions(eni_gc_tags={"team": "net"}), set()),
    (IpamPermissionOptions(eni_gc=False, release_excess_ips=True), {"ec2:UnassignPrivateIpAddresses"}),
    (IpamPermissionOptions(eni_gc=False, ipv6=True), {"ec2:AssignIpv6Addresses"}),
    (IpamPermissionOptions(eni_gc=False, instance_tags_filter={"k": "v"}), {"ec2:DescribeInstances"}),
    (IpamPermissionOptions(eni_gc=False, static_ip=True), {"ec2:DescribeAddresses", "ec2:AssociateAddress"}),
    (
        IpamPermissionOptions(
            release_excess_ips=True, ipv6=True, instance_tags_filter={"a": "b"}, static_ip=True
        ),
        {
            "ec2:DescribeTags",
            "ec2:UnassignPrivateIpAddresses",
            "ec2:AssignIpv6Addresses",
            "ec2:DescribeInstances",
            "ec2:DescribeAddresses",
            "ec2:AssociateAddress",
        },
    ),
    (IpamPermissionOptions(cluster_name="c", release_excess_ips=True), {"ec2:UnassignPrivateIpAddresses"}),
]


def test_eni_perm_1_base_list_is_the_seed_list() -> None:
    assert BASE == {
        "ec2:DeleteNetworkInterface",
        "ec2:DescribeInstanceTypes",
        "ec2:DescribeNetworkInterfaces",
        "ec2:DescribeSubnets",
        "ec2:DescribeVpcs",
        "ec2:DescribeRouteTables",
        "ec2:DescribeSecurityGroups",
        "ec2:CreateNetworkInterface",
        "ec2:AttachNetworkInterface",
        "ec2:ModifyNetworkInterfaceAttribute",
        "ec2:AssignPrivateIpAddresses",
        "ec2:CreateTags",
    }
    assert len(BASE_ACTIONS) == 12


@pytest.mark.parametrize(("options", "extra"), TABLE)
def test_eni_perm_1_action_list_per_options(options: IpamPermissionOptions, extra: set[str]) -> None:
    actions = required_ec2_actions(options)
    assert set(actions) == BASE | extra
    assert len(actions) == len(set(actions)), "no duplicates"


@pytest.mark.parametrize(
    "flags",
    list(itertools.product([False, True], repeat=6)),
    ids=lambda f: "".join("1" if x else "0" for x in f),
)
def test_eni_perm_1_every_combination_is_exact_and_wildcard_free(flags: tuple[bool, ...]) -> None:
    gc, custom_name, custom_tags, excess, ipv6, static = flags
    options = IpamPermissionOptions(
        eni_gc=gc,
        cluster_name="c" if custom_name else "",
        eni_gc_tags={"x": "y"} if custom_tags else {},
        release_excess_ips=excess,
        ipv6=ipv6,
        static_ip=static,
    )
    expected = set(BASE)
    if gc and not custom_name and not custom_tags:
        expected.add("ec2:DescribeTags")
    if excess:
        expected.add("ec2:UnassignPrivateIpAddresses")
    if ipv6:
        expected.add("ec2:AssignIpv6Addresses")
    if static:
        expected |= {"ec2:DescribeAddresses", "ec2:AssociateAddress"}
    actions = required_ec2_actions(options)
    assert set(actions) == expected
    assert not any("*" in a for a in actions)
    document = json.loads(policy_json(options))
    assert document["Statement"][0]["Action"] == sorted(expected)


def test_policy_document_refuses_wildcards() -> None:
    with pytest.raises(ValueError, match="wildcard"):
        policy_document(("ec2:*",))
