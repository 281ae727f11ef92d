"""reconciler/cidr.py: canonical parsing, MP-POOL-4 usable counts, MP-POOL-5 overlap detection."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.cidr import (
    CidrError,
    canonical,
    overlapping_pairs,
    parse_cidr,
    usable_addresses,
    usable_bounds,
)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("10.0.0.1/24", "use the network address 10.0.0.0/24"),
        ("10.0.0.0/33", "not a valid CIDR"),
        ("banana", "not a valid CIDR"),
        ("10.0.0.0", "has no prefix length"),
    ],
)
def test_parse_cidr_errors_are_one_clear_sentence(text: str, fragment: str) -> None:
    with pytest.raises(CidrError) as err:
        parse_cidr(text, "pool CIDR")
    assert fragment in str(err.value)
    assert "pool CIDR" in str(err.value)
    assert "\n" not in str(err.value)


def test_parse_cidr_family_restriction_and_canonical_form() -> None:
    with pytest.raises(CidrError, match="IPv6, but an IPv4 CIDR is expected"):
        parse_cidr("fd00::/104", family=4)
    assert canonical("FD00:0:0::/104") == "fd00::/104"


@pytest.mark.parametrize(
    ("cidr", "first", "last", "usable"),
    [
        ("10.0.0.0/24", False, False, 254),
        ("10.0.0.0/24", True, False, 255),
        ("10.0.0.0/24", False, True, 255),
        ("10.0.0.0/24", True, True, 256),
        ("10.0.0.0/30", False, False, 2),
        ("10.0.0.0/31", False, False, 2),  # MP-POOL-4 exemption
        ("10.0.0.0/32", False, False, 1),
        ("fd00::/120", False, False, 254),
        ("fd00::/127", False, False, 2),
        ("fd00::/128", False, False, 1),
        ("fd00::/80", True, True, 2**48),
    ],
)
def test_mp_pool_4_usable_addresses(cidr: str, first: bool, last: bool, usable: int) -> None:
    net = parse_cidr(cidr)
    assert usable_addresses(net, first, last) == usable
    lo, hi = usable_bounds(net, first, last)
    assert hi - lo + 1 == usable


@settings(max_examples=150, deadline=None)
@given(
    version=st.sampled_from([4, 6]),
    data=st.data(),
    allow_first=st.booleans(),
    allow_last=st.booleans(),
)
def test_mp_pool_4_usable_matches_brute_force(
    version: int, data: st.DataObject, allow_first: bool, allow_last: bool
) -> None:
    """Brute force over small CIDRs: reserved = network and/or broadcast unless allowed or < 3 addresses."""
    bits = 32 if version == 4 else 128
    prefix = data.draw(st.integers(min_value=bits - 8, max_value=bits))
    base = data.draw(st.integers(min_value=0, max_value=(1 << (bits - 8)) - 1)) << 8
    net = ipaddress.ip_network((base, prefix), strict=False)
    addrs = list(net)
    if len(addrs) >= 3:
        if not allow_first:
            addrs = addrs[1:]
        if not allow_last:
            addrs = addrs[:-1]
    assert usable_addresses(net, allow_first, allow_last) == len(addrs)
    lo, hi = usable_bounds(net, allow_first, allow_last)
    assert (lo, hi) == (int(addrs[0]), int(addrs[-1]))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 255), st.integers(20, 28)), min_size=0, max_size=12))
def test_mp_pool_5_overlapping_pairs_matches_brute_force(specs: list[tuple[int, int]]) -> None:
    nets = [ipaddress.ip_network((10 << 24 | i << 8, p), strict=False) for i, p in specs]
    expected = sorted(
        (i, j) for i in range(len(nets)) for j in range(i + 1, len(nets)) if nets[i].overlaps(nets[j])
    )
    assert overlapping_pairs(nets) == expected


def test_overlapping_pairs_ignores_other_family() -> None:
    assert overlapping_pairs([parse_cidr("0.0.0.0/0"), parse_cidr("::/0")]) == []
