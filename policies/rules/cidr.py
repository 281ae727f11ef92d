"""The policies' CIDR vocabulary: problems as data, over the shared rules in reconciler/cidr.py.

Why an adapter: a rule reports a CIDR problem as a reason plus a suggested fix (never an exception), and
works with families named "ipv4"/"ipv6" and per-node block sizes, but parsing, MP-POOL-4 usable counts
and overlap detection must agree with the operator and the provider, so the arithmetic lives once in
reconciler.cidr. Kept free of Pulumi types so every rule can be tested as plain functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from reconciler import cidr

Network: TypeAlias = cidr.IPNetwork
Family = Literal["ipv4", "ipv6"]

FAMILY_BITS: dict[Family, int] = {"ipv4": 32, "ipv6": 128}
FAMILY_VERSION: dict[Family, int] = {"ipv4": 4, "ipv6": 6}


@dataclass(frozen=True)
class CidrProblem:
    """Why a CIDR string is unusable, and the string that should be written instead (if any)."""

    text: str
    reason: str
    suggestion: str | None = None


_REASONS: dict[cidr.FlawKind, str] = {
    "shape": "is not in address/prefix-length form",
    "syntax": "is not a valid CIDR",
    "host-bits": "has host bits set",
    "family": "is not an {family} CIDR",
}


def parse_cidr(text: object, family: Family) -> Network | CidrProblem:
    """Parse `text` as a canonical CIDR of `family`; a problem explains what is wrong and the fix."""
    found = cidr.examine(text, FAMILY_VERSION[family])
    if isinstance(found, cidr.CidrFlaw):
        reason = _REASONS[found.kind].format(family="IPv4" if family == "ipv4" else "IPv6")
        suggestion = str(found.network) if found.kind == "host-bits" else None
        return CidrProblem(str(text), reason, suggestion)
    if str(found) != text:
        return CidrProblem(str(text), "is not written in canonical form", str(found))
    return found


def block_count(network: Network, mask_size: int) -> int:
    """How many per-node blocks of /mask_size a CIDR is carved into (0 when the block is larger)."""
    if mask_size < network.prefixlen:
        return 0
    return 1 << (mask_size - network.prefixlen)


def usable_addresses(bits: int, mask_size: int, allow_first_ip: bool, allow_last_ip: bool) -> int:
    """Pod addresses in one /mask_size block of a `bits`-bit family after MP-POOL-4 (under 3 is exempt)."""
    return cidr.usable_in_block(1 << (bits - mask_size), allow_first_ip, allow_last_ip)


def overlapping_pairs(labelled: list[tuple[str, Network]]) -> list[tuple[str, Network, str, Network]]:
    """Every pair of labelled networks (same family) that share at least one address, in input order."""
    found = cidr.overlapping_pairs([network for _, network in labelled])
    return [(*labelled[i], *labelled[j]) for i, j in found]
