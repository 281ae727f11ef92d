"""The least-privilege EC2 action list of the operator (ENI-PERM-1), as a pure function.

Why a separate pure module: the policy document is what security reviewers read, and the exact list
per option combination is tested as a table without any AWS endpoint.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# ENI-PERM-1, always required, in the order the seed lists them.
BASE_ACTIONS: tuple[str, ...] = (
    "DeleteNetworkInterface",
    "DescribeInstanceTypes",
    "DescribeNetworkInterfaces",
    "DescribeSubnets",
    "DescribeVpcs",
    "DescribeRouteTables",
    "DescribeSecurityGroups",
    "CreateNetworkInterface",
    "AttachNetworkInterface",
    "ModifyNetworkInterfaceAttribute",
    "AssignPrivateIpAddresses",
    "CreateTags",
)


@dataclass(frozen=True)
class IpamPermissionOptions:
    """The operator options that change which EC2 actions it needs (names follow the Cilium flags)."""

    release_excess_ips: bool = False  # --aws-release-excess-ips
    ipv6: bool = False  # IPv6 / dual-stack enabled
    eni_gc: bool = True  # --eni-gc-interval != 0
    cluster_name: str = ""  # --cluster-name ("" = not set)
    eni_gc_tags: Mapping[str, str] = field(default_factory=dict)  # --eni-gc-tags (custom)
    instance_tags_filter: Mapping[str, str] = field(default_factory=dict)  # --instance-tags-filter
    static_ip: bool = False  # static-ip-tags used on some node (ENI-PARAM-9)

    @property
    def gc_with_default_tags(self) -> bool:
        """GC on and the GC tags derived from defaults: the operator must look up its own cluster name."""
        return self.eni_gc and not self.cluster_name and not self.eni_gc_tags

    @classmethod
    def from_props(cls, props: Mapping[str, Any]) -> IpamPermissionOptions:
        return cls(
            release_excess_ips=bool(props.get("release_excess_ips", False)),
            ipv6=bool(props.get("ipv6", False)),
            eni_gc=bool(props.get("eni_gc", True)),
            cluster_name=str(props.get("cluster_name") or ""),
            eni_gc_tags=dict(props.get("eni_gc_tags") or {}),
            instance_tags_filter=dict(props.get("instance_tags_filter") or {}),
            static_ip=bool(props.get("static_ip", False)),
        )


def required_ec2_actions(options: IpamPermissionOptions) -> tuple[str, ...]:
    """The exact `ec2:` actions ENI-PERM-1 requires for `options` -- never a wildcard."""
    actions = list(BASE_ACTIONS)
    if options.gc_with_default_tags:
        actions.append("DescribeTags")
    if options.release_excess_ips:
        actions.append("UnassignPrivateIpAddresses")
    if options.ipv6:
        actions.append("AssignIpv6Addresses")
    if options.instance_tags_filter:
        actions.append("DescribeInstances")
    if options.static_ip:
        actions.extend(("DescribeAddresses", "AssociateAddress"))
    return tuple(f"ec2:{name}" for name in actions)


def policy_document(actions: tuple[str, ...]) -> dict[str, Any]:
    """An IAM policy document allowing exactly `actions` (EC2 ENI actions take no resource ARNs here)."""
    if any("*" in action for action in actions):
        raise ValueError("wildcard actions are never allowed in the cilium-ipam policy (ENI-PERM-1)")
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "CiliumIpamEni",
                "Effect": "Allow",
                "Action": sorted(actions),
                "Resource": "*",
            }
        ],
    }


def policy_json(options: IpamPermissionOptions) -> str:
    """The canonical JSON text of the policy for `options` (stable key order, so diffs are exact)."""
    return json.dumps(policy_document(required_ec2_actions(options)), sort_keys=True, separators=(",", ":"))
