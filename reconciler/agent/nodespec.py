"""The CiliumNode spec an ENI-mode agent creates for its node (ENI-ARCH-2).

Sources, lowest precedence first:
1. EC2 instance metadata: instance ID, instance type, VPC, availability zone, node subnet;
2. Helm values `eni.nodeSpec.*` and `ipam.nodeSpec.*` (camelCase, as passed with `--set`);
3. the custom CNI configuration (ConfigMap `cni-configuration`, key `cni-config`): sections `eni` and
   `ipam` with the CiliumNode JSON keys. The same field set in Helm and in the CNI config: CNI wins.

`resolve_node_spec(...)` returns the `EniSpec` / `IpamSpec` views plus where each field came from; a
malformed value raises `NodeSpecError` with one sentence naming the field and the fix.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from reconciler.model import EniSpec, IpamSpec

HELM_ENI_KEYS = {
    "firstInterfaceIndex": "first-interface-index",
    "subnetIDs": "subnet-ids",
    "subnetTags": "subnet-tags",
    "securityGroups": "security-groups",
    "securityGroupTags": "security-group-tags",
    "excludeInterfaceTags": "exclude-interface-tags",
    "usePrimaryAddress": "use-primary-address",
    "disablePrefixDelegation": "disable-prefix-delegation",
    "deleteOnTermination": "delete-on-termination",
}
HELM_IPAM_KEYS = {
    "ipamMinAllocate": "min-allocate",
    "ipamPreAllocate": "pre-allocate",
    "ipamMaxAllocate": "max-allocate",
    "ipamMaxAboveWatermark": "max-above-watermark",
    "ipamStaticIPTags": "static-ip-tags",
}
LIST_KEYS = {"subnet-ids", "security-groups"}
MAP_KEYS = {"subnet-tags", "security-group-tags", "exclude-interface-tags", "static-ip-tags"}
BOOL_KEYS = {"use-primary-address", "disable-prefix-delegation", "delete-on-termination"}
INT_KEYS = {"first-interface-index", "min-allocate", "pre-allocate", "max-allocate", "max-above-watermark"}
ENI_FIELDS = set(HELM_ENI_KEYS.values())
IPAM_FIELDS = set(HELM_IPAM_KEYS.values())


class NodeSpecError(ValueError):
    """A malformed node-spec value; one sentence naming the field and the fix."""


@dataclass(frozen=True)
class InstanceMetadata:
    instance_id: str
    instance_type: str = ""
    vpc_id: str = ""
    availability_zone: str = ""
    subnet_id: str = ""


@dataclass(frozen=True)
class NodeSpec:
    instance_id: str
    eni: EniSpec
    ipam: IpamSpec
    sources: Mapping[str, str] = field(default_factory=dict)  # "eni.subnet-tags" -> "helm" | "cni"


def _as_list(value: Any, where: str) -> list[str]:
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list | tuple):
        return [str(v) for v in value]
    raise NodeSpecError(f"{where} must be a list of strings, got {value!r}.")


def _as_map(value: Any, where: str) -> dict[str, str]:
    if isinstance(value, Mapping):
        return {str(k): str(v) for k, v in value.items()}
    items = _as_list(value, where) if isinstance(value, str | list | tuple) else None
    if items is None:
        raise NodeSpecError(f"{where} must be a map of tags, got {value!r}.")
    out: dict[str, str] = {}
    for item in items:
        k, sep, v = item.partition("=")
        if not sep or not k:
            raise NodeSpecError(f"{where} entry {item!r} is not key=value; write e.g. {{foo=bar}}.")
        out[k.strip()] = v.strip()
    return out


def _coerce(key: str, value: Any, where: str) -> Any:
    if key in LIST_KEYS:
        return _as_list(value, where)
    if key in MAP_KEYS:
        return _as_map(value, where)
    if key in BOOL_KEYS:
        if isinstance(value, bool):
            return value
        if str(value).lower() in ("true", "false"):
            return str(value).lower() == "true"
        raise NodeSpecError(f"{where} must be true or false, got {value!r}.")
    if isinstance(value, bool) or not str(value).strip().removeprefix("-").isdecimal():
        raise NodeSpecError(f"{where} must be a whole number, got {value!r}.")
    number = int(str(value).strip())
    if number < 0:
        raise NodeSpecError(f"{where} must be >= 0, got {number}.")
    return number


def _helm_section(values: Mapping[str, Any], top: str, keys: Mapping[str, str]) -> dict[str, Any]:
    section = ((values.get(top) or {}).get("nodeSpec")) or {}
    out: dict[str, Any] = {}
    for name, raw in section.items():
        if name not in keys:
            raise NodeSpecError(
                f"Helm value {top}.nodeSpec.{name} is unknown; use one of {', '.join(sorted(keys))}."
            )
        if raw is None or raw == "" or raw == [] or raw == {}:
            continue
        out[keys[name]] = _coerce(keys[name], raw, f"Helm value {top}.nodeSpec.{name}")
    return out


def cni_sections(cni_config: str | Mapping[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The `eni` and `ipam` sections of a CNI config (a plugin list or a single plugin)."""
    if cni_config is None or cni_config == "":
        return {}, {}
    if isinstance(cni_config, str):
        try:
            conf = json.loads(cni_config)
        except json.JSONDecodeError as exc:
            raise NodeSpecError(
                f"cni-config is not valid JSON ({exc.msg} at line {exc.lineno}); fix the ConfigMap."
            ) from None
    else:
        conf = dict(cni_config)
    plugin = conf
    for candidate in conf.get("plugins") or ():
        if candidate.get("type") == "cilium-cni":
            plugin = candidate
            break
    return dict(plugin.get("eni") or {}), dict(plugin.get("ipam") or {})


def _cni_section(section: Mapping[str, Any], name: str, allowed: set[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, raw in section.items():
        if key not in allowed:
            continue  # other plugin keys (e.g. ipam "type") are not node spec fields
        out[key] = _coerce(key, raw, f"cni-config {name}.{key}")
    return out


def resolve_node_spec(
    metadata: InstanceMetadata,
    helm_values: Mapping[str, Any] | None = None,
    cni_config: str | Mapping[str, Any] | None = None,
) -> NodeSpec:
    """ENI-ARCH-2: metadata, then Helm nodeSpec values, then the CNI config (wins per field)."""
    values = helm_values or {}
    eni = _helm_section(values, "eni", HELM_ENI_KEYS)
    ipam = _helm_section(values, "ipam", HELM_IPAM_KEYS)
    sources = {f"eni.{k}": "helm" for k in eni} | {f"ipam.{k}": "helm" for k in ipam}
    cni_eni, cni_ipam = cni_sections(cni_config)
    for k, v in _cni_section(cni_eni, "eni", ENI_FIELDS).items():
        eni[k] = v
        sources[f"eni.{k}"] = "cni"
    for k, v in _cni_section(cni_ipam, "ipam", IPAM_FIELDS).items():
        ipam[k] = v
        sources[f"ipam.{k}"] = "cni"
    eni.update(
        {
            "instance-type": metadata.instance_type,
            "vpc-id": metadata.vpc_id,
            "availability-zone": metadata.availability_zone,
            "node-subnet-id": metadata.subnet_id,
        }
    )
    return NodeSpec(metadata.instance_id, EniSpec.from_obj(eni), IpamSpec.from_obj(ipam), sources)
