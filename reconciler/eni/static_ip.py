"""Static public IPs for nodes (ENI-PARAM-9).

A node with `spec.ipam.static-ip-tags` gets an Elastic IP carrying all those tags associated with
its primary ENI (device index 0), unless that ENI already has a public IP.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from reconciler.ec2.api import Address
from reconciler.eni.cache import tags_match
from reconciler.eni.view import NodeError, NodeView


@dataclass(frozen=True)
class AssociateStaticIp:
    allocation_id: str
    public_ip: str
    eni_id: str
    reason: str = "spec.ipam.static-ip-tags set and the primary ENI has no public IP"


def needs_static_ip(view: NodeView) -> bool:
    if not view.node.ipam.static_ip_tags:
        return False
    primary = next((e for e in view.attached if e.device_index == 0), None)
    return primary is not None and not primary.public_ip


def plan_static_ip(view: NodeView, addresses: Sequence[Address]) -> AssociateStaticIp | None:
    """The association to make, None when nothing is needed, NodeError when no address is free."""
    if not needs_static_ip(view):
        return None
    primary = next(e for e in view.attached if e.device_index == 0)
    if any(a.network_interface_id == primary.id for a in addresses):
        return None
    wanted = view.node.ipam.static_ip_tags
    free = sorted(
        (a for a in addresses if a.association_id is None and tags_match(a.tags, wanted)),
        key=lambda a: a.allocation_id,
    )
    if not free:
        raise NodeError(
            f"no unassociated Elastic IP carries spec.ipam.static-ip-tags {dict(wanted)}; "
            "allocate one with these tags or remove static-ip-tags"
        )
    return AssociateStaticIp(free[0].allocation_id, free[0].public_ip, primary.id)
