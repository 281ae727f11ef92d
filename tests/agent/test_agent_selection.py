"""MP-SEL-1..4 and MP-NODE-1: pool selection table tests (both scopes, both families, selectors)."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from reconciler.agent.agent import Agent, AgentConfig, PodStatus
from reconciler.agent.pods import PodInfo
from reconciler.agent.selection import (
    SOURCE_DEFAULT,
    SOURCE_NAMESPACE,
    SOURCE_POD,
    SOURCE_SELECTOR,
    select_pool,
)
from reconciler.model import CiliumNode
from reconciler.multipool.pools import CiliumNodeConfig, CiliumPodIPPool, PoolFamily, node_defaults
from reconciler.multipool.selectors import LabelSelector, Requirement, SelectorError

V4 = PoolFamily(("10.0.0.0/16",), 24)
V6 = PoolFamily(("fd00::/104",), 120)


def mk(
    name: str,
    v6: bool = True,
    pod: Mapping[str, str] | None = None,
    ns: Mapping[str, str] | None = None,
    exprs: tuple[Requirement, ...] = (),
) -> CiliumPodIPPool:
    return CiliumPodIPPool(
        name,
        ipv4=V4,
        ipv6=V6 if v6 else None,
        pod_selector=None if pod is None and not exprs else LabelSelector(dict(pod or {}), exprs),
        namespace_selector=None if ns is None else LabelSelector(dict(ns)),
    )


POOLS = {
    p.name: p
    for p in [
        mk("default"),
        mk("blue"),
        mk("green"),
        mk("v4only", v6=False),
        mk("web", pod={"app": "web"}),
        mk("team-a", ns={"team": "a"}),
        mk("both", pod={"tier": "db"}, ns={"team": "b"}),
        mk("named", pod={"io.kubernetes.pod.name": "special"}),
        mk("in-ns", pod={"io.kubernetes.pod.namespace": "payments"}),
        mk("v4sel", v6=False, pod={"app": "legacy"}),
    ]
}


def pod(
    ann: Mapping[str, str] | None = None,
    ns_ann: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
    ns_labels: Mapping[str, str] | None = None,
    namespace: str = "apps",
    name: str = "p",
) -> PodInfo:
    return PodInfo(
        namespace, name, dict(labels or {}), dict(ann or {}), dict(ns_labels or {}), dict(ns_ann or {})
    )


V4KEY, V6KEY, ANY = "ipam.cilium.io/ipv4-pool", "ipam.cilium.io/ipv6-pool", "ipam.cilium.io/ip-pool"
REQ = {"ipam.cilium.io/require-pool-match": "true"}


@pytest.mark.parametrize(
    ("case", "p", "family", "pool", "source"),
    [
        (
            "MP-SEL-1 pod ipv4-pool beats pod ip-pool",
            pod({V4KEY: "blue", ANY: "green"}),
            4,
            "blue",
            SOURCE_POD,
        ),
        (
            "MP-SEL-1 pod ip-pool used for IPv6 without ipv6-pool",
            pod({V4KEY: "blue", ANY: "green"}),
            6,
            "green",
            SOURCE_POD,
        ),
        ("MP-SEL-1 pod ipv6-pool", pod({V6KEY: "blue"}), 6, "blue", SOURCE_POD),
        ("MP-SEL-1 pod ipv6-pool ignored for IPv4", pod({V6KEY: "blue"}), 4, "default", SOURCE_DEFAULT),
        (
            "MP-SEL-1 pod scope beats namespace scope",
            pod({ANY: "blue"}, {V4KEY: "green"}),
            4,
            "blue",
            SOURCE_POD,
        ),
        (
            "MP-SEL-1 namespace ipv4-pool beats namespace ip-pool",
            pod(None, {V4KEY: "blue", ANY: "green"}),
            4,
            "blue",
            SOURCE_NAMESPACE,
        ),
        (
            "MP-SEL-1 namespace ipv6-pool",
            pod(None, {V6KEY: "green", ANY: "blue"}),
            6,
            "green",
            SOURCE_NAMESPACE,
        ),
        ("MP-SEL-1 namespace ip-pool", pod(None, {ANY: "green"}), 6, "green", SOURCE_NAMESPACE),
        (
            "MP-SEL-1 namespace annotation beats selectors",
            pod(None, {ANY: "green"}, {"app": "web"}),
            4,
            "green",
            SOURCE_NAMESPACE,
        ),
        ("MP-SEL-1 podSelector", pod(labels={"app": "web"}), 4, "web", SOURCE_SELECTOR),
        ("MP-SEL-1 podSelector IPv6", pod(labels={"app": "web"}), 6, "web", SOURCE_SELECTOR),
        ("MP-SEL-1 namespaceSelector", pod(ns_labels={"team": "a"}), 4, "team-a", SOURCE_SELECTOR),
        (
            "MP-SEL-1 both selectors match",
            pod(labels={"tier": "db"}, ns_labels={"team": "b"}),
            4,
            "both",
            SOURCE_SELECTOR,
        ),
        (
            "MP-SEL-1 both set, namespace fails",
            pod(labels={"tier": "db"}, ns_labels={"team": "c"}),
            4,
            "default",
            SOURCE_DEFAULT,
        ),
        (
            "MP-SEL-1 both set, pod fails",
            pod(labels={"tier": "web"}, ns_labels={"team": "b"}),
            4,
            "default",
            SOURCE_DEFAULT,
        ),
        ("MP-SEL-1 synthetic pod name label", pod(name="special"), 4, "named", SOURCE_SELECTOR),
        ("MP-SEL-1 synthetic namespace label", pod(namespace="payments"), 6, "in-ns", SOURCE_SELECTOR),
        (
            "MP-SEL-1 pool without the family is no candidate",
            pod(labels={"app": "legacy"}),
            6,
            "default",
            SOURCE_DEFAULT,
        ),
        ("MP-SEL-1 pool with the family is", pod(labels={"app": "legacy"}), 4, "v4sel", SOURCE_SELECTOR),
        ("MP-SEL-3 no match -> default", pod(labels={"app": "other"}), 4, "default", SOURCE_DEFAULT),
        ("MP-SEL-3 unknown annotated pool -> default", pod({ANY: "ghost"}), 4, "default", SOURCE_DEFAULT),
        (
            "MP-SEL-3 require-pool-match satisfied by selector",
            pod(REQ, labels={"app": "web"}),
            4,
            "web",
            SOURCE_SELECTOR,
        ),
        (
            "MP-SEL-3 require-pool-match satisfied by annotation",
            pod({**REQ, ANY: "blue"}),
            4,
            "blue",
            SOURCE_POD,
        ),
    ],
)
def test_mp_sel_table(case: str, p: PodInfo, family: int, pool: str, source: str) -> None:
    sel = select_pool(p, family, POOLS, "default")
    assert (sel.pool, sel.source) == (pool, source), case
    assert sel.reason


@pytest.mark.parametrize(
    ("case", "p", "family", "fragment"),
    [
        (
            "MP-SEL-2 two matching pools",
            pod(labels={"app": "web"}, ns_labels={"team": "a"}),
            4,
            "several CiliumPodIPPools for IPv4 (team-a, web)",
        ),
        (
            "MP-SEL-2 two matching pools IPv6",
            pod(labels={"app": "web"}, ns_labels={"team": "a"}),
            6,
            "for IPv6",
        ),
        ("MP-SEL-3 require-pool-match on pod", pod(REQ), 4, "require-pool-match is set on the pod"),
        (
            "MP-SEL-3 require-pool-match on namespace",
            pod(None, REQ),
            6,
            "require-pool-match is set on the namespace",
        ),
        (
            "MP-SEL-3 unknown pool with require-pool-match",
            pod({ANY: "ghost"}, REQ),
            4,
            "pool ghost named by pod",
        ),
        ("annotated pool lacks the family", pod({ANY: "v4only"}), 6, "has no IPv6 CIDRs"),
    ],
)
def test_mp_sel_failures_say_why(case: str, p: PodInfo, family: int, fragment: str) -> None:
    sel = select_pool(p, family, POOLS, "default")
    assert sel.pool is None, case
    assert fragment in sel.reason


def test_mp_sel_match_expressions() -> None:
    exprs = (
        Requirement("env", "In", ("prod", "stage")),
        Requirement("canary", "DoesNotExist"),
        Requirement("tier", "NotIn", ("cache",)),
        Requirement("app", "Exists"),
    )
    pools = {"x": mk("x", exprs=exprs)}
    assert select_pool(pod(labels={"env": "prod", "app": "a"}), 4, pools, "d").pool == "x"
    assert select_pool(pod(labels={"env": "dev", "app": "a"}), 4, pools, "d").pool == "d"
    assert select_pool(pod(labels={"env": "prod", "app": "a", "canary": "1"}), 4, pools, "d").pool == "d"
    assert select_pool(pod(labels={"env": "prod", "app": "a", "tier": "cache"}), 4, pools, "d").pool == "d"
    assert select_pool(pod(labels={"env": "prod"}), 4, pools, "d").pool == "d"


def test_selector_parse_errors_name_the_object() -> None:
    with pytest.raises(SelectorError, match="operator 'Maybe'"):
        LabelSelector.from_obj(
            {"matchExpressions": [{"key": "a", "operator": "Maybe"}]}, "pool x podSelector"
        )
    with pytest.raises(SelectorError, match="without values"):
        LabelSelector.from_obj({"matchExpressions": [{"key": "a", "operator": "In"}]})


def cnc(name: str, pool: str, selector: dict | None) -> CiliumNodeConfig:
    return CiliumNodeConfig.from_obj(
        {
            "metadata": {"name": name, "namespace": "kube-system"},
            "spec": {
                "defaults": {"ipam-default-ip-pool": pool},
                **({} if selector is None else {"nodeSelector": selector}),
            },
        }
    )


def test_mp_node_1_node_configs_name_order_later_wins_and_selector_semantics() -> None:
    zone = "topology.kubernetes.io/zone"
    configs = [
        cnc("b-dc1", "dc1-pool", {"matchLabels": {zone: "dc1"}}),
        cnc("a-all", "everyone", {}),
        cnc("c-none", "nobody", None),
        cnc("d-expr", "dc2-pool", {"matchExpressions": [{"key": zone, "operator": "In", "values": ["dc2"]}]}),
    ]
    assert node_defaults(configs, {zone: "dc1"})["ipam-default-ip-pool"] == "dc1-pool"
    assert node_defaults(configs, {zone: "dc2"})["ipam-default-ip-pool"] == "dc2-pool"
    assert node_defaults(configs, {zone: "dc3"})["ipam-default-ip-pool"] == "everyone", "empty selector: all"
    assert node_defaults(configs[2:3], {}) == {}, "absent selector matches no node"


def test_mp_node_1_agent_uses_node_default_pool_for_unmatched_pods() -> None:
    zone = "topology.kubernetes.io/zone"
    agent = Agent(
        "n1",
        pools=POOLS.values(),
        node_labels={zone: "dc1"},
        node_configs=[cnc("ip-pool-dc1", "dc1-pool", {"matchLabels": {zone: "dc1"}})],
    )
    assert agent.default_pool == "dc1-pool"
    out = agent.add_pod(pod(labels={"app": "nothing"}))
    assert out.status is PodStatus.PENDING and out.pools == {4: "dc1-pool"}


def test_mp_sel_4_annotations_count_only_at_creation() -> None:
    agent = Agent("n1", pools=POOLS.values())
    first = agent.add_pod(pod({ANY: "blue"}))
    again = agent.add_pod(pod({ANY: "green"}))
    assert first.pools == again.pools == {4: "blue"}


def test_mp_sel_2_two_matches_block_the_pod_in_the_agent() -> None:
    agent = Agent("n1", pools=POOLS.values())
    out = agent.add_pod(pod(labels={"app": "web"}, ns_labels={"team": "a"}))
    assert out.status is PodStatus.BLOCKED and "MP-SEL-2" in out.reason


def test_mp_sel_1_dual_stack_pod_gets_a_pool_per_family() -> None:
    agent = Agent("n1", AgentConfig(enable_ipv6=True), pools=POOLS.values())
    out = agent.add_pod(pod({V4KEY: "blue"}))
    assert out.pools == {4: "blue", 6: "default"}


def test_mp_node_1_node_config_sets_pre_allocation_too() -> None:
    zone = "topology.kubernetes.io/zone"
    cfg = CiliumNodeConfig.from_obj(
        {
            "metadata": {"name": "dc1", "namespace": "kube-system"},
            "spec": {
                "defaults": {
                    "ipam-default-ip-pool": "dc1-pool",
                    "ipam-multi-pool-pre-allocation": "dc1-pool=4",
                },
                "nodeSelector": {"matchLabels": {zone: "dc1"}},
            },
        }
    )
    agent = Agent("n1", node_labels={zone: "dc1"}, node_configs=[cfg])
    assert agent.default_pool == "dc1-pool" and agent.pre_allocation == {"dc1-pool": 4}
    assert [(r.pool, r.ipv4_addrs) for r in agent.sync(CiliumNode("n1")).requested] == [("dc1-pool", 4)]
