"""`multipool`: Cilium multi-pool IPAM with per-datacenter default pools (seed 001's dc1/dc2 example).

Declares a `default` pool, one pool per datacenter and a CiliumNodeConfig per datacenter whose
`ipam-default-ip-pool` sends that datacenter's nodes to its own pool (MP-NODE-1), then the reconciler.

Config (namespace `cilium-ipam`): `pools` and `nodeConfigs` (CRD-shaped; default: the seed
example plus `default`), `preAllocation` (MP-PRE-1 map, default `default: 8`), `operatorNamespace`,
`operatorImage`.
"""

from __future__ import annotations

from typing import Any

import pulumi

from ..building import declare_node_configs, declare_pools, declare_reconciler, multi_pool_flags
from ..settings import (
    PoolSetting,
    node_configs_from_config,
    pools_from_config,
    seed_dc_node_configs,
    seed_dc_pools,
)

DEFAULT_POOL = PoolSetting("default", ipv4_cidrs=("10.0.0.0/16",), ipv4_mask_size=24)


def pool_settings(raw: Any) -> list[PoolSetting]:
    """Configured pools, else the seed's dc1/dc2 pools plus the `default` pool every node falls back to."""
    return pools_from_config(raw) if raw is not None else [DEFAULT_POOL, *seed_dc_pools()]


def main() -> dict[str, Any]:
    """Declare pools, per-DC CiliumNodeConfigs and the multi-pool reconciler."""
    config = pulumi.Config("cilium-ipam")
    pools_config = pool_settings(config.get_object("pools"))
    raw_node_configs = config.get_object("nodeConfigs")
    node_config_settings = (
        node_configs_from_config(raw_node_configs) if raw_node_configs is not None else seed_dc_node_configs()
    )
    pools = declare_pools(pools_config)
    node_configs = declare_node_configs(node_config_settings, pools)
    pre_allocation = config.get_object("preAllocation") or {"default": 8}
    flags = multi_pool_flags(pre_allocation)
    reconciler = declare_reconciler(
        flags,
        config.get("operatorNamespace") or "kube-system",
        config.get("operatorImage"),
        depends_on=[*pools, *node_configs],
    )

    outputs: dict[str, Any] = {
        "pools": [pool.name for pool in pools_config],
        "poolCidrs": {pool.name: [*pool.ipv4_cidrs, *pool.ipv6_cidrs] for pool in pools_config},
        "nodeConfigs": [f"{c.namespace}/{c.name}" for c in node_config_settings],
        "nodeConfigWarnings": [node_config.warnings for node_config in node_configs],
        "operatorServiceAccount": reconciler.service_account_name,
        "operatorFlags": flags,
    }
    for key, value in outputs.items():
        pulumi.export(key, value)
    return outputs
