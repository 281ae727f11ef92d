"""Checks on ENI-mode resources: watermarks (ENI-PARAM-1), dual-stack subnets (ENI-V6-4), IAM (ENI-PERM-1).

Pure functions over the views; each returns one sentence per problem naming the object and the fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .cidr import CidrProblem, parse_cidr
from .iam_actions import BY_FEATURE, FEATURES, missing_actions, required_actions
from .values import as_int
from .views import IamView, SubnetView, WatermarksView

EC2_IPV4_SUBNET_PREFIX = (16, 28)  # EC2-SIM-2
EC2_IPV6_SUBNET_PREFIX = 64


def watermark_problems(view: WatermarksView) -> list[str]:
    """pre/min/max-allocate and max-above-watermark are non-negative and max-allocate caps the others."""
    subject = f"CNI configuration '{view.name}'"
    numbers: dict[str, int] = {}
    problems: list[str] = []
    for key, raw in view.values.items():
        value = as_int(raw)
        if value is None or value < 0:
            shown = value if value is not None else repr(raw)
            problems.append(f"{subject} ipam.{key} is {shown}; set it to a whole number of 0 or more.")
        else:
            numbers[key] = value
    maximum = numbers.get("max-allocate", 0)
    if maximum > 0:
        for key in ("min-allocate", "pre-allocate"):
            if numbers.get(key, 0) > maximum:
                problems.append(
                    f"{subject} ipam.{key} {numbers[key]} exceeds ipam.max-allocate {maximum}, so the node "
                    f"can never reach it; raise max-allocate to at least {numbers[key]} or lower {key}."
                )
    return problems


def subnet_problems(view: SubnetView, ipv6_eni_mode: bool) -> list[str]:
    """ENI subnets: canonical IPv4 /16../28, an IPv6 /64 when given, and dual-stack in IPv6 mode."""
    subject = f"subnet '{view.name}'"
    problems: list[str] = []
    low, high = EC2_IPV4_SUBNET_PREFIX
    if isinstance(view.ipv4_cidr, str):
        parsed = parse_cidr(view.ipv4_cidr, "ipv4")
        if isinstance(parsed, CidrProblem):
            fix = f"write '{parsed.suggestion}' instead" if parsed.suggestion else "fix it"
            problems.append(f"{subject} IPv4 CIDR '{parsed.text}' {parsed.reason}; {fix}.")
        elif not low <= parsed.prefixlen <= high:
            problems.append(
                f"{subject} IPv4 CIDR '{parsed}' is not between /{low} and /{high} as EC2 requires; "
                "pick a prefix length in that range."
            )
    if isinstance(view.ipv6_cidr, str):
        parsed6 = parse_cidr(view.ipv6_cidr, "ipv6")
        if isinstance(parsed6, CidrProblem):
            fix = f"write '{parsed6.suggestion}' instead" if parsed6.suggestion else "fix it"
            problems.append(f"{subject} IPv6 CIDR '{parsed6.text}' {parsed6.reason}; {fix}.")
        elif parsed6.prefixlen != EC2_IPV6_SUBNET_PREFIX:
            problems.append(
                f"{subject} IPv6 CIDR '{parsed6}' must be a /64 in EC2; use a /64 from the VPC's IPv6 block."
            )
    if ipv6_eni_mode and not view.wants_ipv6:
        problems.append(
            f"{subject} has no IPv6 CIDR but IPv6 ENI mode is on and every ENI subnet must be dual-stack "
            "(ENI-V6-4); give it a /64 from the VPC's IPv6 block (e.g. declare it as a DualStackSubnet)."
        )
    return problems


def iam_problems(view: IamView, config: Mapping[str, Any]) -> list[str]:
    """ENI-PERM-1: the policy grants every action the configured (or its own) features need."""
    enabled = {
        feature: bool(config.get(feature)) or bool(view.features.get(feature)) for feature in FEATURES
    }
    enabled["ipv6"] = enabled["ipv6"] or bool(config.get("ipv6EniMode"))
    granted = view.granted if view.granted is not None else tuple(required_actions(view.features))
    missing = missing_actions(required_actions(enabled), granted)
    if not missing:
        return []
    reasons = sorted({f for f in FEATURES if enabled[f] and set(BY_FEATURE[f]) & set(missing)})
    because = f" (needed by {', '.join(reasons)})" if reasons else ""
    return [
        f"IAM policy '{view.name}' does not grant {', '.join(missing)}{because}; "
        "add these actions or enable the matching options on the policy resource."
    ]
