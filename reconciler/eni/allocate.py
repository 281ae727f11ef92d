"""IPv4 allocation on existing ENIs (ENI-ALLOC-1..5).

`allocation_target` is the seed's count before ENI and subnet limits; `plan_ipv4` picks the ENI and
the call. Prefix delegation (ENI-ALLOC-4) is decided per node (flag, Nitro or bare metal, opt-out)
and applied per ENI: an ENI holding plain /32 secondaries never gets /28 prefixes and vice versa, so
a fallback to /32s on one ENI never turns prefix delegation off for the whole node (Cilium issue
46644). When no ENI fits, the caller creates one (ENI-ALLOC-5, see create.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from reconciler.ec2.api import InstanceTypeLimits, NetworkInterface
from reconciler.eni.calc import surge_allocate
from reconciler.eni.config import EniOperatorConfig
from reconciler.eni.view import NodeView
from reconciler.model import EniSpec

PREFIX_SIZE = 16


@dataclass(frozen=True)
class AssignIps:
    """AssignPrivateIpAddresses(SecondaryPrivateIpAddressCount) (ENI-ALLOC-3)."""

    eni_id: str
    subnet_id: str
    count: int
    reason: str

    @property
    def addresses(self) -> int:
        return self.count


@dataclass(frozen=True)
class AssignPrefixes:
    """AssignPrivateIpAddresses(Ipv4PrefixCount) (ENI-ALLOC-4)."""

    eni_id: str
    subnet_id: str
    count: int
    reason: str

    @property
    def addresses(self) -> int:
        return PREFIX_SIZE * self.count


def prefix_delegation_enabled(config: EniOperatorConfig, limits: InstanceTypeLimits, spec: EniSpec) -> bool:
    """ENI-ALLOC-4 / ENI-PARAM-7: flag on, Nitro or bare metal, node not opted out."""
    return (
        config.aws_enable_prefix_delegation
        and limits.supports_prefix_delegation
        and not spec.disable_prefix_delegation
    )


def allocation_target(
    needed: int, max_above_watermark: int, pending_pods: int, available: int, max_allocate: int
) -> int:
    """ENI-ALLOC-2 before limits: neededIPs + max-above-watermark + surgeAllocate.

    With max-allocate set the result never takes the node past it (max-above-watermark and surge
    included), which is what max-allocate promises.
    """
    target = needed + max_above_watermark + surge_allocate(pending_pods, needed)
    if max_allocate > 0:
        target = min(target, max(max_allocate - available, 0))
    return target


def _is_prefix_eni(eni: NetworkInterface) -> bool:
    return not eni.secondary_ips


def plan_prefixes(view: NodeView, target: int) -> AssignPrefixes | None:
    """ENI-ALLOC-1..4 with prefix delegation: the first usable ENI without plain /32s that has a free
    slot, in a subnet with 16 free addresses not known to be fragmented.

    Count = min(AvailableOnSubnet, min(AvailableOnENI, target)), then ceil(count / 16) prefixes.
    """
    if target <= 0:
        return None
    for eni in view.usable:
        slots = view.free_ipv4_slots(eni)
        subnet_free = view.subnet_free(eni.subnet_id)
        if (
            slots
            and _is_prefix_eni(eni)
            and subnet_free >= PREFIX_SIZE
            and eni.subnet_id not in view.fragmented
        ):
            count = min(subnet_free, min(slots * PREFIX_SIZE, target))
            prefixes = min(-(-count // PREFIX_SIZE), slots, subnet_free // PREFIX_SIZE)
            return AssignPrefixes(
                eni.id,
                eni.subnet_id,
                prefixes,
                f"deficit: {prefixes} /28 prefix(es) for {target} address(es)",
            )
    return None


def plan_ips(
    view: NodeView, target: int, *, fallback: bool = False, allow_mixing: bool = False
) -> AssignIps | None:
    """ENI-ALLOC-1..3: the first usable ENI with a free slot whose subnet has a free address.

    Count = min(AvailableOnSubnet, min(AvailableOnENI, target)). ENIs holding /28 prefixes are
    skipped (no mixing) unless `allow_mixing`, the last resort after InsufficientCidrBlocks when no
    other ENI, subnet or device slot can serve.
    """
    if target <= 0:
        return None
    for eni in view.usable:
        slots = view.free_ipv4_slots(eni)
        subnet_free = view.subnet_free(eni.subnet_id)
        if slots and subnet_free and (allow_mixing or not eni.ipv4_prefixes):
            count = min(subnet_free, min(slots, target))
            why = "fallback to /32 because /28 prefixes are unavailable" if fallback else "deficit"
            return AssignIps(eni.id, eni.subnet_id, count, f"{why}: {count} address(es) for {target}")
    return None
