"""Typed, immutable views of the Cilium objects this project reads and writes (SPEC.md section 0).

Every planner works on these views, never on raw dicts, so that a misspelt JSON key fails in one
place. `from_obj` accepts the JSON dict Kubernetes returns; `to_obj` produces the exact JSON keys of
the CRDs. Unknown keys are kept out of the views on purpose: writers patch only the fields they own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

DEFAULT_POOL = "default"
DEFAULT_PRE_ALLOCATE = 8


def _tags(value: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in (value or {}).items()}


@dataclass(frozen=True)
class EniSpec:
    """`spec.eni` of a CiliumNode (ENI-PARAM-*)."""

    instance_type: str = ""
    vpc_id: str = ""
    availability_zone: str = ""
    node_subnet_id: str = ""
    first_interface_index: int = 0
    subnet_ids: tuple[str, ...] = ()
    subnet_tags: Mapping[str, str] = field(default_factory=dict)
    security_groups: tuple[str, ...] = ()
    security_group_tags: Mapping[str, str] = field(default_factory=dict)
    exclude_interface_tags: Mapping[str, str] = field(default_factory=dict)
    use_primary_address: bool = False
    disable_prefix_delegation: bool = False
    delete_on_termination: bool = True

    @classmethod
    def from_obj(cls, obj: Mapping[str, Any] | None) -> EniSpec:
        o = obj or {}
        dot = o.get("delete-on-termination")
        return cls(
            instance_type=str(o.get("instance-type", "")),
            vpc_id=str(o.get("vpc-id", "")),
            availability_zone=str(o.get("availability-zone", "")),
            node_subnet_id=str(o.get("node-subnet-id", "")),
            first_interface_index=int(o.get("first-interface-index", 0) or 0),
            subnet_ids=tuple(o.get("subnet-ids") or ()),
            subnet_tags=_tags(o.get("subnet-tags")),
            security_groups=tuple(o.get("security-groups") or ()),
            security_group_tags=_tags(o.get("security-group-tags")),
            exclude_interface_tags=_tags(o.get("exclude-interface-tags")),
            use_primary_address=bool(o.get("use-primary-address", False)),
            disable_prefix_delegation=bool(o.get("disable-prefix-delegation", False)),
            delete_on_termination=True if dot is None else bool(dot),
        )

    def to_obj(self) -> dict[str, Any]:
        obj: dict[str, Any] = {
            "instance-type": self.instance_type,
            "vpc-id": self.vpc_id,
            "availability-zone": self.availability_zone,
            "node-subnet-id": self.node_subnet_id,
            "first-interface-index": self.first_interface_index,
        }
        if self.subnet_ids:
            obj["subnet-ids"] = list(self.subnet_ids)
        if self.subnet_tags:
            obj["subnet-tags"] = dict(self.subnet_tags)
        if self.security_groups:
            obj["security-groups"] = list(self.security_groups)
        if self.security_group_tags:
            obj["security-group-tags"] = dict(self.security_group_tags)
        if self.exclude_interface_tags:
            obj["exclude-interface-tags"] = dict(self.exclude_interface_tags)
        if self.use_primary_address:
            obj["use-primary-address"] = True
        if self.disable_prefix_delegation:
            obj["disable-prefix-delegation"] = True
        if not self.delete_on_termination:
            obj["delete-on-termination"] = False
        return {k: v for k, v in obj.items() if v != ""}


@dataclass(frozen=True)
class PoolRequest:
    """One entry of `spec.ipam.pools.requested` (MP-CRD-1, ENI-ARCH-5)."""

    pool: str
    ipv4_addrs: int = 0
    ipv6_addrs: int = 0

    @classmethod
    def from_obj(cls, obj: Mapping[str, Any]) -> PoolRequest:
        needed = obj.get("needed") or {}
        return cls(
            pool=str(obj["pool"]),
            ipv4_addrs=int(needed.get("ipv4-addrs", 0) or 0),
            ipv6_addrs=int(needed.get("ipv6-addrs", 0) or 0),
        )

    def to_obj(self) -> dict[str, Any]:
        needed: dict[str, int] = {}
        if self.ipv4_addrs:
            needed["ipv4-addrs"] = self.ipv4_addrs
        if self.ipv6_addrs:
            needed["ipv6-addrs"] = self.ipv6_addrs
        return {"pool": self.pool, "needed": needed}


@dataclass(frozen=True)
class PoolAllocation:
    """One entry of `spec.ipam.pools.allocated`: the CIDRs a node holds from one pool."""

    pool: str
    cidrs: tuple[str, ...] = ()

    @classmethod
    def from_obj(cls, obj: Mapping[str, Any]) -> PoolAllocation:
        return cls(pool=str(obj["pool"]), cidrs=tuple(str(c) for c in obj.get("cidrs") or ()))

    def to_obj(self) -> dict[str, Any]:
        return {"pool": self.pool, "cidrs": list(self.cidrs)}


@dataclass(frozen=True)
class IpamSpec:
    """`spec.ipam` of a CiliumNode (ENI-PARAM-1, MP-CRD-1)."""

    min_allocate: int = 0
    max_allocate: int = 0
    pre_allocate: int = DEFAULT_PRE_ALLOCATE
    max_above_watermark: int = 0
    static_ip_tags: Mapping[str, str] = field(default_factory=dict)
    requested: tuple[PoolRequest, ...] = ()
    allocated: tuple[PoolAllocation, ...] = ()

    @classmethod
    def from_obj(cls, obj: Mapping[str, Any] | None) -> IpamSpec:
        o = obj or {}
        pools = o.get("pools") or {}
        pre = o.get("pre-allocate")
        return cls(
            min_allocate=int(o.get("min-allocate", 0) or 0),
            max_allocate=int(o.get("max-allocate", 0) or 0),
            pre_allocate=DEFAULT_PRE_ALLOCATE if pre is None else int(pre),
            max_above_watermark=int(o.get("max-above-watermark", 0) or 0),
            static_ip_tags=_tags(o.get("static-ip-tags")),
            requested=tuple(PoolRequest.from_obj(r) for r in pools.get("requested") or ()),
            allocated=tuple(PoolAllocation.from_obj(a) for a in pools.get("allocated") or ()),
        )

    def to_obj(self) -> dict[str, Any]:
        obj: dict[str, Any] = {"pre-allocate": self.pre_allocate}
        if self.min_allocate:
            obj["min-allocate"] = self.min_allocate
        if self.max_allocate:
            obj["max-allocate"] = self.max_allocate
        if self.max_above_watermark:
            obj["max-above-watermark"] = self.max_above_watermark
        if self.static_ip_tags:
            obj["static-ip-tags"] = dict(self.static_ip_tags)
        pools: dict[str, Any] = {}
        if self.requested:
            pools["requested"] = [r.to_obj() for r in self.requested]
        if self.allocated:
            pools["allocated"] = [a.to_obj() for a in self.allocated]
        if pools:
            obj["pools"] = pools
        return obj

    def request_for(self, pool: str) -> PoolRequest | None:
        return next((r for r in self.requested if r.pool == pool), None)

    def cidrs_of(self, pool: str) -> tuple[str, ...]:
        return tuple(c for a in self.allocated if a.pool == pool for c in a.cidrs)


@dataclass(frozen=True)
class EniStatus:
    """One ENI in `status.eni.enis` (ENI-PUB-1)."""

    id: str
    ip: str = ""
    mac: str = ""
    number: int = 0
    description: str = ""
    subnet_id: str = ""
    subnet_cidr: str = ""
    vpc_id: str = ""
    vpc_primary_cidr: str = ""
    vpc_cidrs: tuple[str, ...] = ()
    addresses: tuple[str, ...] = ()
    prefixes: tuple[str, ...] = ()
    ipv6_prefixes: tuple[str, ...] = ()
    security_groups: tuple[str, ...] = ()
    tags: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_obj(cls, obj: Mapping[str, Any]) -> EniStatus:
        subnet = obj.get("subnet") or {}
        vpc = obj.get("vpc") or {}
        return cls(
            id=str(obj["id"]),
            ip=str(obj.get("ip", "")),
            mac=str(obj.get("mac", "")),
            number=int(obj.get("number", 0) or 0),
            description=str(obj.get("description", "")),
            subnet_id=str(subnet.get("id", "")),
            subnet_cidr=str(subnet.get("cidr", "")),
            vpc_id=str(vpc.get("id", "")),
            vpc_primary_cidr=str(vpc.get("primary-cidr", "")),
            vpc_cidrs=tuple(vpc.get("cidrs") or ()),
            addresses=tuple(obj.get("addresses") or ()),
            prefixes=tuple(obj.get("prefixes") or ()),
            ipv6_prefixes=tuple(obj.get("ipv6-prefixes") or ()),
            security_groups=tuple(obj.get("security-groups") or ()),
            tags=_tags(obj.get("tags")),
        )

    def to_obj(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "ip": self.ip,
            "mac": self.mac,
            "number": self.number,
            "description": self.description,
            "subnet": {"id": self.subnet_id, "cidr": self.subnet_cidr},
            "vpc": {"id": self.vpc_id, "primary-cidr": self.vpc_primary_cidr, "cidrs": list(self.vpc_cidrs)},
            "addresses": list(self.addresses),
            "prefixes": list(self.prefixes),
            "ipv6-prefixes": list(self.ipv6_prefixes),
            "security-groups": list(self.security_groups),
            "tags": dict(self.tags),
        }


@dataclass(frozen=True)
class CiliumNode:
    """A CiliumNode (cilium.io/v2): the per-node contract between agent and operator."""

    name: str
    instance_id: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    resource_version: str = ""
    eni: EniSpec = field(default_factory=EniSpec)
    ipam: IpamSpec = field(default_factory=IpamSpec)
    enis: Mapping[str, EniStatus] = field(default_factory=dict)
    operator_error: str = ""

    @classmethod
    def from_obj(cls, obj: Mapping[str, Any]) -> CiliumNode:
        meta = obj.get("metadata") or {}
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        enis = (status.get("eni") or {}).get("enis") or {}
        op = ((status.get("ipam") or {}).get("operator-status") or {}).get("error", "")
        return cls(
            name=str(meta.get("name", "")),
            instance_id=str(spec.get("instance-id", "")),
            labels=_tags(meta.get("labels")),
            resource_version=str(meta.get("resourceVersion", "")),
            eni=EniSpec.from_obj(spec.get("eni")),
            ipam=IpamSpec.from_obj(spec.get("ipam")),
            enis={k: EniStatus.from_obj({"id": k, **v}) for k, v in enis.items()},
            operator_error=str(op or ""),
        )

    def to_obj(self) -> dict[str, Any]:
        meta: dict[str, Any] = {"name": self.name}
        if self.labels:
            meta["labels"] = dict(self.labels)
        if self.resource_version:
            meta["resourceVersion"] = self.resource_version
        spec: dict[str, Any] = {"ipam": self.ipam.to_obj()}
        if self.instance_id:
            spec["instance-id"] = self.instance_id
        if self.eni != EniSpec():
            spec["eni"] = self.eni.to_obj()
        status: dict[str, Any] = {}
        if self.enis:
            status["eni"] = {"enis": {k: v.to_obj() for k, v in self.enis.items()}}
        if self.operator_error:
            status["ipam"] = {"operator-status": {"error": self.operator_error}}
        obj: dict[str, Any] = {
            "apiVersion": "cilium.io/v2",
            "kind": "CiliumNode",
            "metadata": meta,
            "spec": spec,
        }
        if status:
            obj["status"] = status
        return obj
