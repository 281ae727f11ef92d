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

from .settings import NodeConfigSetting, PoolSetting, SubnetSetting

POD_SUBNET_TAG = "cilium-ipam/pod-subnet"


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
