"""ENI-CACHE-1/2 and the operator-level filters of ENI-CFG-1."""

from __future__ import annotations

from reconciler.ec2.api import CreateNetworkInterfaceRequest
from reconciler.eni.cache import Ec2Cache
from reconciler.eni.config import EniOperatorConfig
from reconciler.eni.operator import EniOperator

from .helpers import AZ, node_for, sim_world

DESCRIBES = {
    "DescribeNetworkInterfaces",
    "DescribeSubnets",
    "DescribeVpcs",
    "DescribeRouteTables",
    "DescribeSecurityGroups",
}


def _describe_count(sim) -> int:  # type: ignore[no-untyped-def]
    return sum(1 for c in sim.calls if c.action == "DescribeNetworkInterfaces")


def test_eni_cache_1_refresh_reads_everything_and_limits_lazily() -> None:
    clock, sim, world = sim_world(instances=2, subnets=2)
    cache = Ec2Cache(sim, clock, EniOperatorConfig())
    assert cache.refresh() is True
    assert {c.action for c in sim.calls} == DESCRIBES
    assert len(cache.subnets()) == 2 and cache.vpc(world.vpc_id) is not None
    assert len(cache.enis_of_instance(world.instance_ids[0])) == 1
    assert set(world.security_group_ids) <= {g.id for g in cache.security_groups()}
    assert len(cache.route_tables()) == 2
    limits = cache.limits_for("m5.large")
    assert (limits.max_network_interfaces, limits.ipv4_per_interface, limits.hypervisor) == (3, 10, "nitro")
    assert [c.action for c in sim.calls].count("DescribeInstanceTypes") == 1
    cache.limits_for("m5.large")
    assert [c.action for c in sim.calls].count("DescribeInstanceTypes") == 1  # cached


def test_eni_cfg_1_instance_limit_mapping_overrides_numbers() -> None:
    clock, sim, world = sim_world()
    cache = Ec2Cache(sim, clock, EniOperatorConfig(aws_instance_limit_mapping={"m5.large": "5+20+20"}))
    limits = cache.limits_for("m5.large")
    assert (limits.max_network_interfaces, limits.ipv4_per_interface, limits.hypervisor) == (5, 20, "nitro")


def test_eni_cache_2_refresh_every_minute_and_at_most_once_per_second_when_triggered() -> None:
    clock, sim, world = sim_world()
    cache = Ec2Cache(sim, clock, EniOperatorConfig())
    assert cache.maybe_refresh() is True
    assert _describe_count(sim) == 1
    clock.advance(30)
    assert cache.maybe_refresh() is False
    cache.trigger()
    assert cache.maybe_refresh() is True  # triggered, and the last refresh is >= 1 s old
    cache.trigger()
    clock.advance(0.5)
    assert cache.maybe_refresh() is False  # triggered again within the second
    clock.advance(0.5)
    assert cache.maybe_refresh() is True
    assert _describe_count(sim) == 3
    clock.advance(59)
    assert cache.maybe_refresh() is False
    clock.advance(1)
    assert cache.maybe_refresh() is True
    assert _describe_count(sim) == 4


def test_eni_cache_2_failed_refresh_marks_unstable_and_blocks_mutations() -> None:
    clock, sim, world = sim_world()
    op = EniOperator(sim, EniOperatorConfig(aws_release_excess_ips=True), clock)
    assert op.refresh(force=True)
    sim.faults.script("InternalError", action="DescribeSubnets")
    assert op.refresh(force=True) is False
    assert op.cache.stable is False
    assert "DescribeSubnets" in op.cache.last_error or "InternalError" in op.cache.last_error
    node = node_for("n", world.instance_ids[0], world, requested_v4=8, first_interface_index=1)
    op.on_node_changed(node)
    assert op.run_allocations(force=True) == {}
    assert op.run_release(op.resync([node])) == {}
    assert not [c for c in sim.calls if not c.action.startswith("Describe")]
    # The next refresh (retried after 1 s) succeeds and unblocks the queue.
    clock.advance(1)
    assert op.refresh() is True and op.cache.stable
    assert op.run_allocations()["n"].allocated_ips == 8


def test_eni_cache_2_new_eni_invisible_to_describe_stays_in_cache() -> None:
    """EC2-SIM-6 eventual consistency: a refresh that misses our new ENI must not drop it."""
    clock, sim, world = sim_world(visibility_delay=10.0)
    op = EniOperator(sim, EniOperatorConfig(), clock)
    op.refresh(force=True)
    node = node_for("n", world.instance_ids[0], world, requested_v4=8, first_interface_index=1)
    op.on_node_changed(node)
    assert op.run_allocations()["n"].created_enis == 1
    clock.advance(1)
    assert op.refresh() is True
    assert len(op.cache.enis_of_instance(node.instance_id)) == 2
    op.on_node_changed(node)
    clock.advance(1)
    again = op.run_allocations()
    assert all(r.created_enis == 0 for r in again.values())
    assert sum(1 for c in sim.calls if c.action == "CreateNetworkInterface") == 1


def test_eni_cfg_1_subnet_filters_restrict_usable_subnets() -> None:
    clock, sim, world = sim_world(subnets=3)
    ids = world.subnet_ids[AZ]
    cache = Ec2Cache(sim, clock, EniOperatorConfig(subnet_ids_filter=(ids[1], ids[2])))
    cache.refresh()
    assert {s.id for s in cache.subnets()} == {ids[1], ids[2]}
    sim.create_tags([ids[2]], {"use": "pods"})
    tagged = Ec2Cache(sim, clock, EniOperatorConfig(subnet_tags_filter={"use": "pods"}))
    tagged.refresh()
    assert {s.id for s in tagged.subnets()} == {ids[2]}


def test_eni_cfg_1_instance_tags_filter_limits_managed_instances() -> None:
    clock, sim, world = sim_world(instances=2)
    a, b = world.instance_ids
    sim.create_tags([a], {"cilium": "yes"})
    op = EniOperator(sim, EniOperatorConfig(instance_tags_filter={"cilium": "yes"}), clock)
    op.refresh(force=True)
    assert op.cache.manages_instance(a) and not op.cache.manages_instance(b)
    assert "DescribeInstances" in {c.action for c in sim.calls}
    for name, iid in (("a", a), ("b", b)):
        op.on_node_changed(node_for(name, iid, world, requested_v4=8, first_interface_index=1))
    results = op.run_allocations()
    assert results["a"].allocated_ips == 8
    assert results["b"].allocated_ips == 0 and results["b"].actions == []


def test_eni_cache_local_updates_follow_mutations_before_refresh() -> None:
    clock, sim, world = sim_world()
    cache = Ec2Cache(sim, clock, EniOperatorConfig())
    cache.refresh()
    subnet = world.node_subnet(AZ)
    before = cache.subnet(subnet).available_ip_address_count  # type: ignore[union-attr]
    cache.take_subnet_addresses(subnet, 5)
    assert cache.subnet(subnet).available_ip_address_count == before - 5  # type: ignore[union-attr]
    eni = sim.create_network_interface(CreateNetworkInterfaceRequest(subnet_id=subnet))
    cache.forget_eni(eni.id)
    cache.refresh()
    assert cache.eni(eni.id) is None  # deleted-by-us stays hidden while Describe may still list it
