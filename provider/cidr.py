"""Pure CIDR helpers shared by the providers (parse, canonical form, overlap, next free block).

Why here: check() must explain a bad CIDR in one sentence, and the same rules apply to subnets and
pools; keeping them pure makes them cheap to property-test.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Iterator

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_network(text: object, version: int | None = None) -> Network:
    """Parse a canonical CIDR (host bits zero) of the given IP version, or raise ValueError with a reason."""
    if not isinstance(text, str) or "/" not in text:
        raise ValueError(f"{text!r} is not a CIDR such as 10.0.0.0/16")
    try:
        network = ipaddress.ip_network(text, strict=True)
    except ValueError:
        try:
            loose = ipaddress.ip_network(text, strict=False)
        except ValueError:
            raise ValueError(f"{text!r} is not a valid CIDR") from None
        raise ValueError(f"{text!r} has host bits set; use the network address {loose}") from None
    if version is not None and network.version != version:
        raise ValueError(f"{text!r} is not an IPv{version} CIDR")
    return network


def is_within(child: Network, parent: Network) -> bool:
    """True when every address of `child` is in `parent`; networks of different IP versions never are."""
    if isinstance(child, ipaddress.IPv4Network) and isinstance(parent, ipaddress.IPv4Network):
        return child.subnet_of(parent)
    if isinstance(child, ipaddress.IPv6Network) and isinstance(parent, ipaddress.IPv6Network):
        return child.subnet_of(parent)
    return False


def overlapping_pairs(left: Iterable[Network], right: Iterable[Network]) -> Iterator[tuple[Network, Network]]:
    """Every (a, b) with a from `left` and b from `right` that share at least one address."""
    rights = list(right)
    for a in left:
        for b in rights:
            if a.version == b.version and a.overlaps(b):
                yield a, b


def next_free_subnet(parent: Network, prefix: int, used: Iterable[Network]) -> Network | None:
    """The first `/prefix` block inside `parent` that overlaps none of `used`, or None when full."""
    taken = [u for u in used if u.version == parent.version and u.overlaps(parent)]
    for candidate in parent.subnets(new_prefix=prefix):
        if not any(candidate.overlaps(u) for u in taken):
            return candidate
    return None
