"""The EC2 actions the operator needs for a set of features (ENI-PERM-1), and coverage checks.

Written independently of the provider's own list on purpose: the policy is the second opinion.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase

ALWAYS = (
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
)

BY_FEATURE: Mapping[str, tuple[str, ...]] = {
    "gcWithDefaultTags": ("ec2:DescribeTags",),
    "releaseExcessIps": ("ec2:UnassignPrivateIpAddresses",),
    "ipv6": ("ec2:AssignIpv6Addresses",),
    "instanceTagsFilter": ("ec2:DescribeInstances",),
    "staticIp": ("ec2:DescribeAddresses", "ec2:AssociateAddress"),
}

FEATURES = tuple(BY_FEATURE)


def required_actions(features: Mapping[str, bool]) -> list[str]:
    """ENI-PERM-1: the always-needed actions plus those of every enabled feature."""
    actions = list(ALWAYS)
    for feature, extra in BY_FEATURE.items():
        if features.get(feature):
            actions.extend(extra)
    return actions


def missing_actions(required: Iterable[str], granted: Iterable[str]) -> list[str]:
    """Required actions no granted pattern (IAM wildcards allowed, case-insensitive) covers."""
    patterns = [pattern.lower() for pattern in granted]
    return [
        action
        for action in required
        if not any(pattern == "*" or fnmatchcase(action.lower(), pattern) for pattern in patterns)
    ]
