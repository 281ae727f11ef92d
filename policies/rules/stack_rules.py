"""Checks across the whole stack: overlaps (MP-POOL-5), default pools (MP-NODE-1), node-config
conflicts, and pool capacity. Pure functions over the stack's resources; each problem is a
(sentence, urn-or-None) pair so the violation is attached to the offending resource.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from math import ceil
from typing import Any, Protocol

from .cidr import (
    FAMILY_BITS,
    CidrProblem,
    Family,
    Network,
    block_count,
    overlapping_pairs,
    parse_cidr,
    usable_addresses,
)
from .pool_rules import mask_size_of, valid_networks
from .selectors import UnsupportedSelector, can_overlap, common_labels
from .values import UnknownValueError, as_list, pick
from .views import (
    AWS_VPC_TYPE,
    NODE_CONFIG,
    POOL,
    NodeConfigView,
    PoolView,
    node_config_view,
    pool_view,
    resource_kind,
)

DEFAULT_POOL_KEY = "ipam-default-ip-pool"

Problem = tuple[str, str | None]


class StackResource(Protocol):
    """What the stack rules read from a resource (pulumi_policy.PolicyResource has all of it)."""

    resource_type: str
    props: Mapping[str, Any]
    urn: str
    name: str


@dataclass(frozen=True)
class Located:
    """A view plus the URN of the resource that declared it."""

    view: Any
    urn: str


def _collect(resources: Iterable[StackResource], kind: str) -> list[Located]:
    found: list[Located] = []
    for resource in resources:
        try:
            if resource_kind(resource.resource_type, resource.props) != kind:
                continue
            view = (pool_view if kind == POOL else node_config_view)(resource.props, resource.name)
        except UnknownValueError:
            continue  # not known until the update; the resource policies report it
        found.append(Located(view, resource.urn))
    return found


def collect_pools(resources: Iterable[StackResource]) -> list[Located]:
    return _collect(resources, POOL)


def collect_node_configs(resources: Iterable[StackResource]) -> list[Located]:
    return _collect(resources, NODE_CONFIG)


def _vpc_networks(resources: Iterable[StackResource]) -> list[tuple[str, Network]]:
    labelled: list[tuple[str, Network]] = []
    for resource in resources:
        if resource.resource_type != AWS_VPC_TYPE:
            continue
        try:
            text = pick(resource.props, "cidrBlock", "cidr_block")
        except UnknownValueError:
            continue
        parsed = parse_cidr(text, "ipv4")
        if not isinstance(parsed, CidrProblem):
            labelled.append((f"VPC '{resource.name}' CIDR {parsed}", parsed))
    return labelled


def _configured_networks(config: Mapping[str, Any], key: str, what: str) -> list[tuple[str, Network]]:
    labelled: list[tuple[str, Network]] = []
    for text in as_list(config.get(key)):
        for family in ("ipv4", "ipv6"):
            parsed = parse_cidr(text, family)
            if not isinstance(parsed, CidrProblem):
                labelled.append((f"the {what} CIDR {parsed}", parsed))
    return labelled


def overlap_problems(resources: list[StackResource], config: Mapping[str, Any]) -> list[Problem]:
    """MP-POOL-5: no two pools share addresses, and no pool overlaps VPC or service CIDRs."""
    owner: dict[str, Located] = {}
    labelled: list[tuple[str, Network]] = []
    # Sorted by name so the violation always lands on the later pool, whatever the registration order.
    for located in sorted(collect_pools(resources), key=lambda found: found.view.name):
        pool: PoolView = located.view
        for family, view in pool.families():
            for network in valid_networks("ipv4" if family == "ipv4" else "ipv6", view):
                label = f"CiliumPodIPPool '{pool.name}' CIDR {network}"
                owner[label] = located
                labelled.append((label, network))
    labelled += _vpc_networks(resources)
    labelled += _configured_networks(config, "vpcCidrs", "VPC")
    labelled += _configured_networks(config, "serviceCidrs", "service")
    problems: list[Problem] = []
    for label_a, _, label_b, _ in overlapping_pairs(labelled):
        first, second = owner.get(label_a), owner.get(label_b)
        if first is None and second is None:
            continue
        if first is not None and second is not None and first.view.name == second.view.name:
            continue  # overlaps inside one pool are the pool-cidrs-canonical policy's business
        culprit, culprit_label, other_label = (
            (second, label_b, label_a) if second is not None else (first, label_a, label_b)
        )
        assert culprit is not None
        problems.append(
            (
                f"{culprit_label} overlaps {other_label}; pod IPs must be unique in the cluster (MP-POOL-5), "
                f"so give CiliumPodIPPool '{culprit.view.name}' a disjoint range.",
                culprit.urn,
            )
        )
    return problems


def default_pool_problems(resources: list[StackResource], config: Mapping[str, Any]) -> list[Problem]:
    """MP-NODE-1: every `ipam-default-ip-pool` names a pool of the stack or a configured known pool."""
    known = {located.view.name for located in collect_pools(resources)}
    known |= {str(name) for name in as_list(config.get("knownPools"))}
    problems: list[Problem] = []
    for located in collect_node_configs(resources):
        node_config: NodeConfigView = located.view
        wanted = node_config.defaults.get(DEFAULT_POOL_KEY)
        if wanted is not None and wanted not in known:
            problems.append(
                (
                    f"CiliumNodeConfig '{node_config.namespace}/{node_config.name}' sets {DEFAULT_POOL_KEY} "
                    f"to '{wanted}', which is no CiliumPodIPPool of this stack; declare that pool, fix the "
                    "name, or list it in the policy's knownPools.",
                    located.urn,
                )
            )
    return problems


def node_config_conflict_problems(resources: list[StackResource]) -> list[Problem]:
    """CiliumNodeConfigs that can select the same node must not disagree on any default."""
    configs = [c for c in collect_node_configs(resources) if c.view.node_selector is not None]
    problems: list[Problem] = []
    for located in configs:
        try:
            can_overlap(located.view.node_selector, {})
        except UnsupportedSelector as error:
            problems.append(
                (
                    f"CiliumNodeConfig '{located.view.namespace}/{located.view.name}' nodeSelector uses "
                    f"unsupported {error}; use In, NotIn, Exists or DoesNotExist.",
                    located.urn,
                )
            )
    valid = [c for c in configs if all(p[1] != c.urn for p in problems)]
    ordered = sorted(valid, key=lambda c: (c.view.name, c.view.namespace))
    for index, first in enumerate(ordered):
        for second in ordered[index + 1 :]:
            a: NodeConfigView = first.view
            b: NodeConfigView = second.view
            clashing = sorted(k for k in set(a.defaults) & set(b.defaults) if a.defaults[k] != b.defaults[k])
            shared = common_labels(a.node_selector or {}, b.node_selector or {}) if clashing else None
            if shared is None:
                continue
            key = clashing[0]
            example = ", ".join(f"{k}={v}" for k, v in sorted(shared.items())) or "any labels"
            problems.append(
                (
                    f"CiliumNodeConfigs '{a.namespace}/{a.name}' and '{b.namespace}/{b.name}' can select the "
                    f"same nodes (e.g. one with {example}) but set {key} to '{a.defaults[key]}' and "
                    f"'{b.defaults[key]}' "
                    "(the later name silently wins); "
                    "make their nodeSelectors disjoint or agree on the value.",
                    second.urn,
                )
            )
    return problems


def capacity_problems(resources: list[StackResource], config: Mapping[str, Any]) -> list[Problem]:
    """Each pool has enough blocks for the nodes that draw from it (advisory)."""
    node_counts = dict(config.get("poolNodeCounts") or {})
    default_nodes = int(config["nodeCount"])
    pods_per_node = int(config["podsPerNode"])
    problems: list[Problem] = []
    for located in collect_pools(resources):
        pool: PoolView = located.view
        nodes = int(node_counts.get(pool.name, default_nodes))
        for family_name, view in pool.families():
            family: Family = "ipv4" if family_name == "ipv4" else "ipv6"
            mask = mask_size_of(view)
            if mask is None or not 0 <= mask <= FAMILY_BITS[family]:
                continue
            usable = usable_addresses(FAMILY_BITS[family], mask, pool.allow_first_ip, pool.allow_last_ip)
            per_node = max(1, ceil(pods_per_node / usable)) if pods_per_node and usable else 1
            blocks = sum(block_count(network, mask) for network in valid_networks(family, view))
            needed = nodes * per_node
            if blocks < needed:
                problems.append(
                    (
                        f"CiliumPodIPPool '{pool.name}' has {blocks} {family} blocks of /{mask} but {nodes} "
                        f"nodes need {needed}; add CIDRs to the pool or lower the node count it must serve.",
                        located.urn,
                    )
                )
    return problems


def _selector_text(selector: Mapping[str, Any] | None) -> str:
    return "any" if not selector else ", ".join(f"{k}={v}" for k, v in sorted(selector.items()))


def pool_selector_problems(resources: list[StackResource]) -> list[Problem]:
    """MP-SEL-2: a pod may match the selectors of at most one pool per family, else allocation fails."""
    candidates = sorted(
        (c for c in collect_pools(resources) if c.view.is_selector_candidate), key=lambda c: c.view.name
    )
    problems: list[Problem] = []
    for index, first in enumerate(candidates):
        for second in candidates[index + 1 :]:
            a: PoolView = first.view
            b: PoolView = second.view
            shared = sorted({f for f, _ in a.families()} & {f for f, _ in b.families()})
            if not shared:
                continue
            try:
                pod = common_labels(a.pod_selector or {}, b.pod_selector or {})
                namespace = common_labels(a.namespace_selector or {}, b.namespace_selector or {})
            except UnsupportedSelector as error:
                problems.append(
                    (
                        f"CiliumPodIPPool '{b.name}' or '{a.name}' uses an unsupported selector {error}; "
                        "use In, NotIn, Exists or DoesNotExist.",
                        second.urn,
                    )
                )
                continue
            if pod is None or namespace is None:
                continue
            problems.append(
                (
                    f"CiliumPodIPPools '{a.name}' and '{b.name}' can both select the same {shared[0]} pod "
                    f"(e.g. pod labels {_selector_text(pod)} in a namespace with labels "
                    f"{_selector_text(namespace)}), so its allocation fails (MP-SEL-2); make their "
                    "podSelector / namespaceSelector disjoint.",
                    second.urn,
                )
            )
    return problems
