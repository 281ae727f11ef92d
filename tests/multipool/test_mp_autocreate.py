"""MP-CFG-1: auto-create pools from the Helm map form and Cilium's flag form."""

from __future__ import annotations

import pytest

from reconciler.multipool.autocreate import (
    AutoCreateError,
    parse_auto_create,
    pools_to_create,
    split_map_flag,
)
from reconciler.multipool.pools import PoolFamily


def test_mp_cfg_1_helm_map_form() -> None:
    pools = parse_auto_create(
        {
            "other": {"ipv4": {"cidrs": ["10.20.0.0/16"], "maskSize": 24}},
            "default": {
                "ipv4": {"cidrs": "10.10.0.0/16, 10.11.0.0/16", "maskSize": "24"},
                "ipv6": {"cidrs": ["fd00::/104"], "maskSize": 120},
            },
        }
    )
    assert [p.name for p in pools] == ["default", "other"]
    assert pools[0].ipv4 == PoolFamily(("10.10.0.0/16", "10.11.0.0/16"), 24)
    assert pools[0].ipv6 == PoolFamily(("fd00::/104",), 120)
    assert pools[0].to_obj()["spec"]["ipv4"] == {"cidrs": ["10.10.0.0/16", "10.11.0.0/16"], "maskSize": 24}


def test_mp_cfg_1_flag_form_several_pools_comma_separated() -> None:
    flag = (
        "a=ipv4-cidrs:10.0.0.0/16,10.1.0.0/16;ipv4-mask-size:24,"
        "b=ipv4-cidrs:10.2.0.0/16;ipv4-mask-size:26;ipv6-cidrs:fd00::/104;ipv6-mask-size:120;allow-first-ip:true"
    )
    a, b = parse_auto_create(flag)
    assert a.ipv4 == PoolFamily(("10.0.0.0/16", "10.1.0.0/16"), 24) and a.ipv6 is None
    assert b.ipv4 == PoolFamily(("10.2.0.0/16",), 26)
    assert b.ipv6 == PoolFamily(("fd00::/104",), 120), "IPv6 CIDRs keep their colons"
    assert b.allow_first_ip and not b.allow_last_ip


def test_mp_cfg_1_flag_form_repeated_flag_json_and_spaces() -> None:
    repeated = parse_auto_create(
        ["a=ipv4-cidrs:10.0.0.0/16;ipv4-mask-size:24", "b = ipv4-cidrs: 10.2.0.0/16 ; ipv4-mask-size: 24"]
    )
    assert [p.name for p in repeated] == ["a", "b"]
    js = parse_auto_create('{"x": "ipv4-cidrs:10.9.0.0/16;ipv4-mask-size:24"}')
    assert js[0].name == "x" and js[0].ipv4 == PoolFamily(("10.9.0.0/16",), 24)


def test_split_map_flag_keeps_commas_inside_values() -> None:
    assert split_map_flag("a=1,2,b=3") == ["a=1,2", "b=3"]
    assert split_map_flag("") == []


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("a=ipv4-cidrs:10.0.0.1/16;ipv4-mask-size:24", "use the network address 10.0.0.0/16"),
        ("a=ipv4-cidrs:10.0.0.0/16", "add ipv4-mask-size"),
        ("a=ipv4-mask-size:24", "add ipv4-cidrs"),
        ("a=ipv4-cidrs:10.0.0.0/16;ipv4-mask-size:x", "is not a whole number"),
        ("a=ipv4-cidrs:10.0.0.0/16;ipv4-mask-size:2\u00b2", "is not a whole number"),
        ("a=ipv4-cidrs:10.0.0.0/16;ipv4-mask-size:33", "out of range"),
        ("a=ipv4-cidrs:10.0.0.0/16;ipv4-mask-size:8", "use a maskSize of at least 16"),
        ("a=ipv4-cidrs:10.0.0.0/16;mask:24", "unknown key 'mask'"),
        ("a=ipv4-cidrs10.0.0.0/16", "has no ':'"),
        ("justaname", "is not of the form <pool>="),
        ("a=ipv4-cidrs:fd00::/104;ipv4-mask-size:24", "an IPv4 CIDR is expected"),
        ("{not json", "not valid JSON"),
        (
            {"a": {"ipv4": {"cidrs": ["10.0.0.0/16"], "maskSize": "big"}}},
            "maskSize 'big' is not a whole number",
        ),
        (
            {"a": {"ipv4": {"cidrs": ["10.0.0.0/16"], "maskSize": "2\u2463"}}},
            "is not a whole number",
        ),
        (
            {"a": {"ipv4": {"cidrs": ["10.0.0.0/16"], "maskSize": 24}, "selector": {}}},
            "unknown key(s) selector",
        ),
    ],
)
def test_mp_cfg_1_malformed_entries_give_one_clear_sentence(value: object, fragment: str) -> None:
    with pytest.raises(AutoCreateError) as err:
        parse_auto_create(value)
    assert fragment in str(err.value)
    assert "\n" not in str(err.value)


def test_existing_pools_are_never_updated() -> None:
    wanted = parse_auto_create(
        "a=ipv4-cidrs:10.0.0.0/16;ipv4-mask-size:24,b=ipv4-cidrs:10.1.0.0/16;ipv4-mask-size:24"
    )
    assert [p.name for p in pools_to_create(wanted, ["a"])] == ["b"]
