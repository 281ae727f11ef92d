"""`eni`: Cilium AWS ENI mode on real AWS.

A VPC with an Amazon-provided IPv6 /56, one dual-stack pod subnet per zone (ENI-V6-4), cluster and
selection tags, a pod security group, the operator's IAM role for its service account (IRSA) with
the least-privilege ENI-PERM-1 policy, the CNI ConfigMap (ENI-ARCH-2) and the reconciler.

Config (namespace `cilium-ipam`): `clusterName`, `availabilityZones` (list), `vpcCidr`,
`subnetPrefix`, `oidcProviderArn`, `oidcIssuer`, `operatorNamespace`, `iam` options, `ipam`
watermarks, `firstInterfaceIndex`, `prefixDelegation`, `operatorImage`, and `aws:region`.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_aws as aws

from provider.cni_configuration import CniConfiguration, EniOptions
from provider.ec2_tags import Ec2Tags
from provider.ipam_iam_policy import IpamIamPolicy

from ..building import OPERATOR_NAME, cluster_tags, declare_reconciler, declare_subnets, eni_flags
from ..local.program import iam_options, ipam_options
from .plan import DEFAULT_SUBNET_PREFIX, DEFAULT_VPC_CIDR, irsa_trust_policy, zone_subnets

POD_SECURITY_GROUP_TAG = "cilium-ipam/pod-security-group"


def main() -> dict[str, Any]:
    """Declare the network, IAM and Cilium configuration of an ENI-mode cluster."""
    config = pulumi.Config("cilium-ipam")
    cluster = config.get("clusterName") or "cilium"
    namespace = config.get("operatorNamespace") or "kube-system"
    zones = config.get_object("availabilityZones") or ["us-east-1a", "us-east-1b"]
    vpc_cidr = config.get("vpcCidr") or DEFAULT_VPC_CIDR
    layout = zone_subnets(vpc_cidr, zones, config.get_int("subnetPrefix") or DEFAULT_SUBNET_PREFIX)
    tags = cluster_tags(cluster)
    options = iam_options(config.get_object("iam"))
    ipv6 = bool(options.get("ipv6", False))

    vpc = aws.ec2.Vpc(
        "vpc",
        cidr_block=vpc_cidr,
        assign_generated_ipv6_cidr_block=True,  # Amazon-provided /56
        enable_dns_hostnames=True,
        enable_dns_support=True,
        tags={"Name": f"{cluster}-vpc", f"kubernetes.io/cluster/{cluster}": "shared"},
    )
    subnets = declare_subnets(layout, vpc.id, tags, opts=pulumi.ResourceOptions(depends_on=[vpc]))
    security_group = aws.ec2.SecurityGroup(
        "pod-security-group",
        vpc_id=vpc.id,
        description=f"Pods of cluster {cluster} (Cilium ENIs)",
        egress=[
            aws.ec2.SecurityGroupEgressArgs(
                protocol="-1", from_port=0, to_port=0, cidr_blocks=["0.0.0.0/0"], ipv6_cidr_blocks=["::/0"]
            )
        ],
    )
    sg_tags = Ec2Tags(
        "pod-security-group-tags", resource_id=security_group.id, tags={POD_SECURITY_GROUP_TAG: cluster}
    )

    role = aws.iam.Role(
        "operator-role",
        assume_role_policy=pulumi.Output.all(
            config.require("oidcProviderArn"), config.require("oidcIssuer")
        ).apply(lambda args: irsa_trust_policy(args[0], args[1], namespace, OPERATOR_NAME)),
        description=f"cilium-ipam operator of cluster {cluster} (IRSA)",
    )
    policy = IpamIamPolicy(
        "operator-policy",
        role_name=role.name,
        policy_name=f"cilium-ipam-{cluster}",
        cluster_name=cluster,
        **options,
    )
    cni = CniConfiguration(
        "cni-configuration",
        namespace=namespace,
        eni=EniOptions(
            subnet_tags=tags,
            security_group_tags={POD_SECURITY_GROUP_TAG: cluster},
            first_interface_index=config.get_int("firstInterfaceIndex"),
        ),
        ipam=ipam_options(config.get_object("ipam")),
    )

    flags = eni_flags(
        cluster, bool(options.get("release_excess_ips")), bool(config.get_bool("prefixDelegation"))
    )
    reconciler = declare_reconciler(
        flags, namespace, config.get("operatorImage"), role_arn=role.arn, depends_on=[policy, cni]
    )

    outputs: dict[str, Any] = {
        "vpcId": vpc.id,
        "vpcIpv6CidrBlock": vpc.ipv6_cidr_block,
        "subnetIds": [subnet.subnet_id for subnet in subnets],
        "securityGroupId": security_group.id,
        "securityGroupTags": sg_tags.tags,
        "operatorRoleArn": role.arn,
        "policyArn": policy.policy_arn,
        "cniConfig": cni.cni_config,
        "ipv6": ipv6,
        "operatorServiceAccount": reconciler.service_account_name,
        "operatorFlags": flags,
    }
    for key, value in outputs.items():
        pulumi.export(key, value)
    return outputs
