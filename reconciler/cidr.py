"""Shared CIDR helpers: canonical parsing with clear errors, usable-address counting, overlap checks.

Pure functions only (no I/O, no logging) so that the operator, the agent library, the Pulumi provider
and the policy pack all agree on the same arithmetic:

- `parse_cidr(text, what=...)` returns an `ipaddress` network or raises `CidrError` with one sentence
  that names the offending value and the fix (host bits set, bad syntax, wrong family).
- `usable_addresses(net, allow_first, allow_last)` applies MP-POOL-4: the first and last address of a
  PodCIDR are reserved unless allowed; CIDRs with fewer than 3 addresses (/31, /32, /127, /128) are
  exempt and every address is usable.
- `usable_bounds(net, ...)` gives the first and last usable address as integers (for allocators).
- `overlapping_pairs(cidrs)` finds every overlapping pair in O(n log n) (MP-POOL-5).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from typing import TypeAlias

IPNetwork: TypeAlias = ipaddress.IPv4Network | ipaddress.IPv6Network


class CidrError(ValueError):
    """A CIDR a user supplied is malformed; the message is one sentence naming the value and the fix."""


def parse_cidr(text: object, what: str = "CIDR", family: int | None = None) -> IPNetwork:
    """Parse `text` strictly (no host bits) into a network; `family` 4 or 6 restricts the family."""
    raw = str(text).strip()
    try:
        net = ipaddress.ip_network(raw, strict=True)
    except ValueError as exc:
        if "has host bits set" in str(exc):
            loose = ipaddress.ip_network(raw, strict=False)
            raise CidrError(
                f"{what} {raw!r} has host bits set; use the network address {loose} instead."
            ) from None
        raise CidrError(
            f"{what} {raw!r} is not a valid CIDR; write it as address/prefix-length, e.g. 10.0.0.0/16."
        ) from None
    if "/" not in raw:
        raise CidrError(f"{what} {raw!r} has no prefix length; write it as {net}.")
    if family is not None and net.version != family:
        raise CidrError(f"{what} {raw!r} is IPv{net.version}, but an IPv{family} CIDR is expected here.")
    return net


def canonical(text: object, what: str = "CIDR") -> str:
    """The canonical string form of a CIDR (lower-case, compressed IPv6), or CidrError."""
    return str(parse_cidr(text, what))


def address_count(net: IPNetwork) -> int:
    """All addresses in the network, reserved or not."""
    return 1 << (net.max_prefixlen - net.prefixlen)


def is_exempt(net: IPNetwork) -> bool:
    """MP-POOL-4: CIDRs with fewer than 3 addresses (/31, /32, /127, /128) reserve nothing."""
    return address_count(net) < 3


def usable_addresses(net: IPNetwork, allow_first: bool = False, allow_last: bool = False) -> int:
    """Addresses a pod may receive from `net` (MP-POOL-4)."""
    total = address_count(net)
    if total < 3:
        return total
    return total - (0 if allow_first else 1) - (0 if allow_last else 1)


def usable_bounds(net: IPNetwork, allow_first: bool = False, allow_last: bool = False) -> tuple[int, int]:
    """First and last usable address of `net` as integers, inclusive (MP-POOL-4)."""
    first = int(net.network_address)
    last = int(net.broadcast_address)
    if is_exempt(net):
        return first, last
    return first + (0 if allow_first else 1), last - (0 if allow_last else 1)


def overlaps(a: IPNetwork, b: IPNetwork) -> bool:
    """True when two networks of the same family share at least one address."""
    return a.version == b.version and a.overlaps(b)


def _span(net: IPNetwork) -> tuple[int, int, int]:
    return net.version, int(net.network_address), int(net.broadcast_address)


def overlapping_pairs(cidrs: Sequence[IPNetwork]) -> list[tuple[int, int]]:
    """Index pairs (i, j), i < j, of overlapping networks; sorted sweep, O(n log n + pairs)."""
    order = sorted(range(len(cidrs)), key=lambda i: _span(cidrs[i]))
    pairs: list[tuple[int, int]] = []
    active: list[int] = []  # indices whose range may still reach the next start
    for i in order:
        version, start, end = _span(cidrs[i])
        active = [j for j in active if _span(cidrs[j])[0] == version and _span(cidrs[j])[2] >= start]
        for j in active:
            pairs.append((min(i, j), max(i, j)))
        active.append(i)
    return sorted(pairs)


def contains(outer: IPNetwork, inner: IPNetwork) -> bool:
    """True when `inner` lies wholly inside `outer` (same family)."""
    if isinstance(inner, ipaddress.IPv4Network) and isinstance(outer, ipaddress.IPv4Network):
        return inner.subnet_of(outer)
    if isinstance(inner, ipaddress.IPv6Network) and isinstance(outer, ipaddress.IPv6Network):
        return inner.subnet_of(outer)
    return False


def parse_all(texts: Iterable[object], what: str = "CIDR", family: int | None = None) -> list[IPNetwork]:
    """Parse several CIDRs; the first bad one raises CidrError."""
    return [parse_cidr(t, what, family) for t in texts]
