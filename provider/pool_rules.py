"""Pure rules for CiliumPodIPPool specs (MP-POOL-2/3/5): what is valid, immutable, in use, overlapping.

Why pure: the provider, its tests and the policy pack can all ask the same questions of plain JSON
without a cluster; the provider only adds the I/O that fetches the other pools and the CiliumNodes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ._props import is_unknown
from .cidr import Network, is_within, overlapping_pairs, parse_network

FAMILIES = {"ipv4": (4, 32), "ipv6": (6, 128)}
IMMUTABLE_FIELDS = ("ipv4.maskSize", "ipv6.maskSize", "allowFirstIP", "allowLastIP")
MIGRATION_HINT = (
    "create a new pool and move node groups to it with `cilium-ipam pools migrate` "
    "(cordon, drain, delete the CiliumNode, restart the agent, uncordon; MP-MIG-1)"
)
SELECTOR_KEYS = {"matchLabels", "matchExpressions"}


def spec_errors(spec: Any) -> list[str]:
    """Why `spec` is not a valid CiliumPodIPPool spec (empty when valid or not yet known)."""
    if is_unknown(spec):
        return []
    if not isinstance(spec, Mapping):
        return ["spec must be an object with ipv4 and/or ipv6."]
    errors: list[str] = []
    present = [f for f in FAMILIES if spec.get(f) is not None]
    if not present:
        errors.append("a pool needs at least one family: set ipv4 and/or ipv6 with cidrs and maskSize.")
    for family in present:
        errors += _family_errors(family, spec[family])
    for key in ("allowFirstIP", "allowLastIP"):
        value = spec.get(key)
        if value is not None and not is_unknown(value) and not isinstance(value, bool):
            errors.append(f"{key} must be true or false.")
    for key in ("podSelector", "namespaceSelector"):
        errors += selector_errors(spec.get(key), key)
    if not errors:
        cidrs = pool_cidrs(spec)
        for index, a in enumerate(cidrs):
            b = next((b for b in cidrs[index + 1 :] if a.version == b.version and a.overlaps(b)), None)
            if b is not None:
                errors.append(f"CIDRs {a} and {b} of the same pool overlap; list each range once.")
                break
    return errors


def _family_errors(family: str, block: Any) -> list[str]:
    version, max_bits = FAMILIES[family]
    if is_unknown(block):
        return []
    if not isinstance(block, Mapping):
        return [f"{family} must be an object with cidrs and maskSize."]
    errors: list[str] = []
    cidrs = block.get("cidrs")
    networks: list[Network] = []
    if is_unknown(cidrs):
        pass
    elif not isinstance(cidrs, list) or not cidrs:
        errors.append(f"{family}.cidrs must list at least one CIDR (an empty family is not allowed).")
    else:
        for cidr in cidrs:
            if is_unknown(cidr):
                continue
            try:
                networks.append(parse_network(cidr, version))
            except ValueError as error:
                errors.append(f"{family}.cidrs: {error}.")
    mask = block.get("maskSize")
    if is_unknown(mask):
        return errors
    if not isinstance(mask, int) or isinstance(mask, bool):
        return [*errors, f"{family}.maskSize must be an integer."]
    if not 1 <= mask <= max_bits:
        errors.append(f"{family}.maskSize {mask} must be between 1 and {max_bits}.")
    for network in networks:
        if mask < network.prefixlen:
            errors.append(
                f"{family}.maskSize /{mask} is larger than CIDR {network} (/{network.prefixlen}); "
                f"use a maskSize >= {network.prefixlen}."
            )
    return errors


def selector_errors(selector: Any, what: str) -> list[str]:
    """Why `selector` is not a standard label selector."""
    if selector is None or is_unknown(selector):
        return []
    if not isinstance(selector, Mapping) or set(selector) - SELECTOR_KEYS:
        return [f"{what} must be a label selector with only matchLabels / matchExpressions."]
    labels = selector.get("matchLabels")
    if labels is not None and not (
        isinstance(labels, Mapping) and all(isinstance(v, str) or is_unknown(v) for v in labels.values())
    ):
        return [f"{what}.matchLabels must map label keys to string values."]
    for expr in selector.get("matchExpressions") or []:
        if not isinstance(expr, Mapping) or expr.get("operator") not in (
            "In",
            "NotIn",
            "Exists",
            "DoesNotExist",
        ):
            return [
                f"{what}.matchExpressions entries need key, operator In/NotIn/Exists/DoesNotExist, values."
            ]
    return []


def pool_cidrs(spec: Mapping[str, Any] | None) -> list[Network]:
    """All parsed CIDRs of a pool spec (both families); unparsable or unknown entries are skipped."""
    networks: list[Network] = []
    for family, (version, _) in FAMILIES.items():
        block = (spec or {}).get(family) or {}
        for cidr in block.get("cidrs") or []:
            try:
                networks.append(parse_network(cidr, version))
            except ValueError:
                continue
    return networks


def immutable_changes(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> list[str]:
    """Which MP-POOL-3 immutable fields differ (a family added/removed is not one; unknowns skipped)."""
    old, new = old or {}, new or {}
    changed = []
    for family in FAMILIES:
        old_block, new_block = old.get(family), new.get(family)
        if not isinstance(old_block, Mapping) or not isinstance(new_block, Mapping):
            continue  # a family added or removed, or not known yet
        mask = new_block.get("maskSize")
        if not is_unknown(mask) and old_block.get("maskSize") != mask:
            changed.append(f"{family}.maskSize")
    for key in ("allowFirstIP", "allowLastIP"):
        value = new.get(key)
        if not is_unknown(value) and bool(old.get(key, False)) != bool(value):
            changed.append(key)
    return changed


def immutable_message(pool: str, fields: Iterable[str]) -> str:
    names = ", ".join(fields)
    return (
        f"CiliumPodIPPool {pool}: {names} cannot change once the pool exists (MP-POOL-3); {MIGRATION_HINT}."
    )


def removed_cidrs(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> list[Network]:
    kept = set(pool_cidrs(new))
    return [c for c in pool_cidrs(old) if c not in kept]


def nodes_using(
    nodes: Iterable[Mapping[str, Any]], pool: str, within: list[Network] | None = None
) -> dict[str, list[str]]:
    """Node name -> PodCIDRs it holds from `pool` (only those inside `within`, when given) -- MP-POOL-2."""
    from reconciler.model import IpamSpec

    users: dict[str, list[str]] = {}
    for node in nodes:
        ipam = IpamSpec.from_obj(((node.get("spec") or {}).get("ipam")) or {})
        for allocation in ipam.allocated:
            if allocation.pool != pool:
                continue
            held = [c for c in allocation.cidrs if within is None or _inside_any(c, within)]
            if held:
                users.setdefault(str(node["metadata"]["name"]), []).extend(held)
    return users


def _inside_any(cidr: str, parents: list[Network]) -> bool:
    try:
        network = parse_network(cidr)
    except ValueError:
        return False
    return any(is_within(network, parent) for parent in parents)


def describe_users(users: Mapping[str, list[str]], limit: int = 5) -> str:
    names = sorted(users)
    shown = ", ".join(f"{n} ({', '.join(users[n])})" for n in names[:limit])
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return shown + more


def overlap_errors(name: str, spec: Mapping[str, Any], others: Iterable[Mapping[str, Any]]) -> list[str]:
    """MP-POOL-5: one sentence per other pool whose CIDRs overlap this pool's, naming both pools."""
    mine = pool_cidrs(spec)
    errors = []
    for other in others:
        other_name = str((other.get("metadata") or {}).get("name", ""))
        if other_name == name:
            continue
        pairs = list(overlapping_pairs(mine, pool_cidrs(other.get("spec"))))
        if pairs:
            a, b = pairs[0]
            errors.append(
                f"CiliumPodIPPool {name} CIDR {a} overlaps CIDR {b} of CiliumPodIPPool {other_name} "
                "(MP-POOL-5: pod IPs must be unique in the cluster); choose a non-overlapping range."
            )
    return errors
