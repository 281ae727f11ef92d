"""CiliumPodIPPool check/diff rules without a cluster (MP-POOL-2/3/5, CIDR syntax, maskSize bounds)."""

from __future__ import annotations

from typing import Any

import pytest

from provider._props import UNKNOWN
from provider.pod_ip_pool import CiliumPodIPPoolProvider, pool_spec
from provider.pool_rules import immutable_changes, nodes_using, overlap_errors, removed_cidrs, spec_errors

NO_CLUSTER = "/nonexistent/kubeconfig"  # check() must not need a cluster to validate syntax


def check(spec: Any, olds: dict[str, Any] | None = None, name: str = "blue") -> list[str]:
    provider = CiliumPodIPPoolProvider()
    result = provider.check(olds or {}, {"name": name, "spec": spec, "kubeconfig": NO_CLUSTER})
    return [f.reason for f in result.failures]


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ({}, "at least one family"),
        ({"ipv4": {"cidrs": [], "maskSize": 24}}, "at least one CIDR"),
        ({"ipv4": {"cidrs": ["10.0.0.1/16"], "maskSize": 24}}, "use the network address 10.0.0.0/16"),
        ({"ipv4": {"cidrs": ["10.0.0.0/33"], "maskSize": 24}}, "not a valid CIDR"),
        ({"ipv4": {"cidrs": ["fd00::/64"], "maskSize": 80}}, "not an IPv4 CIDR"),
        ({"ipv4": {"cidrs": ["10.0.0.0/24"], "maskSize": 16}}, "use a maskSize >= 24"),
        ({"ipv4": {"cidrs": ["10.0.0.0/8"], "maskSize": 33}}, "between 1 and 32"),
        ({"ipv6": {"cidrs": ["fd00::/104"], "maskSize": 129}}, "between 1 and 128"),
        ({"ipv6": {"cidrs": ["fd00::/104"], "maskSize": 96}}, "use a maskSize >= 104"),
        ({"ipv4": {"cidrs": ["10.0.0.0/16"], "maskSize": "24"}}, "must be an integer"),
        ({"ipv4": {"cidrs": ["10.0.0.0/16", "10.0.128.0/17"], "maskSize": 24}}, "of the same pool overlap"),
        ({"ipv4": {"cidrs": ["10.0.0.0/16"], "maskSize": 24}, "podSelector": {"bad": 1}}, "label selector"),
        ({"ipv4": {"cidrs": ["10.0.0.0/16"], "maskSize": 24}, "allowFirstIP": "yes"}, "true or false"),
    ],
)
def test_check_rejects_invalid_specs_with_a_clear_reason(spec: dict[str, Any], needle: str) -> None:
    reasons = check(spec)
    assert reasons and any(needle in r for r in reasons), reasons


def test_check_accepts_valid_dual_stack_pool_and_unknowns() -> None:
    spec = pool_spec(
        ipv4_cidrs=["10.10.0.0/16"],
        ipv4_mask_size=24,
        ipv6_cidrs=["fd00:10::/104"],
        ipv6_mask_size=120,
        pod_selector={"matchLabels": {"app": "db"}},
    )
    assert check(spec) == []
    assert check({"ipv4": {"cidrs": [UNKNOWN], "maskSize": 24}}) == []
    assert check(UNKNOWN) == []
    assert check({"ipv4": {"cidrs": ["10.0.0.0/24"], "maskSize": 24}}) == []  # mask == prefix is allowed


@pytest.mark.parametrize("field", ["maskSize", "allowFirstIP", "allowLastIP"])
def test_mp_pool_3_immutable_change_refused_in_check_and_diff(field: str) -> None:
    old = {"ipv4": {"cidrs": ["10.0.0.0/16"], "maskSize": 24}}
    new: dict[str, Any] = {"ipv4": {"cidrs": ["10.0.0.0/16"], "maskSize": 24}}
    if field == "maskSize":
        new["ipv4"]["maskSize"] = 26
    else:
        new[field] = True
    reasons = check(new, olds={"name": "blue", "spec": old})
    assert len(reasons) == 1 and "MP-POOL-3" in reasons[0] and "cilium-ipam pools migrate" in reasons[0]
    provider = CiliumPodIPPoolProvider()
    with pytest.raises(RuntimeError, match="cannot change once the pool exists.*cilium-ipam pools migrate"):
        provider.diff("blue", {"name": "blue", "spec": old}, {"name": "blue", "spec": new})


def test_diff_updates_cidrs_in_place_and_replaces_on_rename() -> None:
    provider = CiliumPodIPPoolProvider()
    old = {"name": "blue", "spec": {"ipv4": {"cidrs": ["10.0.0.0/16"], "maskSize": 24}}}
    grown = {"name": "blue", "spec": {"ipv4": {"cidrs": ["10.0.0.0/16", "10.1.0.0/16"], "maskSize": 24}}}
    diff = provider.diff("blue", old, grown)
    assert diff.changes and diff.replaces == []
    renamed = provider.diff("blue", old, {**old, "name": "green"})
    assert renamed.replaces == ["name"] and renamed.delete_before_replace
    assert provider.diff("blue", old, dict(old)).changes is False
    assert immutable_changes(old["spec"], {"ipv6": {"cidrs": ["fd00::/104"], "maskSize": 120}}) == []


def test_mp_pool_2_nodes_using_reads_allocated_cidrs() -> None:
    nodes = [
        {
            "metadata": {"name": "n1"},
            "spec": {
                "ipam": {
                    "pools": {
                        "allocated": [
                            {"pool": "blue", "cidrs": ["10.0.3.0/24"]},
                            {"pool": "red", "cidrs": ["10.9.0.0/24"]},
                        ]
                    }
                }
            },
        },
        {
            "metadata": {"name": "n2"},
            "spec": {"ipam": {"pools": {"allocated": [{"pool": "blue", "cidrs": []}]}}},
        },
        {"metadata": {"name": "n3"}, "spec": {}},
    ]
    assert nodes_using(nodes, "blue") == {"n1": ["10.0.3.0/24"]}
    old = {"ipv4": {"cidrs": ["10.0.0.0/16", "10.1.0.0/16"], "maskSize": 24}}
    new = {"ipv4": {"cidrs": ["10.1.0.0/16"], "maskSize": 24}}
    assert nodes_using(nodes, "blue", removed_cidrs(old, new)) == {"n1": ["10.0.3.0/24"]}
    assert nodes_using(nodes, "blue", removed_cidrs(new, old)) == {}


def test_mp_pool_5_overlap_names_both_pools() -> None:
    spec = {"ipv4": {"cidrs": ["10.0.0.0/16"], "maskSize": 24}}
    others = [
        {"metadata": {"name": "red"}, "spec": {"ipv4": {"cidrs": ["10.0.128.0/20"], "maskSize": 28}}},
        {"metadata": {"name": "blue"}, "spec": spec},
        {"metadata": {"name": "far"}, "spec": {"ipv4": {"cidrs": ["10.1.0.0/16"], "maskSize": 24}}},
    ]
    errors = overlap_errors("blue", spec, others)
    assert len(errors) == 1 and "blue" in errors[0] and "red" in errors[0] and "MP-POOL-5" in errors[0]
    assert spec_errors(spec) == []


def test_unknown_immutable_values_are_not_refused_in_preview() -> None:
    old = {"ipv4": {"cidrs": ["10.0.0.0/16"], "maskSize": 24}}
    new = {"ipv4": {"cidrs": ["10.0.0.0/16"], "maskSize": UNKNOWN}, "allowFirstIP": UNKNOWN}
    assert immutable_changes(old, new) == []
    assert check(new, olds={"name": "blue", "spec": old}) == []


def test_engine_doubles_are_read_as_whole_numbers() -> None:
    """The engine sends numbers as doubles (24.0); found by the real-engine test."""
    assert check({"ipv4": {"cidrs": ["10.0.0.0/16"], "maskSize": 24.0}}) == []
    assert any(
        "must be an integer" in r for r in check({"ipv4": {"cidrs": ["10.0.0.0/16"], "maskSize": 24.5}})
    )
    result = CiliumPodIPPoolProvider().check(
        {}, {"name": "b", "spec": {"ipv4": {"cidrs": ["10.0.0.0/16"], "maskSize": 24.0}}}
    )
    assert (
        result.inputs["spec"]["ipv4"]["maskSize"] == 24
        and type(result.inputs["spec"]["ipv4"]["maskSize"]) is int
    )
