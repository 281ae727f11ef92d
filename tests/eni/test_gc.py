"""ENI-GC-1 (two-phase, bounded GC of leaked ENIs) and ENI-PARAM-9 (static IPs)."""

from __future__ import annotations

import pytest

from reconciler.ec2.api import CreateNetworkInterfaceRequest
from reconciler.eni.config import EniOperatorConfig
from reconciler.eni.gc import plan_gc
from reconciler.eni.operator import EniOperator

from .helpers import AZ, node_for, sim_world

GC_TAGS = {"io.cilium/cilium-managed": "true", "io.cilium/cluster-name": "default"}


@pytest.mark.parametrize(
    ("listed", "marked", "bound", "delete", "keep"),
    [
        (["a", "b"], set(), 10, [], {"a", "b"}),  # first sight: mark only
        (["a", "b"], {"a"}, 10, ["a"], {"b"}),  # marked and still listed: delete
        (["b"], {"a"}, 10, [], {"b"}),  # a is gone (attached or deleted): mark dropped
        (["a", "b", "c"], {"a", "b", "c"}, 2, ["a", "b"], {"c"}),  # bounded; c stays marked
    ],
)
def test_eni_gc_1_plan_mark_then_delete_bounded(
    listed: list[str], marked: set[str], bound: int, delete: list[str], keep: set[str]
) -> None:
    assert plan_gc(listed, marked, bound) == (delete, keep)


def _leak(sim, world, tags: dict[str, str]) -> str:  # type: ignore[no-untyped-def]
    eni = sim.create_network_interface(
        CreateNetworkInterfaceRequest(subnet_id=world.node_subnet(AZ), tags=tags)
    )
    return eni.id


def test_eni_gc_1_deletes_only_after_one_interval_and_only_tagged_detached() -> None:
    clock, sim, world = sim_world()
    op = EniOperator(sim, EniOperatorConfig(eni_gc_interval=300), clock)
    leaked = _leak(sim, world, GC_TAGS)
    foreign = _leak(sim, world, {"io.cilium/cilium-managed": "true", "io.cilium/cluster-name": "other"})
    untagged = _leak(sim, world, {})
    first = op.run_gc()
    assert first.ran and first.marked == [leaked] and first.deleted == []
    clock.advance(100)
    assert op.run_gc().ran is False  # not due yet
    new_leak = _leak(sim, world, GC_TAGS)  # created within the grace period
    clock.advance(200)
    second = op.run_gc()
    assert second.deleted == [leaked]
    assert leaked not in sim.enis and foreign in sim.enis and untagged in sim.enis
    assert new_leak in sim.enis and new_leak in op.gc.marked
    clock.advance(300)
    assert op.run_gc().deleted == [new_leak]


def test_eni_gc_1_attached_eni_loses_its_mark() -> None:
    clock, sim, world = sim_world(instances=1)
    op = EniOperator(sim, EniOperatorConfig(), clock)
    eni = _leak(sim, world, GC_TAGS)
    op.run_gc()
    sim.attach_network_interface(eni, world.instance_ids[0], 1)
    clock.advance(300)
    assert op.run_gc().deleted == []
    assert eni in sim.enis and eni not in op.gc.marked


def test_eni_gc_1_bounded_per_run_and_disabled_by_zero() -> None:
    clock, sim, world = sim_world()
    op = EniOperator(sim, EniOperatorConfig(gc_max_deletions_per_run=2), clock)
    leaks = [_leak(sim, world, GC_TAGS) for _ in range(5)]
    op.run_gc()
    clock.advance(300)
    assert len(op.run_gc().deleted) == 2
    clock.advance(300)
    assert len(op.run_gc().deleted) == 2
    clock.advance(300)
    assert len(op.run_gc().deleted) == 1
    assert not any(e in sim.enis for e in leaks)
    off = EniOperator(sim, EniOperatorConfig(eni_gc_interval=0), clock)
    _leak(sim, world, GC_TAGS)
    assert off.run_gc().ran is False


def test_eni_gc_1_uses_custom_gc_tags_and_dry_run_deletes_nothing() -> None:
    clock, sim, world = sim_world()
    op = EniOperator(sim, EniOperatorConfig(eni_gc_tags={"owner": "me"}, dry_run=True), clock)
    mine = _leak(sim, world, {"owner": "me"})
    _leak(sim, world, GC_TAGS)
    assert op.run_gc().marked == [mine]
    clock.advance(300)
    assert op.run_gc().deleted == []
    assert mine in sim.enis
    assert "DeleteNetworkInterface" not in {c.action for c in sim.calls}


def test_eni_param_9_static_ip_associated_with_primary_eni() -> None:
    clock, sim, world = sim_world()
    sim.allocate_address(tags={"pool": "other"})
    wanted = sim.allocate_address(tags={"pool": "egress"})
    op = EniOperator(sim, EniOperatorConfig(), clock)
    op.refresh(force=True)
    node = node_for(
        "n",
        world.instance_ids[0],
        world,
        requested_v4=8,
        first_interface_index=1,
        static_ip_tags={"pool": "egress"},
    )
    op.on_node_changed(node)
    result = op.run_allocations()["n"]
    assert result.operator_error == ""
    eth0 = next(
        e
        for e in sim.enis.values()
        if e.attachment and e.attachment.device_index == 0 and e.attachment.instance_id == node.instance_id
    )
    assert sim.addresses[wanted].eni_id == eth0.id
    assert eth0.public_ip is not None
    assert [c.params["allocation"] for c in sim.calls if c.action == "AssociateAddress"] == [wanted]
    # Already has a public IP: nothing more to do.
    clock.advance(60)
    op.refresh(force=True)
    op.resync([node])
    op.run_allocations()
    assert sum(1 for c in sim.calls if c.action == "AssociateAddress") == 1
    # A restarted operator sees the public IP on eth0 and associates nothing.
    fresh = EniOperator(sim, EniOperatorConfig(), clock)
    fresh.refresh(force=True)
    fresh.resync([node])
    fresh.run_allocations()
    assert sum(1 for c in sim.calls if c.action == "AssociateAddress") == 1


def test_eni_param_9_no_free_address_is_a_clear_error() -> None:
    clock, sim, world = sim_world()
    op = EniOperator(sim, EniOperatorConfig(), clock)
    op.refresh(force=True)
    node = node_for("n", world.instance_ids[0], world, static_ip_tags={"pool": "egress"})
    op.resync([node])
    result = op.run_allocations()["n"]
    assert result.operator_error == (
        "node n: no unassociated Elastic IP carries spec.ipam.static-ip-tags {'pool': 'egress'}; "
        "allocate one with these tags or remove static-ip-tags"
    )
