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
- `examine(text, family)` classifies what is wrong with a CIDR without choosing the wording, so the
  provider (`provider/cidr.py`) and the policy pack (`policies/rules/cidr.py`) keep their own sentences
  while sharing these rules; they are thin adapters over this module.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

IPNetwork: TypeAlias = ipaddress.IPv4Network | ipaddress.IPv6Network


class CidrError(ValueError):
    """A CIDR a user supplied is malformed; the message is one sentence naming the value and the fix."""


FlawKind: TypeAlias = Literal["shape", "syntax", "host-bits", "family"]


@dataclass(frozen=True)
class CidrFlaw:
    """What is wrong with a CIDR text, for the caller to put into its own sentence.

    kinds, in the order they are checked: "shape" (not a string, or no "/prefix"), "syntax" (not an
    address/prefix at all), "host-bits", "family" (valid, but of the other IP version). `network` is
    the nearest valid reading: the network address for "host-bits", the text as a single-address
    network for a "shape" flaw whose text is a bare address, the parsed network for "family".
    """

    kind: FlawKind
    network: IPNetwork | None = None


def examine(text: object, family: int | None = None) -> IPNetwork | CidrFlaw:
    """Parse `text` strictly (no host bits, "/prefix" required) or say which rule it breaks."""
    if not isinstance(text, str):
        return CidrFlaw("shape")
    if "/" not in text:
        return CidrFlaw("shape", _strict_or_none(text))
    net = _strict_or_none(text)
    if net is None:
        try:
            return CidrFlaw("host-bits", ipaddress.ip_network(text, strict=False))
        except ValueError:
            return CidrFlaw("syntax")
    if family is not None and net.version != family:
        return CidrFlaw("family", net)
    return net


def _strict_or_none(text: str) -> IPNetwork | None:
    try:
        return ipaddress.ip_network(text, strict=True)
    except ValueError:
        return None


def parse_cidr(text: object, what: str = "CIDR", family: int | None = None) -> IPNetwork:
    """Parse `text` strictly (no host bits) into a network; `family` 4 or 6 restricts the family."""
    raw = str(text).strip()
    found = examine(raw, family)
    if not isinstance(found, CidrFlaw):
        return found
    if found.kind == "host-bits":
        raise CidrError(f"{what} {raw!r} has host bits set; use the network address {found.network} instead.")
    if found.kind == "shape" and found.network is not None:
        raise CidrError(f"{what} {raw!r} has no prefix length; write it as {found.network}.")
    if found.kind == "family" and found.network is not None:
        raise CidrError(
            f"{what} {raw!r} is IPv{found.network.version}, but an IPv{family} CIDR is expected here."
        )
    raise CidrError(
        f"{what} {raw!r} is not a valid CIDR; write it as address/prefix-length, e.g. 10.0.0.0/16."
    )


def canonical(text: object, what: str = "CIDR") -> str:
    """The canonical string form of a CIDR (lower-case, compressed IPv6), or CidrError."""
    return str(parse_cidr(text, what))


def address_count(net: IPNetwork) -> int:
    """All addresses in the network, reserved or not."""
    return 1 << (net.max_prefixlen - net.prefixlen)


def is_exempt(net: IPNetwork) -> bool:
    """MP-POOL-4: CIDRs with fewer than 3 addresses (/31, /32, /127, /128) reserve nothing."""
    return address_count(net) < 3


def usable_in_block(size: int, allow_first: bool = False, allow_last: bool = False) -> int:
    """Addresses a pod may receive from a block of `size` addresses (MP-POOL-4; under 3 is exempt)."""
    if size < 3:
        return size
    return size - (0 if allow_first else 1) - (0 if allow_last else 1)


def usable_addresses(net: IPNetwork, allow_first: bool = False, allow_last: bool = False) -> int:
    """Addresses a pod may receive from `net` (MP-POOL-4)."""
    return usable_in_block(address_count(net), allow_first, allow_last)


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


def next_free_subnet(parent: IPNetwork, prefix: int, used: Iterable[IPNetwork]) -> IPNetwork | None:
    """The first `/prefix` block inside `parent` that overlaps none of `used`, or None when full."""
    taken = [u for u in used if overlaps(u, parent)]
    for candidate in parent.subnets(new_prefix=prefix):
        if not any(candidate.overlaps(u) for u in taken):
            return candidate
    return None
