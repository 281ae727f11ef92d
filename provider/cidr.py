"""The providers' CIDR vocabulary: the provider's sentences over the shared rules in reconciler/cidr.py.

Why an adapter: check() must explain a bad CIDR in one sentence with the wording the provider has always
used, while parsing, containment, overlap and the next free block must agree with the operator and the
policy pack, so the arithmetic lives once in reconciler.cidr.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from reconciler import cidr
from reconciler.cidr import IPNetwork as Network
from reconciler.cidr import next_free_subnet

__all__ = ["Network", "is_within", "next_free_subnet", "overlapping_pairs", "parse_network"]


_SENTENCES: dict[cidr.FlawKind, str] = {
    "shape": "{text!r} is not a CIDR such as 10.0.0.0/16",
    "syntax": "{text!r} is not a valid CIDR",
    "host-bits": "{text!r} has host bits set; use the network address {network}",
    "family": "{text!r} is not an IPv{version} CIDR",
}


def parse_network(text: object, version: int | None = None) -> Network:
    """Parse a canonical CIDR (host bits zero) of the given IP version, or raise ValueError with a reason."""
    found = cidr.examine(text, version)
    if isinstance(found, cidr.CidrFlaw):
        raise ValueError(_SENTENCES[found.kind].format(text=text, network=found.network, version=version))
    return found


def is_within(child: Network, parent: Network) -> bool:
    """True when every address of `child` is in `parent`; networks of different IP versions never are."""
    return cidr.contains(parent, child)


def overlapping_pairs(left: Iterable[Network], right: Iterable[Network]) -> Iterator[tuple[Network, Network]]:
    """Every (a, b) with a from `left` and b from `right` that share at least one address, left-major."""
    lefts, rights = list(left), list(right)
    for i, j in cidr.overlapping_pairs(lefts + rights):
        if i < len(lefts) <= j:
            yield lefts[i], rights[j - len(lefts)]
