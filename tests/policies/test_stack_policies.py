"""Stack policies: overlaps (MP-POOL-5), default pools (MP-NODE-1), node-config conflicts, capacity."""

from __future__ import annotations

from typing import Any

from policy_harness import dynamic_pool, node_config, raw_pool, stack_resource, validate_stack
from pulumi_policy import EnforcementLevel
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE

from policies.rules.pack import POLICY_BY_NAME
from policies.rules.selectors import can_overlap

DC1 = raw_pool("dc1-pool", ipv4={"cidrs": ["10.1.0.0/16"], "maskSize": 24})
DC2 = raw_pool("dc2-pool", ipv4={"cidrs": ["10.2.0.0/16"], "maskSize": 24})
ZONE = "topology.kubernetes.io/zone"


def seed_stack() -> list:
    """The seed's per-DC example: two pools and two CiliumNodeConfigs keyed on the zone label."""
    return [
        DC1,
        DC2,
        node_config("ip-pool-dc1", "dc1-pool", {"matchLabels": {ZONE: "dc1"}}),
        node_config("ip-pool-dc2", "dc2-pool", {"matchLabels": {ZONE: "dc2"}}),
    ]


def test_seed_example_passes_every_stack_policy() -> None:
    for policy in ("pools-no-overlap", "default-pool-exists", "node-config-no-conflicts", "pool-capacity"):
        assert validate_stack(policy, seed_stack()) == [], policy


def test_overlapping_pools_are_refused_and_the_violation_points_at_the_later_pool() -> None:
    """MP-POOL-5 across both resource sources: a dynamic pool overlapping a raw CR pool."""
    clash = dynamic_pool("dc3-pool", ipv4={"cidrs": ["10.1.128.0/17"], "maskSize": 24})
    violations = validate_stack("pools-no-overlap", [*seed_stack(), clash])
    assert violations == [
        (
            "CiliumPodIPPool 'dc3-pool' CIDR 10.1.128.0/17 overlaps CiliumPodIPPool 'dc1-pool' CIDR "
            "10.1.0.0/16; pod IPs must be unique in the cluster (MP-POOL-5), so give CiliumPodIPPool "
            "'dc3-pool' a disjoint range.",
            clash.urn,
        )
    ]


def test_ipv6_overlaps_are_found_and_families_never_mix() -> None:
    a = raw_pool("v6-a", ipv6={"cidrs": ["fd00::/104"], "maskSize": 120})
    b = raw_pool("v6-b", ipv6={"cidrs": ["fd00::/108"], "maskSize": 120})
    v4 = raw_pool("v4", ipv4={"cidrs": ["10.9.0.0/16"], "maskSize": 24})
    assert len(validate_stack("pools-no-overlap", [a, b, v4])) == 1
    assert validate_stack("pools-no-overlap", [a, v4]) == []


def test_pools_may_not_overlap_configured_vpc_or_service_cidrs_or_stack_vpcs() -> None:
    config = {"vpcCidrs": ["10.0.0.0/16"], "serviceCidrs": ["10.2.128.0/20"]}
    inside_vpc = raw_pool("in-vpc", ipv4={"cidrs": ["10.0.64.0/18"], "maskSize": 24})
    violations = validate_stack("pools-no-overlap", [*seed_stack(), inside_vpc], config)
    messages = sorted(message for message, _ in violations)
    assert len(messages) == 2
    assert messages[0].startswith("CiliumPodIPPool 'dc2-pool' CIDR 10.2.0.0/16 overlaps the service CIDR")
    assert messages[1].startswith(
        "CiliumPodIPPool 'in-vpc' CIDR 10.0.64.0/18 overlaps the VPC CIDR 10.0.0.0/16"
    )
    vpc = stack_resource("aws:ec2/vpc:Vpc", {"cidrBlock": "10.1.0.0/16"}, "main")
    stack_vpc = validate_stack("pools-no-overlap", [DC1, vpc])
    assert stack_vpc[0][0].startswith("CiliumPodIPPool 'dc1-pool' CIDR 10.1.0.0/16 overlaps VPC 'main' CIDR")


def test_pools_with_unknown_cidrs_are_skipped_during_preview() -> None:
    unknown = raw_pool("later", ipv4={"cidrs": [UNKNOWN_STRING_VALUE], "maskSize": 24})
    assert validate_stack("pools-no-overlap", [*seed_stack(), unknown]) == []


def test_default_pool_must_name_an_existing_pool() -> None:
    """MP-NODE-1: ipam-default-ip-pool naming a missing pool is refused unless listed as known."""
    typo = node_config("ip-pool-dc3", "dc3-pool", {"matchLabels": {ZONE: "dc3"}})
    violations = validate_stack("default-pool-exists", [*seed_stack(), typo])
    assert violations == [
        (
            "CiliumNodeConfig 'kube-system/ip-pool-dc3' sets ipam-default-ip-pool to 'dc3-pool', which is no "
            "CiliumPodIPPool of this stack; declare that pool, fix the name, or list it in the policy's "
            "knownPools.",
            typo.urn,
        )
    ]
    assert validate_stack("default-pool-exists", [*seed_stack(), typo], {"knownPools": ["dc3-pool"]}) == []


def test_node_configs_with_overlapping_selectors_and_different_defaults_are_flagged() -> None:
    everyone = node_config("all-nodes", "dc2-pool", {})
    violations = validate_stack("node-config-no-conflicts", [*seed_stack(), everyone])
    assert len(violations) == 1  # overlaps both per-DC configs, but agrees with ip-pool-dc2
    assert (
        "'kube-system/all-nodes' and 'kube-system/ip-pool-dc1' can select the same nodes "
        "(e.g. one with topology.kubernetes.io/zone=dc1)" in violations[0][0]
    )
    assert "set ipam-default-ip-pool to 'dc2-pool' and 'dc1-pool'" in violations[0][0]


def test_node_configs_that_agree_or_cannot_meet_are_fine() -> None:
    agreeing = node_config("dc1-extra", "dc1-pool", {"matchLabels": {ZONE: "dc1", "role": "gpu"}})
    absent_selector = node_config("nobody", "dc2-pool", None)  # absent selector matches no node
    disjoint = node_config(
        "not-dc1", "dc2-pool", {"matchExpressions": [{"key": ZONE, "operator": "NotIn", "values": ["dc1"]}]}
    )
    resources = [*seed_stack(), agreeing, absent_selector]
    assert validate_stack("node-config-no-conflicts", resources) == []
    assert validate_stack("node-config-no-conflicts", [*seed_stack()[:3], disjoint]) == []


def test_unsupported_selector_operator_is_reported() -> None:
    bad = node_config(
        "weird", "dc1-pool", {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]}
    )
    violations = validate_stack("node-config-no-conflicts", [bad])
    assert violations == [
        (
            "CiliumNodeConfig 'kube-system/weird' nodeSelector uses unsupported operator 'Gt'; "
            "use In, NotIn, Exists or DoesNotExist.",
            bad.urn,
        )
    ]


def test_selector_overlap_reasoning() -> None:
    dc1 = {"matchLabels": {ZONE: "dc1"}}
    assert can_overlap(dc1, {})
    assert not can_overlap(dc1, {"matchLabels": {ZONE: "dc2"}})
    assert not can_overlap(dc1, {"matchExpressions": [{"key": ZONE, "operator": "DoesNotExist"}]})
    assert can_overlap(dc1, {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["dc1", "dc2"]}]})
    assert can_overlap(
        {"matchExpressions": [{"key": "x", "operator": "NotIn", "values": ["a"]}]},
        {"matchExpressions": [{"key": "x", "operator": "Exists"}]},
    )


def test_capacity_is_advisory_and_counts_blocks_per_node() -> None:
    small = raw_pool("small", ipv4={"cidrs": ["10.5.0.0/22"], "maskSize": 24})  # 4 blocks
    assert validate_stack("pool-capacity", [small], {"nodeCount": 4}) == []
    violations = validate_stack("pool-capacity", [small], {"nodeCount": 5})
    assert violations == [
        (
            "CiliumPodIPPool 'small' has 4 ipv4 blocks of /24 but 5 nodes need 5; add CIDRs to the pool or "
            "lower the node count it must serve.",
            small.urn,
        )
    ]
    # 300 pods per node need two /24 blocks (254 usable each): 2 nodes x 2 blocks fit, 3 do not.
    assert validate_stack("pool-capacity", [small], {"nodeCount": 2, "podsPerNode": 300}) == []
    assert validate_stack("pool-capacity", [small], {"poolNodeCounts": {"small": 3}, "podsPerNode": 300})
    assert POLICY_BY_NAME["pool-capacity"].enforcement_level is EnforcementLevel.ADVISORY


def test_correctness_policies_are_mandatory_and_every_policy_has_a_description() -> None:
    for name, policy in POLICY_BY_NAME.items():
        assert policy.description
        if name != "pool-capacity":
            assert policy.enforcement_level is EnforcementLevel.MANDATORY, name


def selector_pool(name: str, cidr: str, **selectors: Any) -> Any:
    return raw_pool(name, ipv4={"cidrs": [cidr], "maskSize": 24}, **selectors)


def test_pools_whose_selectors_can_match_one_pod_are_refused() -> None:
    """MP-SEL-2: two selector matches for one family make the pod's allocation fail."""
    team_a = selector_pool("team-a", "10.20.0.0/16", podSelector={"matchLabels": {"team": "a"}})
    prod_ns = selector_pool("prod", "10.21.0.0/16", namespaceSelector={"matchLabels": {"env": "prod"}})
    violations = validate_stack("pool-selectors-unambiguous", [team_a, prod_ns, DC1])
    assert violations == [
        (
            "CiliumPodIPPools 'prod' and 'team-a' can both select the same ipv4 pod (e.g. pod labels "
            "team=a in a namespace with labels env=prod), so its allocation fails (MP-SEL-2); make their "
            "podSelector / namespaceSelector disjoint.",
            team_a.urn,
        )
    ]


def test_disjoint_selectors_other_families_and_selectorless_pools_are_fine() -> None:
    team_a = selector_pool("team-a", "10.20.0.0/16", podSelector={"matchLabels": {"team": "a"}})
    team_b = selector_pool("team-b", "10.22.0.0/16", podSelector={"matchLabels": {"team": "b"}})
    v6_team_a = raw_pool(
        "v6-team-a",
        ipv6={"cidrs": ["fd00::/104"], "maskSize": 120},
        podSelector={"matchLabels": {"team": "a"}},
    )
    assert validate_stack("pool-selectors-unambiguous", [team_a, team_b, v6_team_a, DC1, DC2]) == []
