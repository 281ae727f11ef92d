"""Property tests of the pure CIDR helpers behind DualStackSubnet and CiliumPodIPPool (MP-POOL-5)."""

from __future__ import annotations

import ipaddress

from hypothesis import given, settings
from hypothesis import strategies as st

from provider.cidr import next_free_subnet, overlapping_pairs, parse_network
from provider.pool_rules import overlap_errors

ipv4_networks = st.builds(
    lambda addr, prefix: ipaddress.ip_network(f"{ipaddress.IPv4Address(addr)}/{prefix}", strict=False),
    st.integers(0, 2**32 - 1),
    st.integers(8, 30),
)


@settings(max_examples=150, deadline=None)
@given(ipv4_networks)
def test_parse_network_accepts_exactly_canonical_cidrs(network: ipaddress.IPv4Network) -> None:
    assert parse_network(str(network), 4) == network
    if network.num_addresses > 1:
        host = f"{network.network_address + 1}/{network.prefixlen}"
        try:
            parse_network(host, 4)
        except ValueError as error:
            assert str(network) in str(error)  # the message names the network address to use
        else:
            raise AssertionError("a CIDR with host bits set must be refused")


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 255), max_size=40))
def test_next_free_64_never_overlaps_a_used_block(indices: list[int]) -> None:
    parent = ipaddress.ip_network("2001:db8:0:ff00::/56")
    blocks = list(parent.subnets(new_prefix=64))
    used = [blocks[i] for i in indices]
    free = next_free_subnet(parent, 64, used)
    if len(set(indices)) == 256:
        assert free is None
    else:
        assert free is not None and free.subnet_of(parent)  # type: ignore[arg-type]
        assert not any(free.overlaps(u) for u in used)
        assert free == min(b for b in blocks if b not in used)  # the first free one, deterministically


@settings(max_examples=150, deadline=None)
@given(ipv4_networks, ipv4_networks)
def test_overlap_refusal_is_symmetric_and_exact(a: ipaddress.IPv4Network, b: ipaddress.IPv4Network) -> None:
    spec_a = {"ipv4": {"cidrs": [str(a)], "maskSize": 30}}
    spec_b = {"ipv4": {"cidrs": [str(b)], "maskSize": 30}}
    refused_ab = overlap_errors("a", spec_a, [{"metadata": {"name": "b"}, "spec": spec_b}])
    refused_ba = overlap_errors("b", spec_b, [{"metadata": {"name": "a"}, "spec": spec_a}])
    assert bool(refused_ab) == bool(refused_ba) == a.overlaps(b)
    assert bool(list(overlapping_pairs([a], [b]))) == a.overlaps(b)
