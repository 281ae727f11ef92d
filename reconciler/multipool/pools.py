"""Typed views of CiliumPodIPPool (cilium.io/v2alpha1) and CiliumNodeConfig (cilium.io/v2).

Same rules as reconciler/model.py: `from_obj` takes the JSON dict Kubernetes returns, `to_obj` writes
the exact CRD keys of SPEC section 0. `pool_problems` is the pure validation the operator, the
provider and the policy pack share (CIDR syntax, family, maskSize range, overlaps inside one pool).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from reconciler.cidr import CidrError, IPNetwork, overlapping_pairs, parse_cidr
from reconciler.multipool.selectors import LabelSelector, SelectorError

SKIP_MASQUERADE_ANNOTATION = "ipam.cilium.io/skip-masquerade"
DEFAULT_POOL_KEY = "ipam-default-ip-pool"
MAX_MASK = {4: 32, 6: 128}


@dataclass(frozen=True)
class PoolFamily:
    """`spec.ipv4` or `spec.ipv6` of a pool: the cluster CIDRs and the per-node block size."""

    cidrs: tuple[str, ...]
    mask_size: int

    @classmethod
    def from_obj(cls, obj: Mapping[str, Any] | None) -> PoolFamily | None:
        if obj is None:
            return None
        return cls(tuple(str(c) for c in obj.get("cidrs") or ()), int(obj.get("maskSize", 0) or 0))

    def to_obj(self) -> dict[str, Any]:
        return {"cidrs": list(self.cidrs), "maskSize": self.mask_size}


@dataclass(frozen=True)
class CiliumPodIPPool:
    """A cluster-wide pool (MP-POOL-1)."""

    name: str
    ipv4: PoolFamily | None = None
    ipv6: PoolFamily | None = None
    pod_selector: LabelSelector | None = None
    namespace_selector: LabelSelector | None = None
    allow_first_ip: bool = False
    allow_last_ip: bool = False
    annotations: Mapping[str, str] = field(default_factory=dict)
    creation_timestamp: str = ""
    resource_version: str = ""

    @classmethod
    def from_obj(cls, obj: Mapping[str, Any]) -> CiliumPodIPPool:
        meta = obj.get("metadata") or {}
        spec = obj.get("spec") or {}
        name = str(meta.get("name", ""))
        pod_sel = spec.get("podSelector")
        ns_sel = spec.get("namespaceSelector")
        return cls(
            name=name,
            ipv4=PoolFamily.from_obj(spec.get("ipv4")),
            ipv6=PoolFamily.from_obj(spec.get("ipv6")),
            pod_selector=None
            if pod_sel is None
            else LabelSelector.from_obj(pod_sel, f"CiliumPodIPPool {name} podSelector"),
            namespace_selector=None
            if ns_sel is None
            else LabelSelector.from_obj(ns_sel, f"CiliumPodIPPool {name} namespaceSelector"),
            allow_first_ip=bool(spec.get("allowFirstIP", False)),
            allow_last_ip=bool(spec.get("allowLastIP", False)),
            annotations={str(k): str(v) for k, v in (meta.get("annotations") or {}).items()},
            creation_timestamp=str(meta.get("creationTimestamp", "") or ""),
            resource_version=str(meta.get("resourceVersion", "") or ""),
        )

    def to_obj(self) -> dict[str, Any]:
        meta: dict[str, Any] = {"name": self.name}
        if self.annotations:
            meta["annotations"] = dict(self.annotations)
        if self.resource_version:
            meta["resourceVersion"] = self.resource_version
        spec: dict[str, Any] = {}
        if self.ipv4 is not None:
            spec["ipv4"] = self.ipv4.to_obj()
        if self.ipv6 is not None:
            spec["ipv6"] = self.ipv6.to_obj()
        if self.pod_selector is not None:
            spec["podSelector"] = self.pod_selector.to_obj()
        if self.namespace_selector is not None:
            spec["namespaceSelector"] = self.namespace_selector.to_obj()
        if self.allow_first_ip:
            spec["allowFirstIP"] = True
        if self.allow_last_ip:
            spec["allowLastIP"] = True
        return {"apiVersion": "cilium.io/v2alpha1", "kind": "CiliumPodIPPool", "metadata": meta, "spec": spec}

    def family(self, version: int) -> PoolFamily | None:
        return self.ipv4 if version == 4 else self.ipv6

    @property
    def has_selectors(self) -> bool:
        """Only pools with a selector are selector candidates (MP-SEL-1)."""
        return self.pod_selector is not None or self.namespace_selector is not None

    @property
    def skip_masquerade(self) -> bool:
        """MP-MASQ-1 per-pool opt-out."""
        return self.annotations.get(SKIP_MASQUERADE_ANNOTATION, "") == "true"

    def age_key(self) -> tuple[str, str]:
        """Older pools sort first (RFC 3339 timestamps sort as text); the name breaks ties."""
        return (self.creation_timestamp or "~", self.name)


def parse_pool_obj(obj: Mapping[str, Any]) -> tuple[CiliumPodIPPool | None, str]:
    """Parse a pool object for the controller without raising: (pool, "") or (None, one sentence)."""
    name = str((obj.get("metadata") or {}).get("name", "?"))
    try:
        return CiliumPodIPPool.from_obj(obj), ""
    except SelectorError as exc:
        return None, f"{exc} The pool is not used until this is fixed."
    except (TypeError, ValueError, AttributeError):
        return None, (
            f"CiliumPodIPPool {name} does not match the CRD schema (maskSize must be a number, cidrs a list, "
            "selectors maps); fix the object."
        )


def pool_networks(pool: CiliumPodIPPool, version: int) -> list[IPNetwork]:
    """The parsed CIDRs of one family (raises CidrError on a bad entry)."""
    fam = pool.family(version)
    if fam is None:
        return []
    where = f"CiliumPodIPPool {pool.name} spec.ipv{version}.cidrs entry"
    return [parse_cidr(c, where, version) for c in fam.cidrs]


def pool_problems(pool: CiliumPodIPPool) -> list[str]:
    """Every reason the pool cannot be used, one sentence each (empty list = valid)."""
    problems: list[str] = []
    if pool.ipv4 is None and pool.ipv6 is None:
        problems.append(f"CiliumPodIPPool {pool.name} has neither spec.ipv4 nor spec.ipv6; add at least one.")
    for version in (4, 6):
        fam = pool.family(version)
        if fam is None:
            continue
        where = f"CiliumPodIPPool {pool.name} spec.ipv{version}"
        if not 1 <= fam.mask_size <= MAX_MASK[version]:
            problems.append(f"{where}.maskSize {fam.mask_size} is out of range; use 1..{MAX_MASK[version]}.")
        if not fam.cidrs:
            problems.append(f"{where}.cidrs is empty; list at least one CIDR.")
        try:
            nets = pool_networks(pool, version)
        except CidrError as exc:
            problems.append(str(exc))
            continue
        for net in nets:
            if 1 <= fam.mask_size <= MAX_MASK[version] and fam.mask_size < net.prefixlen:
                problems.append(
                    f"{where}.maskSize /{fam.mask_size} is larger than CIDR {net}; "
                    f"use a maskSize of at least {net.prefixlen}."
                )
        for i, j in overlapping_pairs(nets):
            problems.append(f"{where}.cidrs {nets[i]} and {nets[j]} overlap; list each range once.")
    return problems


@dataclass(frozen=True)
class CiliumNodeConfig:
    """Per-node agent defaults (MP-NODE-1); namespaced."""

    name: str
    namespace: str = "kube-system"
    defaults: Mapping[str, str] = field(default_factory=dict)
    node_selector: LabelSelector | None = None

    @classmethod
    def from_obj(cls, obj: Mapping[str, Any]) -> CiliumNodeConfig:
        meta = obj.get("metadata") or {}
        spec = obj.get("spec") or {}
        name = str(meta.get("name", ""))
        sel = spec.get("nodeSelector")
        return cls(
            name=name,
            namespace=str(meta.get("namespace", "kube-system") or "kube-system"),
            defaults={str(k): str(v) for k, v in (spec.get("defaults") or {}).items()},
            node_selector=None
            if sel is None
            else LabelSelector.from_obj(sel, f"CiliumNodeConfig {name} nodeSelector"),
        )

    def to_obj(self) -> dict[str, Any]:
        spec: dict[str, Any] = {"defaults": dict(self.defaults)}
        if self.node_selector is not None:
            spec["nodeSelector"] = self.node_selector.to_obj()
        return {
            "apiVersion": "cilium.io/v2",
            "kind": "CiliumNodeConfig",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": spec,
        }

    def applies_to(self, node_labels: Mapping[str, str]) -> bool:
        """Absent nodeSelector matches no node; an empty one matches every node (MP-NODE-1)."""
        return self.node_selector is not None and self.node_selector.matches(node_labels)


def node_defaults(configs: Sequence[CiliumNodeConfig], node_labels: Mapping[str, str]) -> dict[str, str]:
    """Merge `spec.defaults` of every matching config in name order; later wins per key (MP-NODE-1)."""
    merged: dict[str, str] = {}
    for cfg in sorted(configs, key=lambda c: (c.name, c.namespace)):
        if cfg.applies_to(node_labels):
            merged.update(cfg.defaults)
    return merged


__all__ = [
    "CiliumNodeConfig",
    "CiliumPodIPPool",
    "DEFAULT_POOL_KEY",
    "PoolFamily",
    "SKIP_MASQUERADE_ANNOTATION",
    "SelectorError",
    "node_defaults",
    "parse_pool_obj",
    "pool_networks",
    "pool_problems",
]
