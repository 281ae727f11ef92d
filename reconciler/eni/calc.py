"""Deficit and excess of a node (ENI-ARCH-5, ENI-CALC-1..4), exactly as the seed writes them.

Demand comes from the agent's `spec.ipam.pools.requested` (pool `default`) and supply from the CIDRs
the agent has adopted into `spec.ipam.pools.allocated` (pool `default`). These functions are pure so
the simulator can run them for thousands of nodes per scan.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from reconciler.eni.cidr import ipv4_addresses_in  # re-exported for callers of ENI-ARCH-5
from reconciler.model import DEFAULT_POOL, CiliumNode


def used_ips(requested_ipv4: int, pre_allocate: int) -> int:
    """ENI-ARCH-5: usedIPs = max(requested.ipv4-addrs - pre-allocate, 0)."""
    return max(requested_ipv4 - pre_allocate, 0)


def needed_ips(available: int, used: int, pre_allocate: int, min_allocate: int, max_allocate: int) -> int:
    """ENI-CALC-1, term by term as the seed; never below 0."""
    needed = max(pre_allocate - (available - used), min_allocate - available)
    if max_allocate > 0:
        needed = min(max(max_allocate - available, 0), needed)
    return max(needed, 0)


def excess_ips(
    available: int, used: int, pre_allocate: int, min_allocate: int, max_above_watermark: int
) -> int:
    """ENI-CALC-2, the seed's three branches."""
    upper_bound = min_allocate + max_above_watermark
    if available <= upper_bound:
        return 0
    if used <= upper_bound and used + pre_allocate <= upper_bound:
        return available - upper_bound
    return max(available - used - upper_bound, 0)


@dataclass(frozen=True)
class NodeDemand:
    """The numbers ENI-CALC works with for one node (also the ENI-MET-1 per-node gauges)."""

    node: str
    available: int
    used: int
    needed: int
    excess: int
    wants_ipv6: bool
    max_above_watermark: int

    @property
    def in_deficit(self) -> bool:
        return self.needed > 0


def node_demand(node: CiliumNode) -> NodeDemand:
    """ENI-ARCH-5 + ENI-CALC-1/2 for one CiliumNode."""
    ipam = node.ipam
    request = ipam.request_for(DEFAULT_POOL)
    requested_v4 = request.ipv4_addrs if request else 0
    available = ipv4_addresses_in(ipam.cidrs_of(DEFAULT_POOL))
    used = used_ips(requested_v4, ipam.pre_allocate)
    return NodeDemand(
        node=node.name,
        available=available,
        used=used,
        needed=needed_ips(available, used, ipam.pre_allocate, ipam.min_allocate, ipam.max_allocate),
        excess=excess_ips(available, used, ipam.pre_allocate, ipam.min_allocate, ipam.max_above_watermark),
        wants_ipv6=bool(request and request.ipv6_addrs > 0),
        max_above_watermark=ipam.max_above_watermark,
    )


def pod_need(used: int, pending_pods: int, available: int) -> int:
    """The pod-serving part of a node's deficit: addresses its pods lack (ENI-CALC-4 phase one).

    `used` counts the pods the agent has reported (ENI-ARCH-5); `pending_pods` the pods bound to the
    node without an address, which may not be in `used` yet when the agent has not synced. The rest
    of the deficit (pre-allocate, min-allocate, max-above-watermark) is the watermark part.
    `available` should include addresses in flight to the agent, so they are not asked for twice.
    """
    return max(max(used, pending_pods) - available, 0)


def two_phase_order(amounts: Mapping[str, int], pod_needs: Mapping[str, int]) -> list[str]:
    """ENI-CALC-4 as two phases of the same queue: every node with a pod need first, then the nodes
    whose deficit is only the watermark; largest deficit first within a phase, ties by name."""
    return sorted(amounts, key=lambda n: (pod_needs.get(n, 0) <= 0, -amounts[n], n))


def surge_allocate(pending_pods: int, needed: int) -> int:
    """ENI-ALLOC-2: extra IPs when more pods wait on the node than neededIPs covers."""
    return pending_pods - needed if pending_pods > needed else 0


@dataclass(frozen=True)
class QueueEntry:
    node: str
    action: str  # "allocate" or "release"
    amount: int


def scan_queue(demands: Sequence[NodeDemand], release_enabled: bool) -> list[QueueEntry]:
    """ENI-CALC-4: deficits first, largest first; then nodes to release from (largest excess first).

    Ties break on node name so the order is deterministic for the simulator.
    """
    allocs = sorted((d for d in demands if d.needed > 0), key=lambda d: (-d.needed, d.node))
    queue = [QueueEntry(d.node, "allocate", d.needed) for d in allocs]
    if release_enabled:
        releases = sorted(
            (d for d in demands if d.needed == 0 and d.excess > 0), key=lambda d: (-d.excess, d.node)
        )
        queue += [QueueEntry(d.node, "release", d.excess) for d in releases]
    return queue
