"""ENI-CREATE-1..4, ENI-PARAM-3/4/8: subnet order, device index, groups, request shape, attach."""

from __future__ import annotations

import pytest

from reconciler.ec2.api import (
    InstanceTypeLimits,
    NetworkInterface,
    RouteTable,
    SecurityGroup,
    Subnet,
)
from reconciler.eni.config import EniOperatorConfig
from reconciler.eni.create import client_token, description_for, device_index, plan_create, select_subnet
from reconciler.eni.operator import EniOperator
from reconciler.eni.view import NodeError, NodeView
from reconciler.model import CiliumNode, EniSpec

from .helpers import node_for, sim_world


def _subnet(
    sid: str,
    free: int,
    *,
    az: str = "az-a",
    vpc: str = "vpc-1",
    v6: bool = True,
    tags: dict[str, str] | None = None,
) -> Subnet:
    return Subnet(sid, vpc, az, "10.0.0.0/24", free, ("2600::/64",) if v6 else (), tags or {})


SUBNETS = [
    _subnet("node", 50),
    _subnet("same-rt-small", 60),
    _subnet("same-rt-big", 400),
    _subnet("other-rt-huge", 5000, tags={"role": "pods"}),
    _subnet("tagged-small", 100, tags={"role": "pods"}),
    _subnet("other-az", 90000, az="az-b", tags={"role": "pods"}),
    _subnet("other-vpc", 90000, vpc="vpc-2", tags={"role": "pods"}),
]
ROUTES = [
    RouteTable("rt-node", "vpc-1", ("node", "same-rt-small", "same-rt-big")),
    RouteTable("rt-main", "vpc-1", (), main=True),
]


def _spec(**kw: object) -> EniSpec:
    base: dict[str, object] = {"vpc_id": "vpc-1", "availability_zone": "az-a", "node_subnet_id": "node"}
    base.update(kw)
    return EniSpec(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("spec", "addresses", "subnets", "chosen", "step"),
    [
        # Step 1: subnet-ids, filtered by VPC + AZ, most free wins (other-az is ignored).
        (
            {"subnet_ids": ("tagged-small", "other-az", "same-rt-small")},
            10,
            SUBNETS,
            "tagged-small",
            "subnet-ids",
        ),
        # Step 1 beats tags: subnet-tags are ignored when subnet-ids are set.
        (
            {"subnet_ids": ("same-rt-small",), "subnet_tags": {"role": "pods"}},
            10,
            SUBNETS,
            "same-rt-small",
            "subnet-ids",
        ),
        # Step 2: subnet-tags, all must match, in VPC + AZ, most free.
        ({"subnet_tags": {"role": "pods"}}, 10, SUBNETS, "other-rt-huge", "subnet-tags"),
        # Step 3: neither set -> the node subnet when it can serve.
        ({}, 10, SUBNETS, "node", "node-subnet"),
        # Step 4: node subnet too small -> a subnet in the same route table (most free that can serve).
        ({}, 100, SUBNETS, "same-rt-big", "route-table"),
        # Step 5: nothing in the route table can serve -> the largest free subnet in VPC + AZ.
        ({}, 1000, SUBNETS, "other-rt-huge", "largest"),
        # Node subnet served by the main route table: other main-table subnets are "same route table".
        ({"node_subnet_id": "other-rt-huge"}, 6000, SUBNETS, "other-rt-huge", "largest"),
        ({"node_subnet_id": "tagged-small"}, 200, SUBNETS, "other-rt-huge", "route-table"),
    ],
)
def test_eni_create_1_subnet_selection_order(
    spec: dict[str, object], addresses: int, subnets: list[Subnet], chosen: str, step: str
) -> None:
    choice = select_subnet(_spec(**spec), subnets, ROUTES, addresses)
    assert (choice.subnet.id, choice.step) == (chosen, step)


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ({"subnet_ids": ("other-az",)}, "matches spec.eni.subnet-ids"),
        ({"subnet_tags": {"role": "nothing"}}, "matches spec.eni.subnet-tags"),
    ],
)
def test_eni_param_3_no_matching_subnet_is_one_clear_sentence(spec: dict[str, object], fragment: str) -> None:
    with pytest.raises(NodeError) as info:
        select_subnet(_spec(**spec), SUBNETS, ROUTES, 1)
    assert fragment in str(info.value) and "fix spec.eni" in str(info.value)


def test_eni_create_1_full_subnets_are_never_chosen() -> None:
    full = [_subnet("node", 0), _subnet("x", 0)]
    with pytest.raises(NodeError, match="has a free address"):
        select_subnet(_spec(), full, ROUTES, 1)


def test_eni_create_1_avoided_fragmented_subnet_is_tried_last() -> None:
    """ENI-ALLOC-4: after InsufficientCidrBlocks another eligible subnet is preferred."""
    choice = select_subnet(_spec(), SUBNETS, ROUTES, 16, avoid=frozenset({"node"}))
    assert choice.subnet.id == "same-rt-big"
    only = select_subnet(_spec(subnet_ids=("node",)), SUBNETS, ROUTES, 16, avoid=frozenset({"node"}))
    assert only.subnet.id == "node"


def test_eni_v6_4_ipv4_only_subnet_is_a_clear_error() -> None:
    subnets = [_subnet("node", 50, v6=False), _subnet("v4only", 500, v6=False)]
    with pytest.raises(NodeError) as info:
        select_subnet(_spec(subnet_ids=("v4only",)), subnets, ROUTES, 1, need_ipv6=True)
    assert str(info.value) == (
        "subnet v4only has no IPv6 CIDR; add an IPv6 /64 to it or remove it from subnet-ids"
    )
    mixed = [_subnet("node", 50, v6=False), _subnet("dual", 500)]
    assert select_subnet(_spec(), mixed, ROUTES, 1, need_ipv6=True).subnet.id == "dual"


@pytest.mark.parametrize(
    ("used", "first", "skip", "expected"),
    [
        ([0], 0, 0, 1),
        ([0], 1, 0, 1),
        ([0, 1, 3], 1, 0, 2),
        ([0, 2], 1, 0, 1),
        ([0], 2, 0, 2),  # Cilium starts at the index itself (SPEC notes the seed says "greater than")
        ([0, 1], 1, 1, 3),  # retry with the next index after a conflict
    ],
)
def test_eni_create_2_device_index_lowest_free_at_or_above_first(
    used: list[int], first: int, skip: int, expected: int
) -> None:
    assert device_index(used, first, skip) == expected


def _view(
    spec: EniSpec,
    attached: list[NetworkInterface],
    groups: list[SecurityGroup] | None = None,
    max_enis: int = 3,
) -> NodeView:
    limits = InstanceTypeLimits("m5.large", max_enis, 10, 10, "nitro")
    node = CiliumNode(name="n", instance_id="i-1", eni=spec)
    return NodeView(node, limits, tuple(attached), {s.id: s for s in SUBNETS}, ROUTES, groups or [])


ETH0 = NetworkInterface(
    "eni-0",
    "node",
    "vpc-1",
    "az-a",
    "in-use",
    "m",
    "10.0.0.5",
    ("10.0.0.5",),
    security_group_ids=("sg-eth0",),
    instance_id="i-1",
    device_index=0,
)
GROUPS = [
    SecurityGroup("sg-a", "a", "vpc-1", {"pods": "yes"}),
    SecurityGroup("sg-b", "b", "vpc-1", {"pods": "yes", "x": "1"}),
    SecurityGroup("sg-c", "c", "vpc-2", {"pods": "yes"}),
]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"security_groups": ("sg-x",), "security_group_tags": {"pods": "yes"}}, ("sg-x",)),
        ({"security_group_tags": {"pods": "yes"}}, ("sg-a", "sg-b")),
        ({"security_group_tags": {"pods": "yes", "x": "1"}}, ("sg-b",)),
        ({}, ("sg-eth0",)),
    ],
)
def test_eni_param_4_security_group_order(spec: dict[str, object], expected: tuple[str, ...]) -> None:
    action = plan_create(_view(_spec(**spec), [ETH0], GROUPS), 4, False, False, {}, 0, 0, "r")
    assert action.request.security_group_ids == expected


def test_eni_param_4_tags_matching_nothing_is_an_error_not_eth0() -> None:
    with pytest.raises(NodeError, match="security-group-tags"):
        plan_create(
            _view(_spec(security_group_tags={"nope": "1"}), [ETH0], GROUPS), 4, False, False, {}, 0, 0, "r"
        )


def test_eni_create_3_request_shape() -> None:
    tags = {"io.cilium/cilium-managed": "true", "io.cilium/cluster-name": "c", "team": "t"}
    action = plan_create(_view(_spec(first_interface_index=1), [ETH0]), 5, False, True, tags, 7, 2, "deficit")
    req = action.request
    assert req.description == "Cilium-CNI (i-1)" == description_for("i-1")
    assert dict(req.tags) == tags
    assert (req.secondary_private_ip_count, req.ipv4_prefix_count, req.ipv6_prefix_count) == (5, None, 1)
    assert action.device_index == 1
    assert req.client_token == client_token("i-1", 1, 7, 2)
    assert len(req.client_token or "") <= 64
    # Same node + index + attempt -> same token; another attempt -> another token.
    again = plan_create(_view(_spec(first_interface_index=1), [ETH0]), 5, False, True, tags, 7, 2, "deficit")
    assert again.request.client_token == req.client_token
    assert client_token("i-1", 1, 7, 3) != req.client_token


def test_eni_create_3_count_capped_by_instance_limit_and_prefix_mode_uses_prefix_count() -> None:
    ips = plan_create(_view(_spec(), [ETH0]), 50, False, False, {}, 0, 0, "r")
    assert ips.request.secondary_private_ip_count == 9  # 10 per ENI including the primary
    prefixes = plan_create(_view(_spec(), [ETH0]), 40, True, False, {}, 0, 0, "r")
    assert (prefixes.request.ipv4_prefix_count, prefixes.request.secondary_private_ip_count) == (3, None)


def test_eni_alloc_5_out_of_interfaces_is_a_clear_sentence() -> None:
    attached = [ETH0] + [
        NetworkInterface(
            f"eni-{i}",
            "node",
            "vpc-1",
            "az-a",
            "in-use",
            "m",
            f"10.0.0.{i}",
            (f"10.0.0.{i}",),
            instance_id="i-1",
            device_index=i,
        )
        for i in (1, 2)
    ]
    with pytest.raises(NodeError) as info:
        plan_create(_view(_spec(), attached), 4, False, False, {}, 0, 0, "r")
    assert "is out of interfaces: 3 of 3 attached" in str(info.value)


# --- against SimulatedEc2: ENI-CREATE-2 retry, ENI-CREATE-4, ENI-PARAM-8 -------------------------


def _operator_for(instance_type: str = "m5.large", **cfg: object):  # type: ignore[no-untyped-def]
    clock, sim, world = sim_world(instance_type=instance_type)
    op = EniOperator(sim, EniOperatorConfig(**cfg), clock)  # type: ignore[arg-type]
    op.refresh(force=True)
    node = node_for(
        "n",
        world.instance_ids[0],
        world,
        instance_type=instance_type,
        requested_v4=8,
        first_interface_index=1,
    )
    return clock, sim, world, op, node


def test_eni_create_4_and_param_8_create_attach_and_delete_on_termination() -> None:
    clock, sim, world, op, node = _operator_for()
    op.on_node_changed(node)
    result = op.run_allocations()[node.name]
    assert result.operator_error == ""
    created = [e for e in sim.enis.values() if e.description == "Cilium-CNI (" + node.instance_id + ")"]
    assert len(created) == 1
    eni = created[0]
    assert eni.attachment is not None and eni.attachment.device_index == 1
    assert eni.attachment.delete_on_termination is True
    assert eni.tags["io.cilium/cilium-managed"] == "true" and eni.tags["io.cilium/cluster-name"] == "default"
    assert len(eni.secondary_ips) == 8  # requested in the create call, no separate assign call
    actions = [c.action for c in sim.calls if not c.action.startswith("Describe")]
    assert actions == ["CreateNetworkInterface", "AttachNetworkInterface", "ModifyNetworkInterfaceAttribute"]


def test_eni_param_8_delete_on_termination_false_skips_the_modify_call() -> None:
    clock, sim, world, op, node = _operator_for()
    node = node_for(
        "n",
        world.instance_ids[0],
        world,
        requested_v4=8,
        first_interface_index=1,
        delete_on_termination=False,
    )
    op.on_node_changed(node)
    op.run_allocations()
    assert "ModifyNetworkInterfaceAttribute" not in [c.action for c in sim.calls]


def test_eni_create_4_failed_attach_deletes_the_new_eni() -> None:
    clock, sim, world, op, node = _operator_for()
    sim.faults.script("InternalError", action="AttachNetworkInterface")
    op.on_node_changed(node)
    result = op.run_allocations()[node.name]
    assert "AttachNetworkInterface" in [c.action for c in sim.calls]
    assert [c.action for c in sim.calls if c.action == "DeleteNetworkInterface"] == ["DeleteNetworkInterface"]
    assert not [e for e in sim.enis.values() if e.attachment is None]
    assert result.operator_error.startswith(f"node {node.name}: creating an ENI in ")
    assert "InternalError" in result.operator_error


def test_eni_create_2_index_conflict_retries_the_next_index() -> None:
    """An ENI attached behind the cache's back (e.g. not yet visible) holds index 1."""
    clock, sim, world, op, node = _operator_for()
    foreign = sim.create_network_interface(
        __import__("reconciler.ec2.api", fromlist=["x"]).CreateNetworkInterfaceRequest(
            subnet_id=world.node_subnet("us-east-1a")
        )
    )
    sim.attach_network_interface(foreign.id, node.instance_id, 1)
    op.on_node_changed(node)
    result = op.run_allocations()[node.name]
    ours = [e for e in sim.enis.values() if e.description.startswith("Cilium-CNI")]
    assert len(ours) == 1 and ours[0].attachment is not None and ours[0].attachment.device_index == 2
    assert result.created_enis == 1


def test_eni_create_3_client_token_makes_a_retried_create_idempotent() -> None:
    """A create whose response is lost (fault after effect) is retried with the same token: one ENI."""
    clock, sim, world, op, node = _operator_for()
    sim.faults.script("InternalError", action="CreateNetworkInterface", phase="after")
    op.on_node_changed(node)
    first = op.run_allocations()[node.name]
    assert "InternalError" in first.operator_error
    clock.advance(1.0)
    waiting = op.run_allocations()[node.name]
    assert waiting.actions == []  # no mutation before a refresh shows what the failed call did
    assert op.refresh() is True  # the failure asked for one
    clock.advance(1.0)
    second = op.run_allocations()[node.name]
    assert second.operator_error == ""
    creates = [c for c in sim.calls if c.action == "CreateNetworkInterface"]
    assert len(creates) == 2 and creates[0].params["client_token"] == creates[1].params["client_token"]
    ours = [e for e in sim.enis.values() if e.description.startswith("Cilium-CNI")]
    assert len(ours) == 1 and ours[0].attachment is not None
