"""What the operator publishes in `status.eni.enis` (ENI-ARCH-3, ENI-PUB-1, ENI-PARAM-2/5/6).

Only ENIs the node may use for pods are published: device index >= first-interface-index and not
matching exclude-interface-tags. `addresses` holds the secondary IPv4s, plus the primary first when
use-primary-address is on. `offered_cidrs` is the agent's view of the same data (ENI-ARCH-4): each
address a /32, each IPv4 prefix a /28, each IPv6 prefix a /80.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from reconciler.ec2.api import NetworkInterface, Subnet, Vpc
from reconciler.eni.cache import tags_match
from reconciler.model import CiliumNode, EniSpec, EniStatus


def usable_for_pods(eni: NetworkInterface, spec: EniSpec) -> bool:
    """ENI-PARAM-2 + ENI-PARAM-5: index >= first-interface-index and not excluded by tags."""
    index = eni.device_index if eni.device_index is not None else -1
    if index < spec.first_interface_index:
        return False
    return not (spec.exclude_interface_tags and tags_match(eni.tags, spec.exclude_interface_tags))


def pod_addresses(eni: NetworkInterface, spec: EniSpec) -> tuple[str, ...]:
    """ENI-PARAM-6: secondaries, with the primary first only when use-primary-address is on."""
    if spec.use_primary_address and eni.primary_ip:
        return (eni.primary_ip, *eni.secondary_ips)
    return eni.secondary_ips


def eni_status(eni: NetworkInterface, spec: EniSpec, subnet: Subnet | None, vpc: Vpc | None) -> EniStatus:
    return EniStatus(
        id=eni.id,
        ip=eni.primary_ip,
        mac=eni.mac_address,
        number=eni.device_index or 0,
        description=eni.description,
        subnet_id=eni.subnet_id,
        subnet_cidr=subnet.cidr_block if subnet else "",
        vpc_id=eni.vpc_id,
        vpc_primary_cidr=vpc.cidr_block if vpc else "",
        vpc_cidrs=tuple(vpc.cidr_blocks) if vpc else (),
        addresses=pod_addresses(eni, spec),
        prefixes=tuple(eni.ipv4_prefixes),
        ipv6_prefixes=tuple(eni.ipv6_prefixes),
        security_groups=tuple(eni.security_group_ids),
        tags=dict(eni.tags),
    )


def node_enis(
    node: CiliumNode,
    enis: Iterable[NetworkInterface],
    subnets: Mapping[str, Subnet],
    vpcs: Mapping[str, Vpc],
) -> dict[str, EniStatus]:
    """ENI-PUB-1: the `status.eni.enis` map for one node from the instance's attached ENIs."""
    return {
        e.id: eni_status(e, node.eni, subnets.get(e.subnet_id), vpcs.get(e.vpc_id))
        for e in enis
        if usable_for_pods(e, node.eni)
    }


def changed_enis(node: CiliumNode, published: Mapping[str, EniStatus]) -> dict[str, EniStatus] | None:
    """ENI-PUB-1: the new map only when it differs from the node's current status, else None."""
    return None if dict(node.enis) == dict(published) else dict(published)


def offered_cidrs(published: Mapping[str, EniStatus]) -> set[str]:
    """ENI-ARCH-4: the CIDRs the agent derives from `status.eni.enis`."""
    out: set[str] = set()
    for status in published.values():
        out.update(f"{a}/32" for a in status.addresses)
        out.update(status.prefixes)
        out.update(status.ipv6_prefixes)
    return out
