"""Resource policies on CiliumPodIPPools, for raw custom resources and our dynamic resource alike."""

from __future__ import annotations

from typing import Any

import pytest
from policy_harness import OUR_POOL_TYPE, RAW_POOL_TYPE, validate_resource

from policies.rules.views import DYNAMIC_TYPE, OUR_DYNAMIC_PREFIX


def raw(
    ipv4: dict[str, Any] | None = None, ipv6: dict[str, Any] | None = None, **spec: Any
) -> dict[str, Any]:
    body = dict(spec)
    if ipv4 is not None:
        body["ipv4"] = ipv4
    if ipv6 is not None:
        body["ipv6"] = ipv6
    return {
        "apiVersion": "cilium.io/v2alpha1",
        "kind": "CiliumPodIPPool",
        "metadata": {"name": "dc1-pool"},
        "spec": body,
    }


def ours(ipv4: dict[str, Any] | None = None, ipv6: dict[str, Any] | None = None) -> dict[str, Any]:
    """Props of provider.CiliumPodIPPool: the CRD spec under `spec`, the object name under `name`."""
    spec: dict[str, Any] = {}
    if ipv4 is not None:
        spec["ipv4"] = ipv4
    if ipv6 is not None:
        spec["ipv6"] = ipv6
    return {"name": "dc1-pool", "spec": spec, "labels": {}, "kubeconfig": None, "__provider": "pickled"}


def generic(ipv4: dict[str, Any] | None = None, ipv6: dict[str, Any] | None = None) -> dict[str, Any]:
    """A plain `pulumi.dynamic.Resource` with flat props and a `kind` marker (fallback recognition)."""
    props: dict[str, Any] = {"kind": "CiliumPodIPPool", "name": "dc1-pool", "__provider": "pickled"}
    if ipv4 is not None:
        props["ipv4"] = ipv4
    if ipv6 is not None:
        props["ipv6"] = ipv6
    return props


SOURCES = [
    pytest.param((RAW_POOL_TYPE, raw), id="raw-cr"),
    pytest.param((OUR_POOL_TYPE, ours), id="provider"),
    pytest.param((DYNAMIC_TYPE, generic), id="generic-dynamic"),
]


@pytest.mark.parametrize("source", SOURCES)
def test_seed_dc1_pool_passes_every_pool_policy(source: Any) -> None:
    """The seed's dc1-pool (10.1.0.0/16, maskSize 24) is valid under all pool rules (MP-POOL-1/4)."""
    resource_type, make = source
    props = make(ipv4={"cidrs": ["10.1.0.0/16"], "maskSize": 24})
    for policy in (
        "pool-cidrs-canonical",
        "pool-mask-size-bounds",
        "pool-block-usable-addresses",
        "pool-ipv6-mask-rules",
    ):
        assert validate_resource(policy, resource_type, props) == [], policy


@pytest.mark.parametrize("source", SOURCES)
def test_host_bits_set_is_rejected_with_the_canonical_form(source: Any) -> None:
    resource_type, make = source
    messages = validate_resource(
        "pool-cidrs-canonical", resource_type, make(ipv4={"cidrs": ["10.1.0.1/16"], "maskSize": 24})
    )
    assert messages == [
        "CiliumPodIPPool 'dc1-pool' ipv4 CIDR '10.1.0.1/16' has host bits set; write '10.1.0.0/16' instead."
    ]


def test_non_canonical_ipv6_spelling_and_wrong_family_are_rejected() -> None:
    messages = validate_resource(
        "pool-cidrs-canonical",
        RAW_POOL_TYPE,
        raw(
            ipv4={"cidrs": ["fd00::/104"], "maskSize": 24},
            ipv6={"cidrs": ["FD00:0::/104", "garbage"], "maskSize": 120},
        ),
    )
    assert "ipv4 CIDR 'fd00::/104' is not an IPv4 CIDR" in messages[0]
    assert (
        "ipv6 CIDR 'FD00:0::/104' is not written in canonical form; write 'fd00::/104' instead."
        in messages[1]
    )
    assert "ipv6 CIDR 'garbage' is not in address/prefix-length form" in messages[2]
    assert len(messages) == 3


def test_overlapping_cidrs_inside_one_pool_and_empty_families_are_rejected() -> None:
    messages = validate_resource(
        "pool-cidrs-canonical",
        RAW_POOL_TYPE,
        raw(
            ipv4={"cidrs": ["10.1.0.0/16", "10.1.128.0/17"], "maskSize": 24},
            ipv6={"cidrs": [], "maskSize": 120},
        ),
    )
    assert any("overlapping ipv4 CIDRs '10.1.0.0/16' and '10.1.128.0/17'" in m for m in messages)
    assert any("empty ipv6.cidrs list" in m for m in messages)
    assert validate_resource("pool-cidrs-canonical", RAW_POOL_TYPE, raw()) == [
        "CiliumPodIPPool 'dc1-pool' declares neither spec.ipv4 nor spec.ipv6; "
        "add at least one address family."
    ]


@pytest.mark.parametrize(
    ("ipv4", "fragment"),
    [
        ({"cidrs": ["10.1.0.0/16"]}, "ipv4.maskSize is missing or not an integer; set it between 16 and 32."),
        ({"cidrs": ["10.1.0.0/16"], "maskSize": 24.5}, "ipv4.maskSize is missing or not an integer"),
        ({"cidrs": ["10.1.0.0/16"], "maskSize": 33}, "ipv4.maskSize 33 is outside the allowed range 16..32"),
        ({"cidrs": ["10.1.0.0/16"], "maskSize": 8}, "ipv4.maskSize 8 is outside the allowed range 16..32"),
        (
            {"cidrs": ["10.1.0.0/26"], "maskSize": 24},
            "ipv4.maskSize 24 is a bigger block than its CIDR '10.1.0.0/26'; set maskSize to at least 26",
        ),
    ],
)
def test_mask_size_bounds_violations(ipv4: dict[str, Any], fragment: str) -> None:
    messages = validate_resource("pool-mask-size-bounds", RAW_POOL_TYPE, raw(ipv4=ipv4))
    assert len(messages) == 1
    assert fragment in messages[0]
    assert messages[0].startswith("CiliumPodIPPool 'dc1-pool' ")


def test_mask_size_bounds_are_configurable() -> None:
    props = raw(ipv4={"cidrs": ["10.0.0.0/8"], "maskSize": 12})
    assert validate_resource("pool-mask-size-bounds", RAW_POOL_TYPE, props) != []
    assert validate_resource("pool-mask-size-bounds", RAW_POOL_TYPE, props, {"ipv4MaskSizeMin": 8}) == []


@pytest.mark.parametrize(
    ("mask", "allow_first", "allow_last", "usable", "ok"),
    [
        (28, False, False, 14, True),
        (29, False, False, 6, False),  # 8 addresses minus first and last (MP-POOL-4)
        (29, True, True, 8, True),  # both reservations waived
        (29, True, False, 7, False),
        (31, False, False, 2, False),  # exempt from reservations but still only 2 addresses
    ],
)
def test_usable_addresses_per_block_honour_mp_pool_4(
    mask: int, allow_first: bool, allow_last: bool, usable: int, ok: bool
) -> None:
    props = raw(
        ipv4={"cidrs": ["10.1.0.0/16"], "maskSize": mask}, allowFirstIP=allow_first, allowLastIP=allow_last
    )
    messages = validate_resource("pool-block-usable-addresses", RAW_POOL_TYPE, props)
    if ok:
        assert messages == []
    else:
        assert len(messages) == 1
        assert f"blocks of /{mask} offer only {usable} usable pod addresses" in messages[0]
        assert "fewer than the required 8" in messages[0]


def test_usable_addresses_threshold_is_configurable_and_suggests_a_mask() -> None:
    props = raw(ipv4={"cidrs": ["10.1.0.0/16"], "maskSize": 26})
    assert validate_resource("pool-block-usable-addresses", RAW_POOL_TYPE, props) == []
    messages = validate_resource(
        "pool-block-usable-addresses", RAW_POOL_TYPE, props, {"minUsableAddressesPerBlock": 100}
    )
    assert messages and messages[0].endswith("set ipv4.maskSize to 25 or less.")


def test_ipv6_pool_may_not_be_split_into_more_than_2_to_16_blocks() -> None:
    """Cilium's cidrset limits an IPv6 CIDR to maskSize - prefix <= 16."""
    good = raw(ipv6={"cidrs": ["fd00::/104"], "maskSize": 120})
    assert validate_resource("pool-ipv6-mask-rules", RAW_POOL_TYPE, good) == []
    bad = raw(ipv6={"cidrs": ["fd00::/48"], "maskSize": 120})
    messages = validate_resource("pool-ipv6-mask-rules", RAW_POOL_TYPE, bad)
    assert len(messages) == 1
    assert "ipv6 CIDR 'fd00::/48' would be split into 2^72 blocks of /120" in messages[0]
    assert "prefix /104 or shorter" in messages[0] and "maskSize of at most 64" in messages[0]


def test_ipv6_mask_bounds_and_usable_addresses_apply_to_ipv6_too() -> None:
    props = raw(ipv6={"cidrs": ["fd00::/104"], "maskSize": 126})
    usable = validate_resource("pool-block-usable-addresses", RAW_POOL_TYPE, props)
    assert usable and "ipv6 blocks of /126 offer only 2 usable pod addresses" in usable[0]
    too_big = raw(ipv6={"cidrs": ["fd00::/32"], "maskSize": 48})
    assert (
        "ipv6.maskSize 48 is outside the allowed range 64..128"
        in validate_resource("pool-mask-size-bounds", RAW_POOL_TYPE, too_big)[0]
    )


def test_pool_policies_ignore_unrelated_resources() -> None:
    subnet = {"vpc_id": "vpc-1", "cidr_block": "10.0.0.1/24", "__provider": "pickled"}
    assert validate_resource("pool-cidrs-canonical", DYNAMIC_TYPE, subnet) == []
    assert validate_resource("pool-cidrs-canonical", OUR_DYNAMIC_PREFIX + "DualStackSubnet", subnet) == []
    assert validate_resource("pool-cidrs-canonical", "kubernetes:core/v1:ConfigMap", {"data": {}}) == []
