"""Pure planning for the `eni` program: subnet layout per zone and the IRSA trust policy.

Kept out of program.py so both are tested without any engine or mock.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Sequence

from ..settings import SettingsError, SubnetSetting

DEFAULT_VPC_CIDR = "10.0.0.0/16"
DEFAULT_SUBNET_PREFIX = 19  # 8 zones fit a /16; 8,187 usable addresses each (EC2 reserves 5)


def zone_subnets(
    vpc_cidr: str, zones: Sequence[str], prefix: int = DEFAULT_SUBNET_PREFIX
) -> list[SubnetSetting]:
    """One pod subnet per zone, the first `/prefix` blocks of the VPC CIDR in zone order."""
    try:
        vpc = ipaddress.IPv4Network(vpc_cidr)
    except ValueError:
        raise SettingsError(
            f"config `vpcCidr` {vpc_cidr!r} is not a canonical IPv4 CIDR such as 10.0.0.0/16."
        ) from None
    if not 16 <= prefix <= 28 or prefix < vpc.prefixlen:
        raise SettingsError(
            f"config `subnetPrefix` {prefix} must be between /16 and /28 and inside the VPC {vpc_cidr}."
        )
    blocks = vpc.subnets(new_prefix=prefix)
    layout = []
    for zone in zones:
        block = next(blocks, None)
        if block is None:
            raise SettingsError(
                f"the VPC {vpc_cidr} has room for fewer than {len(zones)} /{prefix} subnets; "
                "use a larger vpcCidr or a longer subnetPrefix."
            )
        layout.append(SubnetSetting(name=f"pods-{zone}", cidr=str(block), availability_zone=zone))
    return layout


def irsa_trust_policy(oidc_provider_arn: str, oidc_issuer: str, namespace: str, service_account: str) -> str:
    """The role trust policy that lets exactly one Kubernetes service account assume the role (IRSA)."""
    issuer = oidc_issuer.removeprefix("https://").rstrip("/")
    document = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Federated": oidc_provider_arn},
                "Action": "sts:AssumeRoleWithWebIdentity",
                "Condition": {
                    "StringEquals": {
                        f"{issuer}:sub": f"system:serviceaccount:{namespace}:{service_account}",
                        f"{issuer}:aud": "sts.amazonaws.com",
                    }
                },
            }
        ],
    }
    return json.dumps(document, sort_keys=True)
