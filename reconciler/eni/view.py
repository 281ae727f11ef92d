"""What the planners know about one node: its CiliumNode, its instance's limits and ENIs, the subnets.

Built from the cache once per node per cycle so every planner reads the same consistent picture.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from reconciler.ec2.api import InstanceTypeLimits, NetworkInterface, RouteTable, SecurityGroup, Subnet
from reconciler.eni.publish import usable_for_pods
from reconciler.model import CiliumNode


class NodeError(Exception):
    """A per-node problem the user can fix; `str()` is the operator-status sentence."""


@dataclass(frozen=True)
class NodeView:
    node: CiliumNode
    limits: InstanceTypeLimits
    attached: tuple[NetworkInterface, ...]
    subnets: Mapping[str, Subnet]
    route_tables: Sequence[RouteTable] = ()
    security_groups: Sequence[SecurityGroup] = ()
    fragmented: frozenset[str] = field(default_factory=frozenset)

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def instance_id(self) -> str:
        return self.node.instance_id

    @property
    def usable(self) -> tuple[NetworkInterface, ...]:
        """ENI-ALLOC-1: attached ENIs with index >= first-interface-index, not excluded, by index."""
        return tuple(e for e in self.attached if usable_for_pods(e, self.node.eni))

    @property
    def free_device_slot(self) -> bool:
        """ENI-ALLOC-5: every attached ENI, excluded or not, occupies a slot."""
        return len(self.attached) < self.limits.max_network_interfaces

    def free_ipv4_slots(self, eni: NetworkInterface) -> int:
        """ENI-ALLOC-3: Ipv4AddressesPerInterface includes the primary; a /28 uses one slot."""
        return max(self.limits.ipv4_per_interface - eni.address_slots_used, 0)

    def free_ipv6_slots(self, eni: NetworkInterface) -> int:
        return max(self.limits.ipv6_per_interface - len(eni.ipv6_addresses) - len(eni.ipv6_prefixes), 0)

    def subnet_free(self, subnet_id: str) -> int:
        subnet = self.subnets.get(subnet_id)
        return subnet.available_ip_address_count if subnet else 0
