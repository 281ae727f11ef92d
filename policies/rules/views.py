"""Recognise the resources the policies care about and read them into small typed views.

Two sources describe the same Cilium objects: our dynamic resources (type token
`pulumi-python:dynamic/cilium-ipam:<Kind>`; the generic `pulumi-python:dynamic:Resource` is told
apart by a marker prop or by shape) and raw
pulumi-kubernetes custom resources (`kubernetes:cilium.io/<version>:<Kind>`). Rules only ever see
the views, so both sources get exactly the same checks.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .values import as_bool, as_list, as_mapping, pick

DYNAMIC_TYPE = "pulumi-python:dynamic:Resource"
# Our providers subclass pulumi.dynamic.Resource with module="cilium-ipam", name=<Kind>.
OUR_DYNAMIC_PREFIX = "pulumi-python:dynamic/cilium-ipam:"
CILIUM_CR_PREFIX = "kubernetes:cilium.io/"
AWS_SUBNET_TYPE = "aws:ec2/subnet:Subnet"
AWS_VPC_TYPE = "aws:ec2/vpc:Vpc"
AWS_IAM_POLICY_TYPES = ("aws:iam/policy:Policy", "aws:iam/rolePolicy:RolePolicy")

POOL = "CiliumPodIPPool"
NODE_CONFIG = "CiliumNodeConfig"
DUAL_STACK_SUBNET = "DualStackSubnet"
EC2_TAGS = "Ec2Tags"
IAM_POLICY = "IpamIamPolicy"
CNI_CONFIGURATION = "CniConfiguration"
OUR_KINDS = (POOL, NODE_CONFIG, DUAL_STACK_SUBNET, EC2_TAGS, IAM_POLICY, CNI_CONFIGURATION)

# Props the provider may use to say which of our resources a dynamic resource is.
MARKER_KEYS = ("kind", "resource_kind", "resourceKind", "__kind")


def dynamic_kind(props: Mapping[str, Any]) -> str | None:
    """Which of our resources a dynamic resource's props describe (marker first, then shape)."""
    for key in MARKER_KEYS:
        marker = props.get(key)
        if isinstance(marker, str) and marker in OUR_KINDS:
            return marker
    return _kind_by_shape(props)


def _kind_by_shape(props: Mapping[str, Any]) -> str | None:
    spec = as_mapping(props.get("spec")) or props
    if isinstance(spec.get("ipv4"), Mapping) or isinstance(spec.get("ipv6"), Mapping):
        return POOL
    if "defaults" in spec and any(k in spec for k in ("nodeSelector", "node_selector")):
        return NODE_CONFIG
    if "vpc_id" in props and "cidr_block" in props:
        return DUAL_STACK_SUBNET
    if "policy_name" in props and "role_name" in props:
        return IAM_POLICY
    if any(k in props for k in ("pre_allocate", "min_allocate", "max_allocate")):
        return CNI_CONFIGURATION
    return None


def resource_kind(resource_type: str, props: Mapping[str, Any]) -> str | None:
    """Our kind name for a resource of either source, or None when it is not one of ours."""
    if resource_type.startswith(OUR_DYNAMIC_PREFIX):
        kind = resource_type.removeprefix(OUR_DYNAMIC_PREFIX)
        return kind if kind in OUR_KINDS else None
    if resource_type == DYNAMIC_TYPE:
        return dynamic_kind(props)
    if resource_type.startswith(CILIUM_CR_PREFIX):
        kind = resource_type.rsplit(":", 1)[-1]
        return kind if kind in (POOL, NODE_CONFIG) else None
    return None


def _object_name(props: Mapping[str, Any], fallback: str) -> str:
    metadata = as_mapping(props.get("metadata"))
    name = pick(metadata, "name") or pick(props, "pool_name", "poolName", "object_name", "name")
    return name if isinstance(name, str) and name else fallback


def _spec(props: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = props.get("spec")
    return spec if isinstance(spec, Mapping) else props


@dataclass(frozen=True)
class FamilyView:
    """One address family of a pool: its CIDR strings and block mask size, as written."""

    cidrs: tuple[Any, ...]
    mask_size: Any


@dataclass(frozen=True)
class PoolView:
    """A CiliumPodIPPool, whichever resource declared it."""

    name: str
    ipv4: FamilyView | None
    ipv6: FamilyView | None
    allow_first_ip: bool = False
    allow_last_ip: bool = False
    pod_selector: Mapping[str, Any] | None = None
    namespace_selector: Mapping[str, Any] | None = None

    @property
    def is_selector_candidate(self) -> bool:
        """MP-SEL-1: only pools with a podSelector or namespaceSelector are matched by selectors."""
        return self.pod_selector is not None or self.namespace_selector is not None

    def families(self) -> list[tuple[str, FamilyView]]:
        return [(name, fam) for name, fam in (("ipv4", self.ipv4), ("ipv6", self.ipv6)) if fam is not None]


def _family(value: Any) -> FamilyView | None:
    if not isinstance(value, Mapping):
        return None
    return FamilyView(tuple(as_list(value.get("cidrs"))), pick(value, "maskSize", "mask_size"))


def pool_view(props: Mapping[str, Any], fallback_name: str) -> PoolView:
    """Read a pool from a raw custom resource or from our dynamic resource's inputs."""
    spec = _spec(props)
    return PoolView(
        name=_object_name(props, fallback_name),
        ipv4=_family(spec.get("ipv4")),
        ipv6=_family(spec.get("ipv6")),
        allow_first_ip=as_bool(pick(spec, "allowFirstIP", "allow_first_ip")),
        allow_last_ip=as_bool(pick(spec, "allowLastIP", "allow_last_ip")),
        pod_selector=_selector(pick(spec, "podSelector", "pod_selector")),
        namespace_selector=_selector(pick(spec, "namespaceSelector", "namespace_selector")),
    )


def _selector(value: Any) -> Mapping[str, Any] | None:
    return value if isinstance(value, Mapping) else None


@dataclass(frozen=True)
class NodeConfigView:
    """A CiliumNodeConfig: its per-node defaults and the node selector (None = matches no node)."""

    name: str
    namespace: str
    defaults: Mapping[str, str]
    node_selector: Mapping[str, Any] | None


def node_config_view(props: Mapping[str, Any], fallback_name: str) -> NodeConfigView:
    spec = _spec(props)
    metadata = as_mapping(props.get("metadata"))
    namespace = pick(metadata, "namespace") or pick(props, "namespace") or "default"
    selector = pick(spec, "nodeSelector", "node_selector")
    return NodeConfigView(
        name=_object_name(props, fallback_name),
        namespace=str(namespace),
        defaults={str(k): str(v) for k, v in as_mapping(spec.get("defaults")).items()},
        node_selector=selector if isinstance(selector, Mapping) else None,
    )


@dataclass(frozen=True)
class SubnetView:
    """A subnet pods may get ENI addresses from; ipv6_cidr is None when no IPv6 block is requested."""

    name: str
    ipv4_cidr: Any
    ipv6_cidr: Any
    wants_ipv6: bool


def subnet_view(kind: str, props: Mapping[str, Any], fallback_name: str) -> SubnetView:
    """Read our DualStackSubnet (IPv6 by design) or a pulumi-aws subnet."""
    ipv4 = pick(props, "cidr_block", "cidrBlock", "ipv4_cidr", "ipv4CidrBlock")
    ipv6 = pick(props, "ipv6_cidr_block", "ipv6CidrBlock", "ipv6_cidr")
    wants_ipv6 = kind == DUAL_STACK_SUBNET or ipv6 is not None
    if kind == DUAL_STACK_SUBNET and pick(props, "ipv6", "enable_ipv6") is False:
        wants_ipv6 = False
    name = pick(props, "name")
    return SubnetView(name if isinstance(name, str) else fallback_name, ipv4, ipv6, wants_ipv6)


@dataclass(frozen=True)
class WatermarksView:
    """The ENI watermark settings (ENI-PARAM-1) of a CNI configuration, raw as written."""

    name: str
    values: Mapping[str, Any] = field(default_factory=dict)


WATERMARK_KEYS = {
    "pre-allocate": ("pre-allocate", "pre_allocate", "preAllocate"),
    "min-allocate": ("min-allocate", "min_allocate", "minAllocate"),
    "max-allocate": ("max-allocate", "max_allocate", "maxAllocate"),
    "max-above-watermark": ("max-above-watermark", "max_above_watermark", "maxAboveWatermark"),
}


def watermarks_view(props: Mapping[str, Any], fallback_name: str) -> WatermarksView:
    """Watermarks from the `ipam` section (or top level) of a CNI configuration."""
    sources = [as_mapping(props.get("ipam")), props]
    values: dict[str, Any] = {}
    for canonical, keys in WATERMARK_KEYS.items():
        for source in sources:
            value = pick(source, *keys)
            if value is not None:
                values[canonical] = value
                break
    return WatermarksView(_object_name(props, fallback_name), values)


@dataclass(frozen=True)
class IamView:
    """What an IAM policy resource grants (explicit actions) and the features it was built for."""

    name: str
    granted: tuple[str, ...] | None
    features: Mapping[str, bool]


def _iam_features(props: Mapping[str, Any]) -> dict[str, bool]:
    """Features an IpamIamPolicy was built for, read with the provider's option semantics."""
    gc_on = as_bool(pick(props, "eni_gc"), default=True)
    custom_gc = bool(pick(props, "cluster_name")) or bool(as_mapping(pick(props, "eni_gc_tags")))
    return {
        "releaseExcessIps": as_bool(pick(props, "release_excess_ips")),
        "ipv6": as_bool(pick(props, "ipv6")),
        "gcWithDefaultTags": gc_on and not custom_gc,
        "instanceTagsFilter": bool(as_mapping(pick(props, "instance_tags_filter"))),
        "staticIp": as_bool(pick(props, "static_ip")),
    }


def _actions_from_document(document: Any) -> tuple[str, ...] | None:
    if isinstance(document, str):
        try:
            document = json.loads(document)
        except ValueError:
            return None
    if not isinstance(document, Mapping):
        return None
    actions: list[str] = []
    for statement in as_list(document.get("Statement")):
        statement = as_mapping(statement)
        if statement.get("Effect", "Allow") != "Allow":
            continue
        action = statement.get("Action")
        actions.extend([action] if isinstance(action, str) else [str(a) for a in as_list(action)])
    return tuple(actions)


def iam_view(kind: str | None, props: Mapping[str, Any], fallback_name: str) -> IamView:
    """Read our IpamIamPolicy (options + any explicit action list) or a pulumi-aws policy document."""
    explicit = pick(props, "actions")
    granted: tuple[str, ...] | None
    if explicit is not None:
        granted = tuple(str(a) for a in as_list(explicit))
    else:
        granted = _actions_from_document(pick(props, "document", "policy_document", "policy"))
    features = _iam_features(props) if kind == IAM_POLICY else {}
    name = pick(props, "policy_name", "name")
    return IamView(name if isinstance(name, str) else fallback_name, granted, features)
