"""The provider and policy CIDR helpers are adapters over reconciler/cidr.py: they must agree with it.

If one of them grew its own parsing, usable-address (MP-POOL-4) or overlap (MP-POOL-5) rules again,
the Pulumi check, the policy pack and the operator could accept different pools; these properties
fail as soon as the three disagree.
"""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from policies.rules import cidr as policy_cidr
from provider import cidr as provider_cidr
from reconciler import cidr
from reconciler.controller.logs import line
from reconciler.eni.log import format_event

v4_text = st.builds(
    lambda address, prefix: f"{ipaddress.IPv4Address(address)}/{prefix}",
    st.integers(0, 2**32 - 1),
    st.integers(0, 34),
)
v6_text = st.builds(
    lambda address, prefix: f"{ipaddress.IPv6Address(address)}/{prefix}",
    st.integers(0, 2**128 - 1),
    st.integers(0, 130),
)
any_text = st.one_of(v4_text, v6_text, st.text(max_size=20), st.sampled_from(["10.0.0.1", "fd00::", ""]))


def _accepted(parse: object) -> bool:
    return not isinstance(parse, (cidr.CidrFlaw, policy_cidr.CidrProblem, Exception))


def _provider(text: str, version: int) -> object:
    try:
        return provider_cidr.parse_network(text, version)
    except ValueError as error:
        return error


def _reconciler(text: str, version: int) -> object:
    try:
        return cidr.parse_cidr(text, family=version)
    except cidr.CidrError as error:
        return error


@settings(max_examples=200, deadline=None)
@given(any_text, st.sampled_from([4, 6]))
def test_all_three_parsers_accept_the_same_networks(text: str, version: int) -> None:
    """A CIDR the operator accepts is accepted by the provider, and by the policy pack when canonical."""
    family: policy_cidr.Family = "ipv4" if version == 4 else "ipv6"
    shared = cidr.examine(text, version)
    by_policy = policy_cidr.parse_cidr(text, family)
    assert _accepted(_provider(text, version)) == _accepted(shared)
    assert _accepted(by_policy) == (_accepted(shared) and str(shared) == text)
    if text == text.strip():
        assert _accepted(_reconciler(text, version)) == _accepted(shared)


@pytest.mark.parametrize(
    ("text", "kind", "nearest"),
    [
        (None, "shape", None),
        ("10.0.0.1", "shape", "10.0.0.1/32"),
        ("banana", "shape", None),
        ("10.0.0.0/33", "syntax", None),
        ("10.0.0.1/24", "host-bits", "10.0.0.0/24"),
        ("fd00::/104", "family", "fd00::/104"),
    ],
)
def test_examine_names_the_broken_rule_and_the_nearest_network(
    text: object, kind: str, nearest: str | None
) -> None:
    flaw = cidr.examine(text, 4)
    assert isinstance(flaw, cidr.CidrFlaw)
    assert flaw.kind == kind
    assert (None if flaw.network is None else str(flaw.network)) == nearest


@settings(max_examples=150, deadline=None)
@given(st.sampled_from([32, 128]), st.integers(0, 128), st.booleans(), st.booleans())
def test_mp_pool_4_block_counts_match_the_network_counts(
    bits: int, mask: int, allow_first: bool, allow_last: bool
) -> None:
    """MP-POOL-4 (incl. the /31 /32 /127 /128 exemption) is one rule for a block size and a network."""
    mask = min(mask, bits)
    block = ipaddress.ip_network(("0.0.0.0" if bits == 32 else "::", mask))
    assert policy_cidr.usable_addresses(bits, mask, allow_first, allow_last) == cidr.usable_addresses(
        block, allow_first, allow_last
    )


small_v4 = st.builds(
    lambda address, prefix: ipaddress.ip_network((address, prefix), strict=False),
    st.integers(0, 2**12 - 1).map(lambda n: n << 20),
    st.integers(4, 16),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(small_v4, max_size=8), st.lists(small_v4, max_size=8))
def test_mp_pool_5_overlaps_agree_with_a_pairwise_check(
    left: list[ipaddress.IPv4Network], right: list[ipaddress.IPv4Network]
) -> None:
    """The sweep behind both adapters finds exactly the pairs a naive pairwise check finds, in order."""
    cross = [(a, b) for a in left for b in right if a.overlaps(b)]
    assert list(provider_cidr.overlapping_pairs(left, right)) == cross
    labelled = [(str(i), net) for i, net in enumerate(left)]
    within = [
        (*labelled[i], *labelled[j])
        for i in range(len(left))
        for j in range(i + 1, len(left))
        if left[i].overlaps(left[j])
    ]
    assert policy_cidr.overlapping_pairs(labelled) == within


def test_controller_and_eni_log_lines_are_the_same_format() -> None:
    """Both components write `event=... node=...` lines an operator can grep the same way."""
    fields = {"zone": "a b", "node": "ip-10-0-1-5", "eni": None, "reason": 'say "hi"'}
    expected = 'event=allocate node=ip-10-0-1-5 reason="say \\"hi\\"" zone="a b"'
    assert line("allocate", **fields) == format_event("allocate", fields) == expected
