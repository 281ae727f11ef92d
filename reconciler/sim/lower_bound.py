"""The lower bound: the fewest mutating EC2 calls and the shortest time any operator could achieve.

It is the benchmarks' yardstick (issue 7), so it is pure and small enough to check by hand.

Calls (per node, ENI mode): the primary ENI (device index 0) is usable for pods when
`first-interface-index` is 0 and can be filled with ONE AssignPrivateIpAddresses call (the count --
or the Ipv4PrefixCount -- goes in one request, ENI-ALLOC-2/4). Every further ENI costs at least
CreateNetworkInterface (with the count in the same call, ENI-CREATE-3) + AttachNetworkInterface
(ENI-CREATE-4) + ModifyNetworkInterfaceAttribute when delete-on-termination is on (ENI-PARAM-8).
An ENI holds `Ipv4AddressesPerInterface - 1` secondary slots (the primary takes one, EC2-SIM-1); a slot
is one IP, or a /28 = 16 IPs with prefix delegation. Since one extra ENI costs 2-3 calls and filling
eth0 costs 1, the optimum is: as few new ENIs as possible, and eth0 only if they fall short.

Time: EC2 throttles per action with a token bucket (EC2-SIM-5, max / refill per second), starting
full. The k-th call of an action cannot start before max(0, k - max) / refill; it returns `latency`
later. Attach k cannot start before create k returned (pairing the k-th earliest create with the
k-th earliest attach is optimal because both sequences are sorted). Pods have IPs once every
assign and every attach of the pods' own capacity has returned; delete-on-termination does not delay
them. Agents, cache refreshes and Kubernetes writes are taken as free, so the bound is never above
what a real operator can do.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from reconciler.ec2.api import InstanceTypeLimits

ASSIGN = "AssignPrivateIpAddresses"
CREATE = "CreateNetworkInterface"
ATTACH = "AttachNetworkInterface"
MODIFY = "ModifyNetworkInterfaceAttribute"
UNASSIGN = "UnassignPrivateIpAddresses"
DELETE = "DeleteNetworkInterface"

MUTATING_ACTIONS = frozenset(
    {
        ASSIGN,
        UNASSIGN,
        CREATE,
        ATTACH,
        MODIFY,
        DELETE,
        "DetachNetworkInterface",
        "AssignIpv6Addresses",
        "CreateTags",
        "DeleteTags",
        "AssociateAddress",
    }
)


@dataclass(frozen=True)
class Bucket:
    """An AWS token bucket: `capacity` calls at once, then `refill` per second (EC2-SIM-5)."""

    capacity: float
    refill: float

    def issue_time(self, k: int) -> float:
        """Earliest start of the k-th call (1-based) when the bucket starts full at t=0."""
        return max(0.0, (k - self.capacity) / self.refill)


# EC2-SIM-5 (per action, per account and region).
AWS_BUCKETS: Mapping[str, Bucket] = {
    ASSIGN: Bucket(100, 5),
    UNASSIGN: Bucket(100, 5),
    "AssignIpv6Addresses": Bucket(100, 5),
    CREATE: Bucket(100, 5),
    DELETE: Bucket(100, 5),
    MODIFY: Bucket(100, 5),
    "CreateTags": Bucket(100, 10),
    ATTACH: Bucket(50, 5),
    "DetachNetworkInterface": Bucket(50, 5),
}


@dataclass(frozen=True)
class NodeCalls:
    """The fewest mutating calls that give one node `capacity` IPv4 addresses (>= its demand)."""

    assign: int = 0
    create: int = 0
    attach: int = 0
    modify: int = 0
    capacity: int = 0
    unsatisfiable: int = 0  # demand beyond what the instance type can ever hold

    @property
    def total(self) -> int:
        return self.assign + self.create + self.attach + self.modify


def node_calls(
    demand: int,
    limits: InstanceTypeLimits,
    *,
    prefix_delegation: bool = False,
    first_interface_index: int = 0,
    delete_on_termination: bool = True,
) -> NodeCalls:
    """Minimum mutating calls to give a fresh node (only eth0 attached) `demand` IPv4 addresses."""
    if demand <= 0:
        return NodeCalls()
    unit = 16 if prefix_delegation and limits.supports_prefix_delegation else 1
    per_eni = (limits.ipv4_per_interface - 1) * unit
    eth0 = per_eni if first_interface_index == 0 else 0
    max_new = max(limits.max_network_interfaces - max(first_interface_index, 1), 0)
    most = eth0 + max_new * per_eni
    short = max(demand - most, 0)
    want = demand - short
    new_enis = min(max_new, math.ceil(max(want - eth0, 0) / per_eni)) if per_eni else 0
    use_eth0 = eth0 > 0 and want > new_enis * per_eni
    return NodeCalls(
        assign=1 if use_eth0 else 0,
        create=new_enis,
        attach=new_enis,
        modify=new_enis if delete_on_termination else 0,
        capacity=(eth0 if use_eth0 else 0) + new_enis * per_eni,
        unsatisfiable=short,
    )


@dataclass(frozen=True)
class LowerBound:
    calls_by_action: Mapping[str, int]
    seconds: float  # earliest time at which every node holds its demand
    unsatisfiable: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def mutating_calls(self) -> int:
        return sum(self.calls_by_action.values())


def _last_return(n: int, bucket: Bucket, latency: float) -> float:
    return bucket.issue_time(n) + latency if n > 0 else 0.0


def _chain_last_return(n: int, first: Bucket, first_latency: float, second: Bucket, latency: float) -> float:
    """Last return of `second` when its k-th call needs the k-th call of `first` to have returned."""
    last = 0.0
    for k in range(1, n + 1):
        start = max(first.issue_time(k) + first_latency, second.issue_time(k))
        last = max(last, start + latency)
    return last


def min_time(
    plans: Iterable[NodeCalls],
    *,
    buckets: Mapping[str, Bucket] = AWS_BUCKETS,
    latency: Mapping[str, float] | None = None,
) -> float:
    """Earliest moment all `plans` are done (assign and create->attach on their buckets)."""
    lat = latency or {}
    assigns = creates = 0
    for p in plans:
        assigns += p.assign
        creates += p.create
    t_assign = _last_return(assigns, buckets[ASSIGN], lat.get(ASSIGN, 0.0))
    t_attach = _chain_last_return(
        creates, buckets[CREATE], lat.get(CREATE, 0.0), buckets[ATTACH], lat.get(ATTACH, 0.0)
    )
    return max(t_assign, t_attach)


def lower_bound(
    demands: Iterable[int],
    limits: InstanceTypeLimits,
    *,
    pod_demands: Iterable[int] | None = None,
    prefix_delegation: bool = False,
    first_interface_index: int = 0,
    delete_on_termination: bool = True,
    buckets: Mapping[str, Bucket] = AWS_BUCKETS,
    latency: Mapping[str, float] | None = None,
) -> LowerBound:
    """Calls for the full demands (pods + pre-allocate, ENI-ARCH-5); time for the pods' share only.

    `pod_demands` (default: `demands`) is what must be in place before every pod has an IP; the
    pre-allocated headroom may come later, so it does not count towards the time bound.
    """
    def plan(demand: int) -> NodeCalls:
        return node_calls(
            demand,
            limits,
            prefix_delegation=prefix_delegation,
            first_interface_index=first_interface_index,
            delete_on_termination=delete_on_termination,
        )

    full = [plan(d) for d in demands]
    pods = full if pod_demands is None else [plan(d) for d in pod_demands]
    counts: dict[str, int] = {ASSIGN: 0, CREATE: 0, ATTACH: 0, MODIFY: 0}
    for p in full:
        counts[ASSIGN] += p.assign
        counts[CREATE] += p.create
        counts[ATTACH] += p.attach
        counts[MODIFY] += p.modify
    return LowerBound(
        calls_by_action={k: v for k, v in counts.items() if v},
        seconds=min_time(pods, buckets=buckets, latency=latency),
        unsatisfiable=sum(p.unsatisfiable for p in full),
    )
