"""`local`: only our dynamic resources, so it runs end to end against moto + a kube-apiserver.

Config (namespace `cilium-ipam`): `vpcId` (a VPC with an IPv6 block), `roleName` (an existing IAM
role), `subnets`, `pools`, `nodeConfigs`, `iam`, `ipam`, `clusterName`, `namespace` (of the CNI
ConfigMap); connection settings
`endpointUrl`, `region`, `kubeconfig` are read by the providers themselves.
"""

from __future__ import annotations

from typing import Any

import pulumi

from provider.cni_configuration import CniConfiguration, EniOptions, IpamOptions
from provider.ec2_tags import Ec2Tags
from provider.ipam_iam_policy import IpamIamPolicy

from ..building import cluster_tags, declare_node_configs, declare_pools, declare_subnets
from ..settings import (
    node_configs_from_config,
    pools_from_config,
    seed_dc_node_configs,
    seed_dc_pools,
    subnets_from_config,
)

IAM_OPTION_KEYS = {
    "releaseExcessIps": "release_excess_ips",
    "ipv6": "ipv6",
    "eniGc": "eni_gc",
    "staticIp": "static_ip",
}
IPAM_OPTION_KEYS = {
    "pre-allocate": "pre_allocate",
    "min-allocate": "min_allocate",
    "max-allocate": "max_allocate",
    "max-above-watermark": "max_above_watermark",
}


def iam_options(raw: Any) -> dict[str, Any]:
    """IpamIamPolicy keyword arguments from the `iam` config object (camelCase keys)."""
    raw = raw or {}
    return {python: raw[key] for key, python in IAM_OPTION_KEYS.items() if key in raw}


def ipam_options(raw: Any) -> IpamOptions:
    """CNI `ipam` watermarks from the `ipam` config object (Cilium's hyphenated keys)."""
    raw = raw or {}
    return IpamOptions(**{python: raw[key] for key, python in IPAM_OPTION_KEYS.items() if key in raw})


def main() -> dict[str, Any]:
    """Declare subnets, VPC tags, the operator IAM policy, the CNI ConfigMap, pools and node configs."""
    config = pulumi.Config("cilium-ipam")
    cluster = config.get("clusterName") or "local"
    vpc_id = config.require("vpcId")
    tags = cluster_tags(cluster)

    subnets = declare_subnets(subnets_from_config(config.get_object("subnets")), vpc_id, tags)
    vpc_tags = Ec2Tags(
        "vpc-cluster-tags", resource_id=vpc_id, tags={f"kubernetes.io/cluster/{cluster}": "shared"}
    )
    policy = IpamIamPolicy(
        "operator-policy",
        role_name=config.require("roleName"),
        policy_name=f"cilium-ipam-{cluster}",
        cluster_name=cluster,
        **iam_options(config.get_object("iam")),
    )
    cni = CniConfiguration(
        "cni-configuration",
        namespace=config.get("namespace") or "kube-system",
        eni=EniOptions(subnet_tags=tags, first_interface_index=config.get_int("firstInterfaceIndex")),
        ipam=ipam_options(config.get_object("ipam")),
    )
    pool_settings = pools_from_config(config.get_object("pools")) or seed_dc_pools()
    node_settings = (
        node_configs_from_config(config.get_object("nodeConfigs"))
        if config.get_object("nodeConfigs") is not None
        else seed_dc_node_configs()
    )
    pools = declare_pools(pool_settings)
    node_configs = declare_node_configs(node_settings, pools)

    outputs: dict[str, Any] = {
        "subnetIds": [subnet.subnet_id for subnet in subnets],
        "subnetIpv6Cidrs": [subnet.ipv6_cidr_block_assigned for subnet in subnets],
        "vpcTags": vpc_tags.tags,
        "policyArn": policy.policy_arn,
        "policyActions": policy.actions,
        "cniConfig": cni.cni_config,
        "pools": [pool.name for pool in pool_settings],
        "nodeConfigs": [f"{c.namespace}/{c.name}" for c in node_settings],
        "nodeConfigWarnings": [node_config.warnings for node_config in node_configs],
    }
    for key, value in outputs.items():
        pulumi.export(key, value)
    return outputs
