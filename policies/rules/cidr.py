"""Pure CIDR arithmetic the policies need: parsing with a reason, block counts, usable addresses.

Kept free of Pulumi types so every rule can be reasoned about (and tested) as plain functions.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Literal

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Family = Literal["ipv4", "ipv6"]

FAMILY_BITS: dict[Family, int] = {"ipv4": 32, "ipv6": 128}
FAMILY_VERSION: dict[Family, int] = {"ipv4": 4, "ipv6": 6}


@dataclass(frozen=True)
class CidrProblem:
    """Why a CIDR string is unusable, and the string that should be written instead (if any)."""

    text: str
    reason: str
    suggestion: str | None = None


def parse_cidr(text: object, family: Family) -> Network | CidrProblem:
    """Parse `text` as a canonical CIDR of `family`; a problem explains what is wrong and the fix."""
    if not isinstance(text, str) or "/" not in text:
        return CidrProblem(str(text), "is not in address/prefix-length form")
    try:
        strict = ipaddress.ip_network(text, strict=True)
    except ValueError:
        try:
            loose = ipaddress.ip_network(text, strict=False)
        except ValueError:
            return CidrProblem(text, "is not a valid CIDR")
        return CidrProblem(text, "has host bits set", str(loose))
    if strict.version != FAMILY_VERSION[family]:
        return CidrProblem(text, f"is not an {'IPv4' if family == 'ipv4' else 'IPv6'} CIDR")
    if str(strict) != text:
        return CidrProblem(text, "is not written in canonical form", str(strict))
    return strict


def block_count(network: Network, mask_size: int) -> int:
    """How many per-node blocks of /mask_size a CIDR is carved into (0 when the block is larger)."""
    if mask_size < network.prefixlen:
        return 0
    return 1 << (mask_size - network.prefixlen)


def usable_addresses(bits: int, mask_size: int, allow_first_ip: bool, allow_last_ip: bool) -> int:
    """Pod addresses in one block after the MP-POOL-4 reservations (blocks under 3 are exempt)."""
    size = 1 << (bits - mask_size)
    if size < 3:
        return size
    return size - (0 if allow_first_ip else 1) - (0 if allow_last_ip else 1)


def overlapping_pairs(labelled: list[tuple[str, Network]]) -> list[tuple[str, Network, str, Network]]:
    """Every pair of labelled networks (same family) that share at least one address, in input order."""
    pairs: list[tuple[str, Network, str, Network]] = []
    for index, (label_a, net_a) in enumerate(labelled):
        for label_b, net_b in labelled[index + 1 :]:
            if net_a.version == net_b.version and net_a.overlaps(net_b):
                pairs.append((label_a, net_a, label_b, net_b))
    return pairs
