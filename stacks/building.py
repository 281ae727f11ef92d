"""Declare our dynamic resources from typed settings; shared by the eni, multipool and local programs.

Why shared: every program declares pools, node configs and subnets the same way, and the order
matters (node configs after the pools they name, so the provider's missing-pool warning is real).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pulumi

from provider.dual_stack_subnet import DualStackSubnet
from provider.node_config import CiliumNodeConfig
from provider.pod_ip_pool import CiliumPodIPPool
from provider.reconciler_component import DEFAULT_IMAGE, CiliumIpamReconciler

from .settings import NodeConfigSetting, PoolSetting, SubnetSetting

POD_SUBNET_TAG = "cilium-ipam/pod-subnet"
OPERATOR_NAME = "cilium-ipam-operator"  # also the ServiceAccount name the IRSA trust policy names


def declare_pools(
    pools: Sequence[PoolSetting], parent: pulumi.Resource | None = None
) -> list[CiliumPodIPPool]:
    """One CiliumPodIPPool per setting, named `pool-<name>` in the stack."""
    return [
        CiliumPodIPPool(
            f"pool-{pool.name}",
            name=pool.name,
            ipv4_cidrs=list(pool.ipv4_cidrs) or None,
            ipv4_mask_size=pool.ipv4_mask_size,
            ipv6_cidrs=list(pool.ipv6_cidrs) or None,
            ipv6_mask_size=pool.ipv6_mask_size,
            allow_first_ip=pool.allow_first_ip,
            allow_last_ip=pool.allow_last_ip,
            opts=pulumi.ResourceOptions(parent=parent),
        )
        for pool in pools
    ]


def declare_node_configs(
    configs: Sequence[NodeConfigSetting], pools: Sequence[pulumi.Resource]
) -> list[CiliumNodeConfig]:
    """One CiliumNodeConfig per setting, created after every pool (MP-NODE-1 defaults name them)."""
    return [
        CiliumNodeConfig(
            f"node-config-{config.namespace}-{config.name}",
            name=config.name,
            namespace=config.namespace,
            defaults=dict(config.defaults),
            node_selector=dict(config.node_selector),
            opts=pulumi.ResourceOptions(depends_on=list(pools)),
        )
        for config in configs
    ]


def declare_subnets(
    subnets: Sequence[SubnetSetting],
    vpc_id: pulumi.Input[str],
    cluster_tags: Mapping[str, str],
    opts: pulumi.ResourceOptions | None = None,
) -> list[DualStackSubnet]:
    """Dual-stack pod subnets (ENI-V6-4) tagged for the cluster and for `subnet-tags` selection."""
    return [
        DualStackSubnet(
            f"subnet-{subnet.name}",
            vpc_id=vpc_id,
            cidr_block=subnet.cidr,
            availability_zone=subnet.availability_zone,
            ipv6_cidr_block=subnet.ipv6_cidr,
            tags={"Name": subnet.name, **cluster_tags, **subnet.tags},
            opts=opts,
        )
        for subnet in subnets
    ]


def cluster_tags(cluster_name: str) -> dict[str, str]:
    """Tags that mark a subnet as a pod subnet of this cluster (used as `eni.subnet-tags`)."""
    return {POD_SUBNET_TAG: cluster_name}


def multi_pool_flags(pre_allocation: Mapping[str, int]) -> list[str]:
    """Operator flags for multi-pool mode (MP-CFG-1) with the MP-PRE-1 pre-allocation map, if any."""
    flags = ["--ipam=multi-pool"]
    if pre_allocation:
        entries = ",".join(f"{pool}={count}" for pool, count in sorted(pre_allocation.items()))
        flags.append(f"--ipam-multi-pool-pre-allocation={entries}")
    return flags


def eni_flags(cluster_name: str, release_excess_ips: bool, prefix_delegation: bool) -> list[str]:
    """Operator flags for ENI mode (ENI-CFG-1/2): explicit cluster name so GC tags need no lookup."""
    return [
        "--ipam=eni",
        f"--cluster-name={cluster_name}",
        f"--aws-release-excess-ips={str(release_excess_ips).lower()}",
        f"--aws-enable-prefix-delegation={str(prefix_delegation).lower()}",
        "--enable-metrics=true",
    ]


def declare_reconciler(
    flags: Sequence[str],
    namespace: str,
    image: str | None,
    role_arn: pulumi.Input[str] | None = None,
    depends_on: Sequence[pulumi.Resource] = (),
) -> CiliumIpamReconciler:
    """The operator Deployment (and RBAC, IRSA ServiceAccount) once its configuration exists."""
    return CiliumIpamReconciler(
        OPERATOR_NAME,
        namespace=namespace,
        role_arn=role_arn,
        operator_flags=list(flags),
        image=image or DEFAULT_IMAGE,
        opts=pulumi.ResourceOptions(depends_on=list(depends_on)),
    )
