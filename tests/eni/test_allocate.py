"""ENI-ALLOC-1..5: ENI choice, the count formula, limits, prefix delegation and its fallback."""

from __future__ import annotations

import pytest

from reconciler.ec2.api import InstanceTypeLimits, NetworkInterface, Subnet
from reconciler.eni.allocate import (
    AssignIps,
    AssignPrefixes,
    allocation_target,
    plan_ips,
    plan_prefixes,
    prefix_delegation_enabled,
)
from reconciler.eni.config import EniOperatorConfig
from reconciler.eni.operator import EniOperator
from reconciler.eni.view import NodeView
from reconciler.model import CiliumNode, EniSpec

from .helpers import AZ, SimpleAgent, node_for, sim_world

LIMITS = InstanceTypeLimits("m5.large", 4, 10, 10, "nitro")


def _eni(
    eni_id: str,
    index: int,
    subnet: str,
    secondaries: int = 0,
    prefixes: int = 0,
    tags: dict[str, str] | None = None,
) -> NetworkInterface:
    ips = tuple(f"10.{index}.0.{i}" for i in range(1 + secondaries))
    pfx = tuple(f"10.{index}.1.{16 * i}/28" for i in range(prefixes))
    return NetworkInterface(
        eni_id,
        subnet,
        "vpc",
        AZ,
        "in-use",
        "m",
        ips[0],
        ips,
        pfx,
        tags=tags or {},
        instance_id="i-1",
        device_index=index,
    )


def _view(
    enis: list[NetworkInterface],
    free: dict[str, int],
    first: int = 1,
    fragmented: frozenset[str] = frozenset(),
    **spec: object,
) -> NodeView:
    subnets = {sid: Subnet(sid, "vpc", AZ, "10.0.0.0/16", n) for sid, n in free.items()}
    node = CiliumNode(name="n", instance_id="i-1", eni=EniSpec(first_interface_index=first, **spec))  # type: ignore[arg-type]
    return NodeView(node, LIMITS, tuple(enis), subnets, fragmented=fragmented)


def test_eni_alloc_1_first_usable_eni_with_free_slot_and_subnet_room() -> None:
    enis = [
        _eni("eth0", 0, "a", 0),  # below first-interface-index
        _eni("full", 1, "a", 9),  # 10 of 10 slots used (primary included)
        _eni("excluded", 2, "a", 0, tags={"no": "pods"}),
        _eni("subnet-full", 3, "full-subnet", 0),
        _eni("ok", 4, "a", 2),
    ]
    view = _view(enis, {"a": 100, "full-subnet": 0}, exclude_interface_tags={"no": "pods"})
    action = plan_ips(view, 5)
    assert isinstance(action, AssignIps) and action.eni_id == "ok"
    assert action.count == 5
    assert (
        plan_ips(_view(enis[:4], {"a": 100, "full-subnet": 0}, exclude_interface_tags={"no": "pods"}), 5)
        is None
    )


@pytest.mark.parametrize(
    ("secondaries", "subnet_free", "target", "count"),
    [
        (0, 100, 4, 4),  # target binds
        (0, 100, 40, 9),  # AvailableOnENI binds: 10 slots include the primary (ENI-ALLOC-3)
        (6, 100, 40, 3),  # partially used ENI
        (0, 2, 40, 2),  # AvailableOnSubnet binds
    ],
)
def test_eni_alloc_2_count_is_min_of_subnet_eni_and_target(
    secondaries: int, subnet_free: int, target: int, count: int
) -> None:
    action = plan_ips(_view([_eni("e", 1, "a", secondaries)], {"a": subnet_free}), target)
    assert action is not None and action.count == count


@pytest.mark.parametrize(
    ("needed", "maw", "pending", "available", "max_alloc", "target"),
    [
        (8, 0, 0, 0, 0, 8),
        (8, 4, 0, 0, 0, 12),  # + max-above-watermark
        (8, 4, 20, 0, 0, 24),  # + surge = pending - needed
        (8, 0, 5, 0, 0, 8),  # fewer pending than needed: no surge
        (8, 4, 20, 10, 20, 10),  # never past max-allocate
        (0, 4, 0, 0, 0, 4),
    ],
)
def test_eni_alloc_2_target_is_needed_plus_watermark_plus_surge(
    needed: int, maw: int, pending: int, available: int, max_alloc: int, target: int
) -> None:
    assert allocation_target(needed, maw, pending, available, max_alloc) == target


@pytest.mark.parametrize(
    ("flag", "limits", "opt_out", "enabled"),
    [
        (True, InstanceTypeLimits("m5.large", 3, 10, 10, "nitro"), False, True),
        (False, InstanceTypeLimits("m5.large", 3, 10, 10, "nitro"), False, False),
        (True, InstanceTypeLimits("m4.large", 2, 10, 10, "xen"), False, False),
        (True, InstanceTypeLimits("c5.metal", 15, 50, 50, "", bare_metal=True), False, True),
        (True, InstanceTypeLimits("m5.large", 3, 10, 10, "nitro"), True, False),
    ],
)
def test_eni_alloc_4_prefix_delegation_conditions(
    flag: bool, limits: InstanceTypeLimits, opt_out: bool, enabled: bool
) -> None:
    """Flag, Nitro or bare metal, and ENI-PARAM-7 opt-out."""
    cfg = EniOperatorConfig(aws_enable_prefix_delegation=flag)
    assert prefix_delegation_enabled(cfg, limits, EniSpec(disable_prefix_delegation=opt_out)) is enabled


def test_eni_alloc_4_prefixes_ceil_count_over_16_and_one_slot_each() -> None:
    action = plan_prefixes(_view([_eni("e", 1, "a", 0, prefixes=2)], {"a": 1000}), 40)
    assert isinstance(action, AssignPrefixes) and action.count == 3 and action.addresses == 48
    capped = plan_prefixes(_view([_eni("e", 1, "a", 0, prefixes=7)], {"a": 1000}), 100)
    assert capped is not None and capped.count == 2  # 10 slots - primary - 7 prefixes


def test_eni_alloc_4_no_mixing_on_an_eni() -> None:
    """An ENI with /32 secondaries gets no prefixes; an ENI with prefixes gets no /32s."""
    view = _view([_eni("plain", 1, "a", 3), _eni("pfx", 2, "a", 0, prefixes=1)], {"a": 1000})
    prefix_action = plan_prefixes(view, 16)
    assert prefix_action is not None and prefix_action.eni_id == "pfx"
    ip_action = plan_ips(view, 4)
    assert ip_action is not None and ip_action.eni_id == "plain"
    only_pfx = _view([_eni("pfx", 2, "a", 0, prefixes=1)], {"a": 1000})
    assert plan_ips(only_pfx, 4) is None
    mixed = plan_ips(only_pfx, 4, fallback=True, allow_mixing=True)
    assert mixed is not None and "fallback" in mixed.reason


def test_eni_alloc_4_fragmented_or_small_subnet_gets_no_prefix() -> None:
    assert plan_prefixes(_view([_eni("e", 1, "a")], {"a": 15}), 16) is None
    assert plan_prefixes(_view([_eni("e", 1, "a")], {"a": 500}, fragmented=frozenset({"a"})), 16) is None


# --- against SimulatedEc2 ------------------------------------------------------------------------


def _setup(subnets: int = 1, **cfg: object):  # type: ignore[no-untyped-def]
    clock, sim, world = sim_world(instance_type="m5.large", subnets=subnets)
    op = EniOperator(sim, EniOperatorConfig(**cfg), clock)  # type: ignore[arg-type]
    op.refresh(force=True)
    return clock, sim, world, op


def _cycle(op: EniOperator, agent: SimpleAgent, clock: object, seconds: float = 1.0) -> None:
    clock.advance(seconds)  # type: ignore[attr-defined]
    node = agent.step()
    op.on_node_changed(node)
    for result in op.run_allocations().values():
        agent.apply(result)
    for result in op.publish().values():
        agent.apply(result)


def test_eni_alloc_1_2_assign_on_existing_eni_before_creating() -> None:
    clock, sim, world, op = _setup()
    agent = SimpleAgent(node_for("n", world.instance_ids[0], world, first_interface_index=0))
    agent.pods = 3
    for _ in range(4):
        _cycle(op, agent, clock)
    eth0 = next(e for e in sim.enis.values() if e.attachment and e.attachment.device_index == 0)
    # eth0 (index 0 is usable with first-interface-index 0) got the addresses: no new ENI.
    assert len(eth0.secondary_ips) == 9  # 3 pods + 8 pre-allocate = 11 wanted, 9 is eth0's max
    assert any(c.action == "AssignPrivateIpAddresses" for c in sim.calls)


def test_eni_alloc_2_surge_from_pending_pods_in_one_cycle() -> None:
    clock, sim, world, op = _setup()
    node = node_for("n", world.instance_ids[0], world, requested_v4=8, first_interface_index=1)
    op.set_pending_pods({"n": 14})
    op.on_node_changed(node)
    result = op.run_allocations()["n"]
    # needed 8 + surge (14 - 8) = 14 addresses: one full ENI (9) and a second one with 5.
    assert result.allocated_ips == 14 and result.created_enis == 2


def test_eni_alloc_5_no_slot_is_operator_status_and_at_capacity() -> None:
    clock, sim, world, op = _setup()
    node = node_for("n", world.instance_ids[0], world, requested_v4=60, first_interface_index=1)
    op.on_node_changed(node)
    result = op.run_allocations()["n"]
    assert result.created_enis == 2 and result.allocated_ips == 18
    assert result.at_capacity is True
    assert result.operator_error == (
        f"node n: instance {node.instance_id} (m5.large) is out of interfaces: 3 of 3 attached and none can "
        "take more addresses; use a larger instance type or lower the node's pre-allocate/min-allocate"
    )
    clock.advance(1)
    op.on_node_changed(node)
    again = op.run_allocations()["n"]
    assert again.allocated_ips == 0 and again.at_capacity


def test_eni_alloc_4_prefix_delegation_creates_eni_with_prefixes() -> None:
    clock, sim, world, op = _setup(aws_enable_prefix_delegation=True)
    node = node_for("n", world.instance_ids[0], world, requested_v4=8, first_interface_index=1)
    op.on_node_changed(node)
    result = op.run_allocations()["n"]
    ours = [e for e in sim.enis.values() if e.description.startswith("Cilium-CNI")]
    assert len(ours) == 1 and len(ours[0].prefixes) == 1 and ours[0].secondary_ips == []
    assert result.allocated_ips == 16


def test_eni_alloc_4_insufficient_cidr_blocks_tries_another_subnet_first() -> None:
    """Unlike Cilium issue 46644: the fallback first looks for /28s in another eligible subnet."""
    clock, sim, world, op = _setup(subnets=2, aws_enable_prefix_delegation=True)
    subnets = world.subnet_ids[AZ]
    node = node_for(
        "n", world.instance_ids[0], world, requested_v4=8, first_interface_index=1, subnet_ids=tuple(subnets)
    )
    op.on_node_changed(node)
    op.run_allocations()
    first = next(e for e in sim.enis.values() if e.description.startswith("Cilium-CNI"))
    clock.advance(1)
    sim.faults.script("InsufficientCidrBlocks", action="AssignPrivateIpAddresses")
    more = node_for(
        "n",
        world.instance_ids[0],
        world,
        requested_v4=8 + 20,
        first_interface_index=1,
        subnet_ids=tuple(subnets),
        allocated=tuple(first.prefixes),
    )
    op.on_node_changed(more)
    result = op.run_allocations()["n"]
    ours = [e for e in sim.enis.values() if e.description.startswith("Cilium-CNI")]
    assert len(ours) == 2
    second = next(e for e in ours if e.id != first.id)
    assert second.subnet_id != first.subnet_id
    assert second.prefixes and not second.secondary_ips
    assert all(not e.secondary_ips for e in ours)  # no /32 anywhere: prefix delegation intact
    assert result.operator_error == ""


def test_eni_alloc_4_fallback_to_32s_is_per_request_not_forever() -> None:
    clock, sim, world, op = _setup(subnets=1, aws_enable_prefix_delegation=True)
    iid = world.instance_ids[0]
    op.on_node_changed(node_for("n", iid, world, requested_v4=8, first_interface_index=1))
    op.run_allocations()
    first = next(e for e in sim.enis.values() if e.description.startswith("Cilium-CNI"))
    # The only subnet is fragmented now: the next request falls back to /32s on a new ENI.
    sim.faults.script("InsufficientCidrBlocks", action="AssignPrivateIpAddresses")
    clock.advance(1)
    op.on_node_changed(
        node_for(
            "n", iid, world, requested_v4=8 + 16, first_interface_index=1, allocated=tuple(first.prefixes)
        )
    )
    op.run_allocations()
    ours = {e.id: e for e in sim.enis.values() if e.description.startswith("Cilium-CNI")}
    second = next(e for e in ours.values() if e.id != first.id)
    assert second.secondary_ips and not second.prefixes  # /32s, on their own ENI (no mixing)
    assert not sim.enis[first.id].secondary_ips
    # Later (fragmentation memory expired), more demand gets /28 prefixes again on the prefix ENI.
    clock.advance(120)
    op.refresh(force=True)
    allocated = tuple(sim.enis[first.id].prefixes) + tuple(f"{ip}/32" for ip in second.secondary_ips)
    op.on_node_changed(
        node_for("n", iid, world, requested_v4=8 + 16 + 16, first_interface_index=1, allocated=allocated)
    )
    op.run_allocations()
    assert len(sim.enis[first.id].prefixes) >= 2
    assert not sim.enis[first.id].secondary_ips


def test_eni_alloc_4_last_resort_mixes_only_when_nothing_else_can_serve() -> None:
    """Fragmented only subnet, no device slot, /32 ENI full: /32s go on the prefix ENI (documented)."""
    clock, sim, world, op = _setup(subnets=1, aws_enable_prefix_delegation=True)
    iid = world.instance_ids[0]
    op.on_node_changed(node_for("n", iid, world, requested_v4=8, first_interface_index=1))
    op.run_allocations()
    first = next(e for e in sim.enis.values() if e.description.startswith("Cilium-CNI"))
    sim.faults.script("InsufficientCidrBlocks", action="AssignPrivateIpAddresses")
    clock.advance(1)
    op.on_node_changed(
        node_for(
            "n", iid, world, requested_v4=8 + 20, first_interface_index=1, allocated=tuple(first.prefixes)
        )
    )
    result = op.run_allocations()["n"]
    # The pods' 4 addresses come first (ENI-CALC-4 phase one); the pre-allocate rest a run later.
    clock.advance(1)
    more = op.run_allocations()
    assert result.allocated_ips + (more["n"].allocated_ips if "n" in more else 0) == 12
    assert len(sim.enis[first.id].secondary_ips) == 3 and len(sim.enis[first.id].prefixes) == 1


def test_eni_alloc_lost_assign_response_does_not_over_allocate() -> None:
    """The assign takes effect, the response is lost: no further mutation for the node until a
    refresh shows EC2's real state, even when allocation runs come before that refresh."""
    clock, sim, world, op = _setup()
    sim.faults.script("InternalError", action="AssignPrivateIpAddresses", phase="after")
    agent = SimpleAgent(node_for("n", world.instance_ids[0], world, first_interface_index=0, pre_allocate=3))
    agent.pods = 1
    for _ in range(3):
        _cycle(op, agent, clock, seconds=1.0)  # allocation runs, no refresh in between
    for _ in range(5):
        op.refresh()
        _cycle(op, agent, clock)
    eth0 = next(e for e in sim.enis.values() if e.attachment and e.attachment.device_index == 0)
    assert len(eth0.secondary_ips) == 4  # 1 pod + 3 pre-allocate, assigned once despite the lost response
    assert "CreateNetworkInterface" not in {c.action for c in sim.calls}
    assert agent.pending == 0 and agent.node.operator_error == ""
