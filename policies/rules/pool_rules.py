"""Checks on a single CiliumPodIPPool (MP-POOL-1/4, SPEC section 0 bounds): pure, message-returning.

Each function returns one sentence per problem, naming the pool and the fix; an empty list passes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .cidr import FAMILY_BITS, CidrProblem, Family, Network, overlapping_pairs, parse_cidr, usable_addresses
from .values import as_int
from .views import FamilyView, PoolView


def _subject(pool: PoolView) -> str:
    return f"CiliumPodIPPool '{pool.name}'"


def valid_networks(family: Family, view: FamilyView) -> list[Network]:
    """The family's CIDRs that parse as canonical networks (problems are another rule's business)."""
    parsed = [parse_cidr(text, family) for text in view.cidrs]
    return [net for net in parsed if not isinstance(net, CidrProblem)]


def mask_size_of(view: FamilyView) -> int | None:
    return as_int(view.mask_size)


def cidr_problems(pool: PoolView) -> list[str]:
    """Every CIDR must be a canonical network of its family, and a pool's own CIDRs must not overlap."""
    subject = _subject(pool)
    families = pool.families()
    if not families:
        return [f"{subject} declares neither spec.ipv4 nor spec.ipv6; add at least one address family."]
    problems: list[str] = []
    for family_name, view in families:
        family: Family = "ipv4" if family_name == "ipv4" else "ipv6"
        if not view.cidrs:
            problems.append(
                f"{subject} has an empty {family}.cidrs list; "
                f"add at least one CIDR or drop the {family} section."
            )
            continue
        labelled: list[tuple[str, Network]] = []
        for text in view.cidrs:
            parsed = parse_cidr(text, family)
            if isinstance(parsed, CidrProblem):
                fix = f"write '{parsed.suggestion}' instead" if parsed.suggestion else "fix or remove it"
                problems.append(f"{subject} {family} CIDR '{parsed.text}' {parsed.reason}; {fix}.")
            else:
                labelled.append((str(parsed), parsed))
        for text_a, _, text_b, _ in overlapping_pairs(labelled):
            problems.append(
                f"{subject} lists overlapping {family} CIDRs '{text_a}' and '{text_b}'; "
                "keep only disjoint CIDRs in the pool."
            )
    return problems


def mask_size_problems(pool: PoolView, config: Mapping[str, Any]) -> list[str]:
    """maskSize must be an integer within the configured bounds and no larger a block than any CIDR."""
    subject = _subject(pool)
    problems: list[str] = []
    for family_name, view in pool.families():
        family: Family = "ipv4" if family_name == "ipv4" else "ipv6"
        low, high = int(config[f"{family}MaskSizeMin"]), int(config[f"{family}MaskSizeMax"])
        high = min(high, FAMILY_BITS[family])
        mask = mask_size_of(view)
        if mask is None:
            problems.append(
                f"{subject} {family}.maskSize is missing or not an integer; set it between {low} and {high}."
            )
            continue
        if not low <= mask <= high:
            problems.append(
                f"{subject} {family}.maskSize {mask} is outside the allowed range {low}..{high}; "
                "choose a maskSize in that range."
            )
            continue
        for network in valid_networks(family, view):
            if mask < network.prefixlen:
                problems.append(
                    f"{subject} {family}.maskSize {mask} is a bigger block than its CIDR '{network}'; "
                    f"set maskSize to at least {network.prefixlen} or use a larger CIDR."
                )
    return problems


def smallest_block_for(bits: int, needed: int, allow_first: bool, allow_last: bool) -> int | None:
    """The largest maskSize whose blocks still give `needed` usable addresses (None if impossible)."""
    for mask in range(bits, -1, -1):
        if usable_addresses(bits, mask, allow_first, allow_last) >= needed:
            return mask
    return None


def usable_address_problems(pool: PoolView, config: Mapping[str, Any]) -> list[str]:
    """MP-POOL-4: after reserving first/last addresses every block must hold N pod addresses."""
    needed = int(config["minUsableAddressesPerBlock"])
    problems: list[str] = []
    for family_name, view in pool.families():
        family: Family = "ipv4" if family_name == "ipv4" else "ipv6"
        bits = FAMILY_BITS[family]
        mask = mask_size_of(view)
        if mask is None or not 0 <= mask <= bits:
            continue
        usable = usable_addresses(bits, mask, pool.allow_first_ip, pool.allow_last_ip)
        if usable >= needed:
            continue
        best = smallest_block_for(bits, needed, pool.allow_first_ip, pool.allow_last_ip)
        problems.append(
            f"{_subject(pool)} {family} blocks of /{mask} offer only {usable} usable pod addresses "
            f"(first and last are reserved unless allowFirstIP/allowLastIP), fewer than the required "
            f"{needed}; set {family}.maskSize to {best} or less."
        )
    return problems


def ipv6_mask_problems(pool: PoolView, config: Mapping[str, Any]) -> list[str]:
    """Cilium's CIDR allocator can split an IPv6 CIDR into at most 2^ipv6MaxBlockBits blocks."""
    if pool.ipv6 is None:
        return []
    limit = int(config["ipv6MaxBlockBits"])
    mask = mask_size_of(pool.ipv6)
    if mask is None:
        return []
    problems: list[str] = []
    for network in valid_networks("ipv6", pool.ipv6):
        if mask - network.prefixlen > limit:
            problems.append(
                f"{_subject(pool)} ipv6 CIDR '{network}' would be split into 2^{mask - network.prefixlen} "
                f"blocks of /{mask}, more than Cilium's allocator supports (2^{limit}); use a larger CIDR "
                f"(prefix /{mask - limit} or shorter) or a maskSize of at most {network.prefixlen + limit}."
            )
    return problems
