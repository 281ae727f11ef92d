"""IPv6 prefix planning (ENI-V6-1..4): exactly one /80 per node, never released.

IPv6 demand is boolean (ENI-V6-2): the agent asks for any ipv6-addrs and the node holds no IPv6
prefix on a pod ENI -> assign one /80 on the first usable ENI whose subnet is dual-stack. When no
attached ENI can take it, the caller creates an ENI with Ipv6PrefixCount=1 (ENI-CREATE-3). A node
whose subnets have no IPv6 CIDR gets one clear operator-status sentence (ENI-V6-4).
"""

from __future__ import annotations

from dataclasses import dataclass

from reconciler.eni.view import NodeError, NodeView


@dataclass(frozen=True)
class AssignIpv6Prefix:
    """AssignIpv6Addresses(Ipv6PrefixCount=1) on an existing ENI (ENI-V6-1)."""

    eni_id: str
    subnet_id: str
    reason: str = "IPv6 demand and no /80 prefix on the node"


def holds_ipv6_prefix(view: NodeView) -> bool:
    return any(e.ipv6_prefixes for e in view.usable)


def plan_ipv6(view: NodeView, wants_ipv6: bool) -> AssignIpv6Prefix | None:
    """ENI-V6-1: the action, or None when nothing is needed or an ENI must be created.

    Raises NodeError when the instance type has no IPv6, or when every usable ENI sits in an
    IPv4-only subnet and no device slot is left to create one in a dual-stack subnet.
    """
    if not wants_ipv6 or holds_ipv6_prefix(view):
        return None
    if view.limits.ipv6_per_interface <= 0:
        raise NodeError(
            f"instance type {view.limits.instance_type} supports no IPv6 addresses; "
            "use an instance type with IPv6 or disable IPv6"
        )
    without_v6: list[str] = []
    for eni in view.usable:
        subnet = view.subnets.get(eni.subnet_id)
        if subnet is None:
            continue
        if not subnet.ipv6_cidr_blocks:
            without_v6.append(subnet.id)
            continue
        if view.free_ipv6_slots(eni) > 0:
            return AssignIpv6Prefix(eni.id, eni.subnet_id)
    if without_v6 and not view.free_device_slot:
        names = ", ".join(sorted(set(without_v6)))
        raise NodeError(
            f"subnet {names} has no IPv6 CIDR; add an IPv6 /64 to it "
            "or move the node's ENIs to a dual-stack subnet"
        )
    return None
