"""ENI-V6-1..4: exactly one /80 per node, boolean demand, never released, dual-stack subnets only."""

from __future__ import annotations

from reconciler.ec2.api import InstanceTypeLimits, NetworkInterface, Subnet
from reconciler.eni.config import EniOperatorConfig
from reconciler.eni.ipv6 import AssignIpv6Prefix, plan_ipv6
from reconciler.eni.operator import EniOperator
from reconciler.eni.view import NodeView
from reconciler.model import CiliumNode, EniSpec

from .helpers import AZ, SimpleAgent, node_for, sim_world


def _ipv6_prefixes_of(sim, instance_id: str) -> list[str]:  # type: ignore[no-untyped-def]
    return [
        p
        for e in sim.enis.values()
        if e.attachment and e.attachment.instance_id == instance_id
        for p in e.ipv6_prefixes
    ]


def _run(op: EniOperator, agent: SimpleAgent, clock, cycles: int, *, scan_every: int = 0) -> None:  # type: ignore[no-untyped-def]
    for i in range(cycles):
        clock.advance(1.0)
        node = agent.step()
        if scan_every and i % scan_every == 0:
            plan = op.resync([node])
            for r in op.run_release(plan).values():
                agent.apply(r)
        op.on_node_changed(node)
        for r in op.run_allocations().values():
            agent.apply(r)
        for r in op.publish().values():
            agent.apply(r)


def test_eni_v6_1_one_prefix_at_creation_and_never_a_second() -> None:
    clock, sim, world = sim_world(instance_type="m5.large")
    op = EniOperator(sim, EniOperatorConfig(), clock)
    op.refresh(force=True)
    agent = SimpleAgent(node_for("n", world.instance_ids[0], world, first_interface_index=1), wants_ipv6=True)
    agent.pods = 30  # forces a second ENI too
    _run(op, agent, clock, 8)
    assert len(_ipv6_prefixes_of(sim, agent.node.instance_id)) == 1
    create_calls = [c for c in sim.calls if c.action == "CreateNetworkInterface"]
    assert create_calls[0].params["ipv6_prefix_count"] == 1
    assert all(c.params["ipv6_prefix_count"] is None for c in create_calls[1:])
    assert not [c for c in sim.calls if c.action == "AssignIpv6Addresses"]
    assert any(s.ipv6_prefixes for s in agent.node.enis.values())


def test_eni_v6_1_assign_on_existing_eni_when_one_is_usable() -> None:
    clock, sim, world = sim_world(instance_type="m5.large")
    op = EniOperator(sim, EniOperatorConfig(), clock)
    op.refresh(force=True)
    agent = SimpleAgent(node_for("n", world.instance_ids[0], world, first_interface_index=0), wants_ipv6=True)
    _run(op, agent, clock, 4)
    assert [c.action for c in sim.calls if c.action == "AssignIpv6Addresses"] == ["AssignIpv6Addresses"]
    assert len(_ipv6_prefixes_of(sim, agent.node.instance_id)) == 1
    assert not [c for c in sim.calls if c.action == "CreateNetworkInterface"]


def test_eni_v6_2_demand_is_boolean_and_ignores_watermarks() -> None:
    """A huge ipv6-addrs demand still means one prefix; no IPv4 demand needed."""
    limits = InstanceTypeLimits("m5.large", 3, 10, 10, "nitro")
    eni = NetworkInterface(
        "e1", "s", "vpc", AZ, "in-use", "m", "10.0.0.1", ("10.0.0.1",), instance_id="i", device_index=1
    )
    view = NodeView(
        CiliumNode(name="n", instance_id="i", eni=EniSpec(first_interface_index=1)),
        limits,
        (eni,),
        {"s": Subnet("s", "vpc", AZ, "10.0.0.0/24", 100, ("2600::/64",))},
    )
    assert plan_ipv6(view, True) == AssignIpv6Prefix("e1", "s")
    assert plan_ipv6(view, False) is None
    with_prefix = NodeView(
        view.node,
        limits,
        (
            NetworkInterface(
                "e1",
                "s",
                "vpc",
                AZ,
                "in-use",
                "m",
                "10.0.0.1",
                ("10.0.0.1",),
                ipv6_prefixes=("2600::/80",),
                instance_id="i",
                device_index=1,
            ),
        ),
        view.subnets,
    )
    assert plan_ipv6(with_prefix, True) is None


def test_eni_v6_3_prefix_never_released_even_with_release_excess() -> None:
    clock, sim, world = sim_world(instance_type="m5.large")
    op = EniOperator(sim, EniOperatorConfig(aws_release_excess_ips=True, excess_ip_release_delay=5), clock)
    op.refresh(force=True)
    agent = SimpleAgent(node_for("n", world.instance_ids[0], world, first_interface_index=1), wants_ipv6=True)
    agent.pods = 8
    _run(op, agent, clock, 5)
    agent.pods = 0
    agent.wants_ipv6 = False
    _run(op, agent, clock, 30, scan_every=3)
    assert len(_ipv6_prefixes_of(sim, agent.node.instance_id)) == 1
    unassign = [c for c in sim.calls if c.action == "UnassignPrivateIpAddresses"]
    assert unassign  # IPv4 was released...
    assert all("2600" not in str(c.params) for c in unassign)  # ...never the /80


def test_eni_v6_4_ipv4_only_subnet_gives_clear_operator_status() -> None:
    clock, sim, world = sim_world(instance_type="m5.large", dual_stack=False)
    op = EniOperator(sim, EniOperatorConfig(), clock)
    op.refresh(force=True)
    subnet = world.node_subnet(AZ)
    node = node_for(
        "n",
        world.instance_ids[0],
        world,
        requested_v4=8,
        requested_v6=8,
        first_interface_index=1,
        subnet_ids=(subnet,),
    )
    op.on_node_changed(node)
    result = op.run_allocations()["n"]
    assert result.operator_error == (
        f"node n: subnet {subnet} has no IPv6 CIDR; add an IPv6 /64 to it or remove it from subnet-ids"
    )
    # IPv4 still works: the ENI is created for IPv4 alone.
    assert result.allocated_ips == 8 and result.created_enis == 1


def test_eni_v6_1_lost_response_never_leads_to_a_second_prefix() -> None:
    """AssignIpv6Addresses takes effect but the response is lost: the node waits for a refresh."""
    clock, sim, world = sim_world(instance_type="m5.large")
    op = EniOperator(sim, EniOperatorConfig(), clock)
    op.refresh(force=True)
    sim.faults.script("InternalError", action="AssignIpv6Addresses", phase="after")
    agent = SimpleAgent(node_for("n", world.instance_ids[0], world, first_interface_index=0), wants_ipv6=True)
    _run(op, agent, clock, 1)
    assert "InternalError" in agent.node.operator_error
    _run(op, agent, clock, 3)  # allocation runs before any refresh
    for _ in range(10):
        clock.advance(1.0)
        op.refresh()
        _run(op, agent, clock, 1)
    assert len(_ipv6_prefixes_of(sim, agent.node.instance_id)) == 1
    assert agent.node.operator_error == ""
