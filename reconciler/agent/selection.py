"""Pool selection for a pod, per IP family, like a Cilium 1.20 agent (MP-SEL-1..3, MP-NODE-1).

Order: pod annotation (`ipam.cilium.io/ipv4-pool` / `ipv6-pool`, else `ipam.cilium.io/ip-pool`), the
same on the namespace, then pool selectors (only pools that have selectors and the family; the pod's
labels plus `io.kubernetes.pod.namespace` / `io.kubernetes.pod.name` against `podSelector`, the
namespace's labels against `namespaceSelector`; both must match when both are set). Exactly one
selector match is required (MP-SEL-2). No match -> the node's default pool, unless
`ipam.cilium.io/require-pool-match: "true"` is on the pod or namespace, which blocks the pod. A named
pool the agent does not know falls back to the default pool (MP-SEL-3), again unless
require-pool-match is set. The result always says why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from reconciler.agent.pods import (
    FAMILY_POOL_ANNOTATION,
    POOL_ANNOTATION,
    REQUIRE_POOL_MATCH_ANNOTATION,
    PodInfo,
)
from reconciler.multipool.pools import CiliumPodIPPool

SOURCE_POD = "pod annotation"
SOURCE_NAMESPACE = "namespace annotation"
SOURCE_SELECTOR = "pool selector"
SOURCE_DEFAULT = "default pool"


@dataclass(frozen=True)
class Selection:
    """The chosen pool, or `pool is None` with the reason allocation is blocked."""

    family: int
    pool: str | None
    source: str
    reason: str

    @property
    def ok(self) -> bool:
        return self.pool is not None


def _annotated(annotations: Mapping[str, str], family: int) -> tuple[str, str] | None:
    """(pool, annotation key) from one scope: the family key beats the generic key."""
    for key in (FAMILY_POOL_ANNOTATION[family], POOL_ANNOTATION):
        value = annotations.get(key, "")
        if value:
            return value, key
    return None


def _require_match_scope(pod: PodInfo) -> str:
    if pod.annotations.get(REQUIRE_POOL_MATCH_ANNOTATION) == "true":
        return "pod"
    if pod.namespace_annotations.get(REQUIRE_POOL_MATCH_ANNOTATION) == "true":
        return "namespace"
    return ""


def select_pool(
    pod: PodInfo, family: int, pools: Mapping[str, CiliumPodIPPool], default_pool: str
) -> Selection:
    """Pick the pool for `pod` and `family` (4 or 6) from the pools the agent knows."""
    fam = f"IPv{family}"
    require = _require_match_scope(pod)
    for scope, source, scope_annotations in (
        ("pod", SOURCE_POD, pod.annotations),
        ("namespace", SOURCE_NAMESPACE, pod.namespace_annotations),
    ):
        named = _annotated(scope_annotations, family)
        if named is None:
            continue
        name, key = named
        pool = pools.get(name)
        if pool is not None:
            if pool.family(family) is None:
                return Selection(
                    family,
                    None,
                    source,
                    f"pool {name} named by {scope} annotation {key} of pod {pod.key} has no {fam} CIDRs; "
                    f"name a pool with spec.ipv{family} in {FAMILY_POOL_ANNOTATION[family]}",
                )
            return Selection(family, name, source, f"{scope} annotation {key}={name}")
        if require:
            return Selection(
                family,
                None,
                source,
                f"pool {name} named by {scope} annotation {key} of pod {pod.key} is unknown and "
                f"require-pool-match is set on the {require}; create the pool or fix the annotation",
            )
        return Selection(
            family,
            default_pool,
            SOURCE_DEFAULT,
            f"pool {name} named by {scope} annotation {key} is unknown; using default pool {default_pool} "
            "(MP-SEL-3)",
        )
    labels = pod.selector_labels()
    matches = sorted(
        p.name
        for p in pools.values()
        if p.has_selectors
        and p.family(family) is not None
        and (p.pod_selector is None or p.pod_selector.matches(labels))
        and (p.namespace_selector is None or p.namespace_selector.matches(pod.namespace_labels))
    )
    if len(matches) == 1:
        return Selection(family, matches[0], SOURCE_SELECTOR, f"selectors of pool {matches[0]} match")
    if len(matches) > 1:
        return Selection(
            family,
            None,
            SOURCE_SELECTOR,
            f"pod {pod.key} matches the selectors of several CiliumPodIPPools for {fam} "
            f"({', '.join(matches)}); make the pools' selectors disjoint (MP-SEL-2)",
        )
    if require:
        return Selection(
            family,
            None,
            SOURCE_SELECTOR,
            f"no CiliumPodIPPool matches pod {pod.key} for {fam} and require-pool-match is set on the "
            f"{require}; allocation waits until a non-default pool matches (MP-SEL-3)",
        )
    return Selection(
        family, default_pool, SOURCE_DEFAULT, f"no annotation or selector match; default pool {default_pool}"
    )
