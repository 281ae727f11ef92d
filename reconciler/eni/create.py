"""Planning a new ENI (ENI-CREATE-1..4, ENI-PARAM-3/4/8, ENI-V6-1/4).

`select_subnet` walks the seed's order and says which step decided; `plan_create` turns the choice
into a `CreateEni` action whose request carries the allocation itself (one call instead of two), the
exact description, the tags and a deterministic ClientToken, so a create retried after a timeout is
idempotent on EC2's side instead of leaking a second ENI.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from reconciler.ec2.api import CreateNetworkInterfaceRequest, RouteTable, SecurityGroup, Subnet
from reconciler.eni.cache import tags_match
from reconciler.eni.view import NodeError, NodeView
from reconciler.model import EniSpec

PREFIX_SIZE = 16


@dataclass(frozen=True)
class SubnetChoice:
    subnet: Subnet
    step: str  # "subnet-ids", "subnet-tags", "node-subnet", "route-table", "largest"


@dataclass(frozen=True)
class CreateEni:
    """CreateNetworkInterface + AttachNetworkInterface (+ DeleteOnTermination) for one node."""

    node: str
    instance_id: str
    device_index: int
    request: CreateNetworkInterfaceRequest
    delete_on_termination: bool
    subnet_step: str
    reason: str

    @property
    def subnet_id(self) -> str:
        return self.request.subnet_id

    @property
    def ipv4_addresses(self) -> int:
        """Addresses the create call asks for (the primary not included)."""
        return (self.request.secondary_private_ip_count or 0) + PREFIX_SIZE * (
            self.request.ipv4_prefix_count or 0
        )


def description_for(instance_id: str) -> str:
    """ENI-CREATE-3: exactly `Cilium-CNI (<instance-id>)`."""
    return f"Cilium-CNI ({instance_id})"


def client_token(instance_id: str, device_index: int, epoch: int, attempt: int) -> str:
    """ENI-CREATE-3: same node + index + attempt -> same token (EC2 allows 64 ASCII characters)."""
    return f"cilium-{instance_id}-{device_index}-{epoch}-{attempt}"[:64]


def _most_free(subnets: Sequence[Subnet]) -> Subnet | None:
    usable = [s for s in subnets if s.available_ip_address_count > 0]
    return max(usable, key=lambda s: (s.available_ip_address_count, s.id), default=None)


def route_table_of(subnet_id: str, vpc_id: str, route_tables: Sequence[RouteTable]) -> str | None:
    """The table serving a subnet: its explicit association, else the VPC's main table."""
    for table in route_tables:
        if subnet_id in table.subnet_ids:
            return table.id
    main = next((t for t in route_tables if t.vpc_id == vpc_id and t.main), None)
    return main.id if main else None


def select_subnet(
    spec: EniSpec,
    subnets: Sequence[Subnet],
    route_tables: Sequence[RouteTable],
    addresses: int,
    *,
    need_ipv6: bool = False,
    avoid: frozenset[str] = frozenset(),
) -> SubnetChoice:
    """ENI-CREATE-1 / ENI-PARAM-3, in the seed's order.

    `addresses` is what the new ENI will hold besides its primary; "can serve" means the subnet has
    that many plus one free. `avoid` holds subnets that just failed a prefix request (fragmented): they
    are tried last. `need_ipv6` keeps only dual-stack subnets (ENI-V6-4).
    """
    in_zone = [
        s for s in subnets if s.vpc_id == spec.vpc_id and s.availability_zone == spec.availability_zone
    ]
    if spec.subnet_ids:
        return _pick(spec, [s for s in in_zone if s.id in spec.subnet_ids], "subnet-ids", need_ipv6, avoid)
    if spec.subnet_tags:
        return _pick(
            spec,
            [s for s in in_zone if tags_match(s.tags, spec.subnet_tags)],
            "subnet-tags",
            need_ipv6,
            avoid,
        )
    pool = [s for s in in_zone if s.ipv6_cidr_blocks] if need_ipv6 else in_zone
    if need_ipv6 and not pool:
        raise NodeError(_no_ipv6_sentence(spec, in_zone))
    for allowed in _avoid_last(pool, avoid):
        by_id = {s.id: s for s in allowed}
        node_subnet = by_id.get(spec.node_subnet_id)
        if node_subnet and node_subnet.available_ip_address_count >= addresses + 1:
            return SubnetChoice(node_subnet, "node-subnet")
        table = route_table_of(spec.node_subnet_id, spec.vpc_id, route_tables)
        if table is not None:
            same = [
                s
                for s in allowed
                if s.id != spec.node_subnet_id
                and route_table_of(s.id, s.vpc_id, route_tables) == table
                and s.available_ip_address_count >= addresses + 1
            ]
            best = _most_free(same)
            if best is not None:
                return SubnetChoice(best, "route-table")
        best = _most_free(allowed)
        if best is not None:
            return SubnetChoice(best, "largest")
    raise NodeError(
        f"no subnet in VPC {spec.vpc_id} and zone {spec.availability_zone} has a free address; "
        "add a subnet or free addresses"
    )


def _avoid_last(pool: Sequence[Subnet], avoid: frozenset[str]) -> list[list[Subnet]]:
    preferred = [s for s in pool if s.id not in avoid]
    return [preferred, list(pool)] if preferred and len(preferred) < len(pool) else [list(pool)]


def _pick(
    spec: EniSpec, pool: list[Subnet], step: str, need_ipv6: bool, avoid: frozenset[str]
) -> SubnetChoice:
    source = "subnet-ids" if step == "subnet-ids" else "subnet-tags"
    if not pool:
        raise NodeError(
            f"no subnet in VPC {spec.vpc_id} and zone {spec.availability_zone} matches spec.eni.{source}; "
            f"fix spec.eni.{source} or create a matching subnet"
        )
    if need_ipv6:
        dual = [s for s in pool if s.ipv6_cidr_blocks]
        if not dual:
            raise NodeError(_no_ipv6_sentence(spec, pool))
        pool = dual
    for allowed in _avoid_last(pool, avoid):
        best = _most_free(allowed)
        if best is not None:
            return SubnetChoice(best, step)
    raise NodeError(f"every subnet selected by spec.eni.{source} is full; add addresses or another subnet")


def _no_ipv6_sentence(spec: EniSpec, pool: Sequence[Subnet]) -> str:
    names = ", ".join(sorted(s.id for s in pool)) or spec.node_subnet_id or "(none)"
    field = "subnet-ids" if spec.subnet_ids else "subnet-tags" if spec.subnet_tags else "node-subnet-id"
    return f"subnet {names} has no IPv6 CIDR; add an IPv6 /64 to it or remove it from {field}"


def device_index(used: Sequence[int], first_interface_index: int, skip: int = 0) -> int:
    """ENI-CREATE-2: the lowest unused index >= first-interface-index (`skip` more on conflicts)."""
    taken = set(used)
    index = first_interface_index
    while True:
        if index not in taken:
            if skip == 0:
                return index
            skip -= 1
        index += 1


def security_groups_for(view: NodeView, security_groups: Sequence[SecurityGroup]) -> tuple[str, ...]:
    """ENI-PARAM-4: security-groups, else groups matching security-group-tags, else eth0's groups."""
    spec = view.node.eni
    if spec.security_groups:
        return tuple(spec.security_groups)
    if spec.security_group_tags:
        found = sorted(
            g.id
            for g in security_groups
            if g.vpc_id == spec.vpc_id and tags_match(g.tags, spec.security_group_tags)
        )
        if not found:
            raise NodeError(
                f"no security group in VPC {spec.vpc_id} matches spec.eni.security-group-tags "
                f"{dict(spec.security_group_tags)}; tag a group or set spec.eni.security-groups"
            )
        return tuple(found)
    eth0 = next((e for e in view.attached if e.device_index == 0), None)
    if eth0 is None:
        raise NodeError(
            f"instance {view.instance_id} has no eth0 in the EC2 cache to copy security groups from; "
            "set spec.eni.security-groups"
        )
    return tuple(eth0.security_group_ids)


def plan_create(
    view: NodeView,
    want_ipv4: int,
    prefix_mode: bool,
    need_ipv6: bool,
    tags: Mapping[str, str],
    epoch: int,
    attempt: int,
    reason: str,
) -> CreateEni:
    """ENI-ALLOC-5 + ENI-CREATE-1..4: a full CreateEni action, or NodeError with the fix."""
    if not view.free_device_slot:
        raise NodeError(
            f"instance {view.instance_id} ({view.limits.instance_type}) is out of interfaces: "
            f"{len(view.attached)} of {view.limits.max_network_interfaces} attached and none can take more "
            "addresses; use a larger instance type or lower the node's pre-allocate/min-allocate"
        )
    spec = view.node.eni
    slots = max(view.limits.ipv4_per_interface - 1, 0)
    ips = prefixes = 0
    if prefix_mode:
        prefixes = min(-(-want_ipv4 // PREFIX_SIZE), slots)
        choice = select_subnet(
            spec,
            list(view.subnets.values()),
            view.route_tables,
            prefixes * PREFIX_SIZE,
            need_ipv6=need_ipv6,
            avoid=view.fragmented,
        )
        free = choice.subnet.available_ip_address_count - 1
        prefixes = min(prefixes, free // PREFIX_SIZE)
        if choice.subnet.id in view.fragmented or (prefixes == 0 and want_ipv4 > 0):
            prefix_mode = False  # ENI-ALLOC-4 fallback: this subnet cannot give /28s right now
    if not prefix_mode:
        choice = select_subnet(
            spec,
            list(view.subnets.values()),
            view.route_tables,
            min(want_ipv4, slots),
            need_ipv6=need_ipv6,
            avoid=view.fragmented,
        )
        ips = min(want_ipv4, slots, choice.subnet.available_ip_address_count - 1)
    used = [e.device_index for e in view.attached if e.device_index is not None]
    index = device_index(used, spec.first_interface_index)
    request = CreateNetworkInterfaceRequest(
        subnet_id=choice.subnet.id,
        security_group_ids=security_groups_for(view, view.security_groups),
        description=description_for(view.instance_id),
        secondary_private_ip_count=ips if ips > 0 and not prefix_mode else None,
        ipv4_prefix_count=prefixes if prefixes > 0 and prefix_mode else None,
        ipv6_prefix_count=1 if need_ipv6 else None,
        tags=dict(tags),
        client_token=client_token(view.instance_id, index, epoch, attempt),
    )
    return CreateEni(
        node=view.name,
        instance_id=view.instance_id,
        device_index=index,
        request=request,
        delete_on_termination=spec.delete_on_termination,
        subnet_step=choice.step,
        reason=reason,
    )
