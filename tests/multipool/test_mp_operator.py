"""MultiPoolOperator: MP-CRD-1, MP-POOL-1..5 and start-up occupancy."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.model import CiliumNode, IpamSpec, PoolAllocation, PoolRequest
from reconciler.multipool.operator import ORPHAN_WARNING, MultiPoolOperator, NodeResult, plan_allocations
from reconciler.multipool.pools import CiliumPodIPPool, PoolFamily


def pool(
    name: str,
    v4: Sequence[str] = (),
    mask4: int = 24,
    v6: Sequence[str] = (),
    mask6: int = 120,
    ts: str = "2026-01-01T00:00:00Z",
    **kw: object,
) -> CiliumPodIPPool:
    return CiliumPodIPPool(
        name=name,
        ipv4=PoolFamily(tuple(v4), mask4) if v4 else None,
        ipv6=PoolFamily(tuple(v6), mask6) if v6 else None,
        creation_timestamp=ts,
        **kw,  # type: ignore[arg-type]
    )


def node(
    name: str,
    requests: Sequence[tuple[str, int, int]] = (),
    allocated: Sequence[tuple[str, Sequence[str]]] = (),
) -> CiliumNode:
    return CiliumNode(
        name=name,
        ipam=IpamSpec(
            requested=tuple(PoolRequest(p, v4, v6) for p, v4, v6 in requests),
            allocated=tuple(PoolAllocation(p, tuple(c)) for p, c in allocated),
        ),
    )


def written(n: CiliumNode, res: NodeResult) -> CiliumNode:
    """The node as stored after the controller wrote the result (a new resourceVersion)."""
    version = str(int(n.resource_version or "0") + 1)
    return replace(n, resource_version=version, ipam=replace(n.ipam, allocated=res.allocated))


def started(pools: Sequence[CiliumPodIPPool], nodes: Sequence[CiliumNode] = ()) -> MultiPoolOperator:
    op = MultiPoolOperator()
    op.restore(pools, nodes)
    return op


def test_mp_crd_1_adds_blocks_until_usable_reaches_needed() -> None:
    op = started([pool("default", ["10.0.0.0/16"])])
    res = op.reconcile_node(node("a", [("default", 300, 0)]))
    assert res.changed and res.error == ""
    assert res.allocated == (PoolAllocation("default", ("10.0.0.0/24", "10.0.1.0/24")),)
    again = op.reconcile_node(written(node("a", [("default", 300, 0)]), res))
    assert not again.changed, "enough usable addresses: nothing new"


def test_mp_pool_4_reservations_decide_block_count() -> None:
    """254 usable per /24 by default: 255 needs two blocks; with allowFirstIP+allowLastIP 256 fit in one."""
    op = started(
        [
            pool("default", ["10.0.0.0/16"]),
            pool("open", ["10.1.0.0/16"], allow_first_ip=True, allow_last_ip=True),
        ]
    )
    assert len(op.reconcile_node(node("a", [("default", 255, 0)])).new_blocks) == 2
    assert len(op.reconcile_node(node("b", [("default", 254, 0)])).new_blocks) == 1
    assert len(op.reconcile_node(node("c", [("open", 256, 0)])).new_blocks) == 1


def test_mp_pool_4_exempt_small_blocks() -> None:
    op = started([pool("tiny", ["10.0.0.0/28"], mask4=31)])
    res = op.reconcile_node(node("a", [("tiny", 4, 0)]))
    assert res.allocated[0].cidrs == ("10.0.0.0/31", "10.0.0.2/31"), "a /31 gives 2 usable addresses"


def test_ipv6_family_from_104_into_120() -> None:
    op = started([pool("green", ["10.20.0.0/16"], v6=["fd00::/104"])])
    res = op.reconcile_node(node("a", [("green", 10, 300)]))
    assert res.allocated == (PoolAllocation("green", ("10.20.0.0/24", "fd00::/120", "fd00::100/120")),)


def test_mp_crd_1_blocks_removed_by_the_agent_are_freed() -> None:
    op = started([pool("default", ["10.0.0.0/23"])])
    a = node("a", [("default", 300, 0)])
    res = op.reconcile_node(a)
    a = written(a, res)
    assert op.reconcile_node(node("b", [("default", 1, 0)])).error.startswith("pool default has no free /24")
    # agent releases its second block and lowers its demand (the operator never saw the version between)
    a = replace(
        a,
        resource_version="7",
        ipam=IpamSpec(
            requested=(PoolRequest("default", 10),), allocated=(PoolAllocation("default", ("10.0.0.0/24",)),)
        ),
    )
    assert not op.reconcile_node(a).changed
    b = op.reconcile_node(node("b", [("default", 1, 0)]))
    assert b.allocated[0].cidrs == ("10.0.1.0/24",) and b.error == ""


def test_restart_occupies_before_handing_out() -> None:
    """Start-up: blocks already in `allocated` are occupied first; no block is handed out twice."""
    pools = [pool("default", ["10.0.0.0/22"])]
    a = node("a", [("default", 10, 0)], [("default", ["10.0.0.0/24"])])
    b = node("b", [("default", 10, 0)], [("default", ["10.0.2.0/24"])])
    c = node("c", [("default", 300, 0)])
    op = MultiPoolOperator()
    plan = op.restore(pools, [c, a, b])  # c sorts last, but restore never hands out anyway
    assert all(not r.new_blocks for r in plan.nodes.values())
    res = op.reconcile_node(c)
    assert res.allocated[0].cidrs == ("10.0.1.0/24", "10.0.3.0/24")


def test_stale_node_event_neither_frees_nor_doubles_in_flight_blocks() -> None:
    op = started([pool("default", ["10.0.0.0/22"])])
    a = replace(node("a", [("default", 10, 0)]), resource_version="41")
    first = op.reconcile_node(a)
    second = op.reconcile_node(a)  # the same version again: the write has not landed yet
    assert second.allocated == first.allocated
    other = op.reconcile_node(node("b", [("default", 10, 0)]))
    assert other.allocated[0].cidrs == ("10.0.1.0/24",)


def test_two_nodes_listing_one_block_is_an_error_on_the_second() -> None:
    op = started([pool("default", ["10.0.0.0/22"])], [node("a", allocated=[("default", ["10.0.0.0/24"])])])
    res = op.reconcile_node(node("b", allocated=[("default", ["10.0.0.0/24"])]))
    assert "already allocated to node a" in res.error
    assert "remove it from spec.ipam.pools.allocated of node b" in res.error


def test_mp_pool_2_removed_cidr_orphans_blocks_with_one_warning_each_and_readopts() -> None:
    p_old = pool("default", ["10.10.0.0/16"])
    op = started([p_old])
    a = node("a", [("default", 10, 0)])
    a = written(a, op.reconcile_node(a))
    assert a.ipam.cidrs_of("default") == ("10.10.0.0/24",)
    sync = op.set_pools([pool("default", ["10.20.0.0/16"])])
    assert [(w.message, w.cidr, w.pool_name, w.node) for w in sync.warnings] == [
        (ORPHAN_WARNING, "10.10.0.0/24", "default", "a")
    ]
    assert 'msg="CIDR from pool still in use by node" cidr=10.10.0.0/24 poolName=default node=a' in (
        sync.warnings[0].log_line()
    )
    res = op.reconcile_node(a)
    assert res.warnings == (), "warned once, not on every event"
    assert res.allocated[0].cidrs == ("10.10.0.0/24", "10.20.0.0/24"), "orphan kept, fresh block added"
    a = written(a, res)
    back = op.set_pools([pool("default", ["10.20.0.0/16", "10.10.0.0/16"])])
    assert [w.cidr for w in back.adopted] == ["10.10.0.0/24"]
    assert op.orphans() == []
    b = op.reconcile_node(node("b", [("default", 600, 0)]))
    assert "10.10.0.0/24" not in b.allocated[0].cidrs


def test_mp_pool_2_deleted_pool_keeps_blocks_and_restart_warns_once() -> None:
    a = node("a", [("blue", 10, 0)], [("blue", ["10.30.0.0/24"])])
    op = started([pool("blue", ["10.30.0.0/16"])], [a])
    sync = op.delete_pool("blue")
    assert [w.cidr for w in sync.warnings] == ["10.30.0.0/24"]
    res = op.reconcile_node(a)
    assert res.allocated == a.ipam.allocated
    assert "pool blue, which does not exist" in res.error
    # operator restart while the pool is gone: one warning per orphan from restore
    plan = MultiPoolOperator().restore([], [a])
    assert [(w.cidr, w.pool_name, w.node) for w in plan.warnings] == [("10.30.0.0/24", "blue", "a")]


def test_orphan_inside_another_pools_cidr_is_never_handed_out_twice() -> None:
    a = node("a", [], [("old", ["10.0.5.0/24"])])
    op = started([pool("new", ["10.0.0.0/16"])], [a])
    assert op.orphans() == [("a", "old", "10.0.5.0/24")]
    res = op.reconcile_node(node("b", [("new", 254 * 10, 0)]))
    assert "10.0.5.0/24" not in res.allocated[0].cidrs
    assert len(res.allocated[0].cidrs) == 10


def test_mp_pool_3_immutable_changes_are_refused_and_ignored() -> None:
    op = started([pool("default", ["10.0.0.0/16"], mask4=24)])
    sync = op.set_pools([pool("default", ["10.0.0.0/16", "10.1.0.0/16"], mask4=26, allow_first_ip=True)])
    err = sync.errors["default"]
    assert "spec.ipv4.maskSize (24 -> 26)" in err and "spec.allowFirstIP (False -> True)" in err
    assert "ignored" in err
    res = op.reconcile_node(node("a", [("default", 10, 0)]))
    assert res.allocated[0].cidrs == ("10.0.0.0/24",), "the accepted spec (/24) stays in force"
    accepted = op.accepted_pool("default")
    assert accepted is not None and accepted.ipv4 is not None and accepted.ipv4.cidrs == ("10.0.0.0/16",)


def test_mp_pool_5_newer_overlapping_pool_is_refused_naming_both() -> None:
    older = pool("alpha", ["10.0.0.0/16"], ts="2026-01-01T00:00:00Z")
    newer = pool("beta", ["10.0.128.0/17"], ts="2026-02-01T00:00:00Z")
    op = MultiPoolOperator()
    sync = op.set_pools([newer, older])
    assert sync.accepted == ("alpha",)
    assert (
        "beta" in sync.errors["beta"] and "alpha" in sync.errors["beta"] and "overlap" in sync.errors["beta"]
    )
    op.ready = True
    assert "refused" in op.reconcile_node(node("a", [("beta", 1, 0)])).error
    later = op.delete_pool("alpha")
    assert later.accepted == ("beta",) and later.errors == {}


def test_mp_pool_5_update_that_overlaps_keeps_previous_spec() -> None:
    op = started([pool("alpha", ["10.0.0.0/16"]), pool("beta", ["10.1.0.0/16"], ts="2026-03-01T00:00:00Z")])
    sync = op.set_pools(
        [
            pool("alpha", ["10.0.0.0/16", "10.1.0.0/24"]),
            pool("beta", ["10.1.0.0/16"], ts="2026-03-01T00:00:00Z"),
        ]
    )
    assert "the update is ignored" in sync.errors["alpha"]
    assert sync.accepted == ("alpha", "beta")


def test_invalid_pool_is_refused_with_a_sentence() -> None:
    sync = MultiPoolOperator().set_pools([pool("bad", ["10.0.0.1/16"])])
    assert sync.accepted == ()
    assert "host bits set" in sync.errors["bad"] and "the pool is not used" in sync.errors["bad"]


def test_missing_family_and_unknown_pool_errors() -> None:
    op = started([pool("v4only", ["10.0.0.0/16"])])
    res = op.reconcile_node(node("a", [("v4only", 1, 1), ("ghost", 1, 0)]))
    assert "pool v4only has no IPv6 CIDRs" in res.error
    assert "pool ghost, which does not exist" in res.error
    assert res.error.endswith(".") and ". " not in res.error, "one sentence for operator-status"
    assert res.allocated[0].cidrs == ("10.0.0.0/24",)


def test_forget_node_returns_blocks() -> None:
    op = started([pool("default", ["10.0.0.0/24"])])
    a = node("a", [("default", 1, 0)])
    op.reconcile_node(written(a, op.reconcile_node(a)))
    op.forget_node("a")
    assert op.reconcile_node(node("b", [("default", 1, 0)])).allocated[0].cidrs == ("10.0.0.0/24",)


def test_plan_allocations_is_a_pure_function_of_pools_and_nodes() -> None:
    pools = [pool("default", ["10.0.0.0/22"])]
    nodes = [node("b", [("default", 10, 0)]), node("a", [("default", 10, 0)], [("default", ["10.0.3.0/24"])])]
    first = plan_allocations(pools, nodes)
    assert first == plan_allocations(pools, nodes)
    assert first.nodes["a"].changed is False
    assert first.nodes["b"].allocated[0].cidrs == ("10.0.0.0/24",)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 900), st.booleans()), min_size=1, max_size=40))
def test_restart_plus_occupy_gives_the_same_state(events: list[tuple[int, int, bool]]) -> None:
    """Property: whatever happened, a fresh operator restored from (pools, nodes) has the same state,
    and no block is ever held by two nodes or lies outside the pool."""
    pools = [pool("default", ["10.0.0.0/21"]), pool("v6", ["10.8.0.0/22"], v6=["fd00::/116"])]
    op = started(pools)
    nodes: dict[str, CiliumNode] = {}
    for idx, demand, release in events:
        name = f"n{idx}"
        n = nodes.get(name, node(name))
        if release and n.ipam.allocated:
            # the agent drops the last block of its first pool entry
            first, *rest = n.ipam.allocated
            n = replace(n, ipam=replace(n.ipam, allocated=(replace(first, cidrs=first.cidrs[:-1]), *rest)))
        pool_name = "default" if idx % 2 else "v6"
        n = replace(n, ipam=replace(n.ipam, requested=(PoolRequest(pool_name, demand, demand // 3),)))
        nodes[name] = written(n, op.reconcile_node(n))
    seen: dict[str, str] = {}
    for n in nodes.values():
        for alloc in n.ipam.allocated:
            for cidr in alloc.cidrs:
                assert cidr not in seen, f"{cidr} held by {seen.get(cidr)} and {n.name}"
                seen[cidr] = n.name
                assert cidr.startswith(("10.0.", "10.8.", "fd00:"))
    fresh = MultiPoolOperator()
    fresh.restore(pools, list(nodes.values()))
    assert fresh.snapshot() == op.snapshot()


def test_parse_pool_obj_turns_bad_objects_into_one_sentence() -> None:
    from reconciler.multipool.pools import parse_pool_obj

    good, err = parse_pool_obj(
        {"metadata": {"name": "a"}, "spec": {"ipv4": {"cidrs": ["10.0.0.0/8"], "maskSize": 24}}}
    )
    assert good is not None and err == ""
    bad_sel, err = parse_pool_obj(
        {
            "metadata": {"name": "b"},
            "spec": {"podSelector": {"matchExpressions": [{"key": "x", "operator": "Is"}]}},
        }
    )
    assert bad_sel is None and "CiliumPodIPPool b podSelector uses operator 'Is'" in err
    bad_mask, err = parse_pool_obj(
        {"metadata": {"name": "c"}, "spec": {"ipv4": {"cidrs": [], "maskSize": "x"}}}
    )
    assert bad_mask is None and "CiliumPodIPPool c does not match the CRD schema" in err


CIDR_CHOICES = ("10.0.0.0/23", "10.0.2.0/23", "10.0.4.0/23")


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("node"), st.integers(0, 3), st.integers(0, 700), st.booleans()),
            st.tuples(st.just("pool"), st.sets(st.sampled_from(CIDR_CHOICES)), st.just(0), st.just(False)),
        ),
        min_size=1,
        max_size=30,
    )
)
def test_pool_changes_never_double_hand_out_and_restart_agrees(events: list[tuple]) -> None:
    """MP-POOL-1/2: with CIDRs removed, re-added and pools deleted, no block is ever held twice, new
    blocks always come from the current CIDRs, and a restart rebuilds exactly the same state."""
    current: set[str] = set(CIDR_CHOICES[:1])
    pools = [pool("default", sorted(current))]
    op = started(pools)
    nodes: dict[str, CiliumNode] = {}
    for kind, a, demand, release in events:
        if kind == "pool":
            current = set(a)
            pools = [pool("default", sorted(current))] if current else []
            op.set_pools(pools)
            continue
        name = f"n{a}"
        n = nodes.get(name, node(name))
        if release and n.ipam.allocated and n.ipam.allocated[0].cidrs:
            first, *rest = n.ipam.allocated
            n = replace(n, ipam=replace(n.ipam, allocated=(replace(first, cidrs=first.cidrs[1:]), *rest)))
        n = replace(n, ipam=replace(n.ipam, requested=(PoolRequest("default", demand),)))
        res = op.reconcile_node(n)
        for _pool_name, cidr in res.new_blocks:
            assert any(ipaddress.ip_network(cidr).subnet_of(ipaddress.ip_network(c)) for c in current)
        nodes[name] = written(n, res)
        held = [c for x in nodes.values() for alloc in x.ipam.allocated for c in alloc.cidrs]
        assert len(held) == len(set(held)), "a block is held by two nodes"
    fresh = MultiPoolOperator()
    fresh.restore(pools, list(nodes.values()))
    assert fresh.snapshot() == op.snapshot()
