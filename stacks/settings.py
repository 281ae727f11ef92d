"""Typed stack settings parsed from Pulumi config values (plain dicts): pure, so tests need no engine.

Pool and node-config settings use the CRD's own JSON keys (`ipv4.cidrs`, `maskSize`, `nodeSelector`,
`defaults`) so users can paste examples from Cilium's documentation into their stack config.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

DEFAULT_NAMESPACE = "kube-system"
ZONE_LABEL = "topology.kubernetes.io/zone"
DEFAULT_POOL_KEY = "ipam-default-ip-pool"


class SettingsError(ValueError):
    """A stack config value is malformed; the message names the key and the fix."""


@dataclass(frozen=True)
class PoolSetting:
    """One CiliumPodIPPool to declare."""

    name: str
    ipv4_cidrs: tuple[str, ...] = ()
    ipv4_mask_size: int | None = None
    ipv6_cidrs: tuple[str, ...] = ()
    ipv6_mask_size: int | None = None
    allow_first_ip: bool = False
    allow_last_ip: bool = False


@dataclass(frozen=True)
class NodeConfigSetting:
    """One CiliumNodeConfig to declare: defaults such as the per-node default pool, and a selector."""

    name: str
    defaults: Mapping[str, str]
    node_selector: Mapping[str, Any]
    namespace: str = DEFAULT_NAMESPACE


@dataclass(frozen=True)
class SubnetSetting:
    """One dual-stack subnet: IPv4 CIDR, zone, and optionally an explicit IPv6 /64."""

    name: str
    cidr: str
    availability_zone: str | None = None
    ipv6_cidr: str | None = None
    tags: Mapping[str, str] = field(default_factory=dict)


def _mapping(value: Any, key: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise SettingsError(f"config `{key}` must be an object, got {type(value).__name__}.")
    return value


def _int(value: Any, key: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise SettingsError(f"config `{key}` must be a whole number, got {value!r}.")
    return value


def _strings(value: Any, key: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise SettingsError(f"config `{key}` must be a list of strings, got {value!r}.")
    return tuple(value)


def pools_from_config(raw: Any) -> list[PoolSetting]:
    """`pools: {name: {ipv4: {cidrs, maskSize}, ipv6: {...}, allowFirstIP, allowLastIP}}`, sorted by name."""
    pools = []
    for name, body in sorted(_mapping(raw, "pools").items()):
        body = _mapping(body, f"pools.{name}")
        ipv4 = _mapping(body.get("ipv4"), f"pools.{name}.ipv4")
        ipv6 = _mapping(body.get("ipv6"), f"pools.{name}.ipv6")
        if not ipv4 and not ipv6:
            raise SettingsError(f"config `pools.{name}` needs ipv4 and/or ipv6 with cidrs and maskSize.")
        pools.append(
            PoolSetting(
                name=str(name),
                ipv4_cidrs=_strings(ipv4.get("cidrs"), f"pools.{name}.ipv4.cidrs"),
                ipv4_mask_size=_int(ipv4.get("maskSize"), f"pools.{name}.ipv4.maskSize"),
                ipv6_cidrs=_strings(ipv6.get("cidrs"), f"pools.{name}.ipv6.cidrs"),
                ipv6_mask_size=_int(ipv6.get("maskSize"), f"pools.{name}.ipv6.maskSize"),
                allow_first_ip=bool(body.get("allowFirstIP", False)),
                allow_last_ip=bool(body.get("allowLastIP", False)),
            )
        )
    return pools


def node_configs_from_config(raw: Any) -> list[NodeConfigSetting]:
    """`nodeConfigs: {name: {namespace, defaults, nodeSelector}}`; `defaultPool` is a shorthand."""
    configs = []
    for name, body in sorted(_mapping(raw, "nodeConfigs").items()):
        body = _mapping(body, f"nodeConfigs.{name}")
        defaults = {
            str(k): str(v) for k, v in _mapping(body.get("defaults"), f"nodeConfigs.{name}.defaults").items()
        }
        if body.get("defaultPool") is not None:
            defaults[DEFAULT_POOL_KEY] = str(body["defaultPool"])
        if "nodeSelector" not in body:
            raise SettingsError(
                f"config `nodeConfigs.{name}` needs a nodeSelector (an absent selector matches no node)."
            )
        configs.append(
            NodeConfigSetting(
                name=str(name),
                defaults=defaults,
                node_selector=dict(_mapping(body["nodeSelector"], f"nodeConfigs.{name}.nodeSelector")),
                namespace=str(body.get("namespace", DEFAULT_NAMESPACE)),
            )
        )
    return configs


def subnets_from_config(raw: Any) -> list[SubnetSetting]:
    """`subnets: [{name, cidr, availabilityZone, ipv6Cidr, tags}]`."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise SettingsError("config `subnets` must be a list of {name, cidr, availabilityZone} objects.")
    subnets = []
    for index, body in enumerate(raw):
        body = _mapping(body, f"subnets[{index}]")
        if not isinstance(body.get("cidr"), str):
            raise SettingsError(f"config `subnets[{index}]` needs a `cidr` such as 10.0.1.0/24.")
        subnets.append(
            SubnetSetting(
                name=str(body.get("name") or f"pods-{index}"),
                cidr=body["cidr"],
                availability_zone=body.get("availabilityZone"),
                ipv6_cidr=body.get("ipv6Cidr"),
                tags={
                    str(k): str(v) for k, v in _mapping(body.get("tags"), f"subnets[{index}].tags").items()
                },
            )
        )
    return subnets


def seed_dc_pools() -> list[PoolSetting]:
    """The multi-pool seed's per-datacenter example: dc1 -> 10.1.0.0/16, dc2 -> 10.2.0.0/16, /24 blocks."""
    return [
        PoolSetting("dc1-pool", ipv4_cidrs=("10.1.0.0/16",), ipv4_mask_size=24),
        PoolSetting("dc2-pool", ipv4_cidrs=("10.2.0.0/16",), ipv4_mask_size=24),
    ]


def seed_dc_node_configs() -> list[NodeConfigSetting]:
    """The seed's CiliumNodeConfigs: nodes in zone dcN default to dcN-pool (MP-NODE-1)."""
    return [
        NodeConfigSetting(
            f"ip-pool-{dc}", {DEFAULT_POOL_KEY: f"{dc}-pool"}, {"matchLabels": {ZONE_LABEL: dc}}
        )
        for dc in ("dc1", "dc2")
    ]
