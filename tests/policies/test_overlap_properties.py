"""Property test for MP-POOL-5: pools-no-overlap fires exactly when two pools share an address."""

from __future__ import annotations

import ipaddress

from hypothesis import given, settings
from hypothesis import strategies as st
from policy_harness import raw_pool, validate_stack


@st.composite
def cidrs(draw: st.DrawFn) -> str:
    """A canonical IPv4 CIDR inside 10.0.0.0/16 with a /20../28 prefix."""
    prefix = draw(st.integers(min_value=20, max_value=28))
    index = draw(st.integers(min_value=0, max_value=(1 << (prefix - 16)) - 1))
    start = ipaddress.IPv4Address("10.0.0.0") + index * (1 << (32 - prefix))
    return f"{start}/{prefix}"


def address_range(cidr: str) -> range:
    network = ipaddress.IPv4Network(cidr)
    return range(int(network.network_address), int(network.broadcast_address) + 1)


def shares_an_address(first: list[str], second: list[str]) -> bool:
    """Brute force over integer ranges, independent of ipaddress.overlaps."""
    return any(
        max(a.start, b.start) < min(a.stop, b.stop)
        for a in map(address_range, first)
        for b in map(address_range, second)
    )


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(cidrs(), min_size=1, max_size=3, unique=True), min_size=1, max_size=4))
def test_overlap_policy_fires_iff_two_pools_share_an_address(pools: list[list[str]]) -> None:
    resources = [raw_pool(f"p{i}", ipv4={"cidrs": c, "maskSize": 28}) for i, c in enumerate(pools)]
    expected = any(
        shares_an_address(pools[i], pools[j]) for i in range(len(pools)) for j in range(i + 1, len(pools))
    )
    violations = validate_stack("pools-no-overlap", resources)
    assert bool(violations) == expected
    for message, urn in violations:
        assert message.startswith("CiliumPodIPPool 'p") and urn is not None
