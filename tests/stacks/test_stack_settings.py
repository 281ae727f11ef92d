"""Pure stack settings: CRD-shaped config parsing, the ENI subnet layout and the IRSA trust policy."""

from __future__ import annotations

import json

import pytest

from stacks.eni.plan import irsa_trust_policy, zone_subnets
from stacks.settings import (
    SettingsError,
    node_configs_from_config,
    pools_from_config,
    seed_dc_node_configs,
    seed_dc_pools,
    subnets_from_config,
)


def test_pools_parse_crd_shaped_config_sorted_by_name() -> None:
    pools = pools_from_config(
        {
            "b": {"ipv6": {"cidrs": ["fd00::/104"], "maskSize": 120}},
            "a": {"ipv4": {"cidrs": ["10.1.0.0/16"], "maskSize": 24}, "allowLastIP": True},
        }
    )
    assert [p.name for p in pools] == ["a", "b"]
    assert (
        pools[0].ipv4_cidrs == ("10.1.0.0/16",) and pools[0].ipv4_mask_size == 24 and pools[0].allow_last_ip
    )
    assert pools[1].ipv6_mask_size == 120 and pools[1].ipv4_cidrs == ()


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"p": {}}, "config `pools.p` needs ipv4 and/or ipv6 with cidrs and maskSize."),
        (
            {"p": {"ipv4": {"cidrs": "10.0.0.0/8", "maskSize": 24}}},
            "`pools.p.ipv4.cidrs` must be a list of strings",
        ),
        (
            {"p": {"ipv4": {"cidrs": ["10.0.0.0/8"], "maskSize": "24"}}},
            "`pools.p.ipv4.maskSize` must be a whole number",
        ),
        ([1, 2], "config `pools` must be an object"),
    ],
)
def test_malformed_pools_are_one_clear_sentence(raw: object, message: str) -> None:
    with pytest.raises(SettingsError) as error:
        pools_from_config(raw)
    assert message in str(error.value)


def test_node_configs_accept_default_pool_shorthand_and_require_a_selector() -> None:
    (config,) = node_configs_from_config({"gpu": {"defaultPool": "gpu-pool", "nodeSelector": {}}})
    assert config.defaults == {"ipam-default-ip-pool": "gpu-pool"}
    assert config.namespace == "kube-system" and config.node_selector == {}
    with pytest.raises(SettingsError, match="needs a nodeSelector"):
        node_configs_from_config({"gpu": {"defaultPool": "gpu-pool"}})


def test_seed_defaults_match_the_multi_pool_seed_example() -> None:
    """Seed 001: dc1-pool 10.1.0.0/16 and dc2-pool 10.2.0.0/16 with /24, selected by zone label."""
    assert [(p.name, p.ipv4_cidrs, p.ipv4_mask_size) for p in seed_dc_pools()] == [
        ("dc1-pool", ("10.1.0.0/16",), 24),
        ("dc2-pool", ("10.2.0.0/16",), 24),
    ]
    assert [(c.name, dict(c.defaults), dict(c.node_selector)) for c in seed_dc_node_configs()] == [
        (
            "ip-pool-dc1",
            {"ipam-default-ip-pool": "dc1-pool"},
            {"matchLabels": {"topology.kubernetes.io/zone": "dc1"}},
        ),
        (
            "ip-pool-dc2",
            {"ipam-default-ip-pool": "dc2-pool"},
            {"matchLabels": {"topology.kubernetes.io/zone": "dc2"}},
        ),
    ]


def test_subnets_need_a_cidr() -> None:
    (subnet,) = subnets_from_config([{"cidr": "10.0.1.0/24", "availabilityZone": "us-east-1a"}])
    assert subnet.name == "pods-0" and subnet.ipv6_cidr is None
    with pytest.raises(SettingsError, match=r"subnets\[0\]` needs a `cidr`"):
        subnets_from_config([{"name": "x"}])


def test_zone_subnets_carve_the_vpc_in_zone_order_and_refuse_what_does_not_fit() -> None:
    layout = zone_subnets("10.0.0.0/16", ["a", "b"], 20)
    assert [(s.name, s.cidr, s.availability_zone) for s in layout] == [
        ("pods-a", "10.0.0.0/20", "a"),
        ("pods-b", "10.0.16.0/20", "b"),
    ]
    with pytest.raises(SettingsError, match="room for fewer than 3 /17 subnets"):
        zone_subnets("10.0.0.0/16", ["a", "b", "c"], 17)
    with pytest.raises(SettingsError, match="must be between /16 and /28"):
        zone_subnets("10.0.0.0/16", ["a"], 29)
    with pytest.raises(SettingsError, match="not a canonical IPv4 CIDR"):
        zone_subnets("10.0.0.1/16", ["a"])


def test_irsa_trust_policy_binds_exactly_one_service_account() -> None:
    document = json.loads(irsa_trust_policy("arn:oidc", "https://issuer.example/id/X/", "kube-system", "op"))
    (statement,) = document["Statement"]
    assert statement["Principal"] == {"Federated": "arn:oidc"}
    assert statement["Condition"]["StringEquals"] == {
        "issuer.example/id/X:sub": "system:serviceaccount:kube-system:op",
        "issuer.example/id/X:aud": "sts.amazonaws.com",
    }
