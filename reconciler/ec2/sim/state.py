"""The simulator's world and the EC2 rules that change it (EC2-SIM-1..4).

`SimState` holds every resource and implements each mutation with EC2's checks, all before any
change (a failed call leaves no trace). `SimulatedEc2` wraps these in throttling, faults, latency
and call recording; the admin methods here (`add_vpc`, `add_subnet`, `launch_instance`, ...) build
and evolve the world directly.
"""

from __future__ import annotations

import ipaddress
import random
from collections.abc import Iterator, Mapping, Sequence
from typing import Protocol

from reconciler.clock import Clock
from reconciler.ec2 import api
from reconciler.ec2.api import Ec2Error, make_error
from reconciler.ec2.limits import StaticLimits
from reconciler.ec2.sim.addressing import PLACEMENTS, Ipv4Pool, Ipv6Pool
from reconciler.ec2.sim.resources import (
    SimAddress,
    SimAttachment,
    SimEni,
    SimInstance,
    SimRouteTable,
    SimSecurityGroup,
    SimSubnet,
    SimVpc,
)

# Resource-ID prefix -> (resource type for DescribeTags, NotFound code).
_ID_KINDS: Mapping[str, tuple[str, str]] = {
    "eni": ("network-interface", "InvalidNetworkInterfaceID.NotFound"),
    "subnet": ("subnet", "InvalidSubnetID.NotFound"),
    "vpc": ("vpc", "InvalidVpcID.NotFound"),
    "i": ("instance", "InvalidInstanceID.NotFound"),
    "sg": ("security-group", "InvalidGroup.NotFound"),
    "rtb": ("route-table", "InvalidRouteTableID.NotFound"),
    "eipalloc": ("elastic-ip", "InvalidAllocationID.NotFound"),
}


class _Tagged(Protocol):
    """Every simulated resource carries its tags as a mutable dict (CreateTags edits it in place)."""

    @property
    def tags(self) -> dict[str, str]: ...


def not_found(code: str, what: str) -> Ec2Error:
    return make_error(code, f"{what} does not exist.")


def _fail(code: str, message: str) -> Ec2Error:
    return make_error(code, message)


class SimState:
    def __init__(
        self, clock: Clock, rng: random.Random, limits: StaticLimits, address_placement: str = "random"
    ) -> None:
        if address_placement not in PLACEMENTS:
            raise ValueError(f"address_placement is one of {PLACEMENTS}, not {address_placement!r}")
        self._clock = clock
        self.address_placement = address_placement
        self._rng = rng
        self.limits = limits
        self.vpcs: dict[str, SimVpc] = {}
        self.subnets: dict[str, SimSubnet] = {}
        self.security_groups: dict[str, SimSecurityGroup] = {}
        self.route_tables: dict[str, SimRouteTable] = {}
        self.instances: dict[str, SimInstance] = {}
        self.enis: dict[str, SimEni] = {}
        self.addresses: dict[str, SimAddress] = {}
        self._attachments: dict[str, str] = {}  # attachment id -> ENI id
        self._counters: dict[str, int] = {}
        # The most addresses any ENI may hold before it is attached to a typed instance.
        self.unattached_ipv4_limit = max(t.ipv4_per_interface for t in limits.select(()))
        self.unattached_ipv6_limit = max(t.ipv6_per_interface for t in limits.select(()))

    # --- ids -------------------------------------------------------------------------------------
    def _new_id(self, prefix: str) -> str:
        n = self._counters.get(prefix, 0) + 1
        self._counters[prefix] = n
        return f"{prefix}-{n:017x}"

    def _new_mac(self) -> str:
        n = self._counters.get("mac", 0) + 1
        self._counters["mac"] = n
        return "02:" + ":".join(f"{(n >> s) & 0xFF:02x}" for s in (32, 24, 16, 8, 0))

    # --- admin: building the world ---------------------------------------------------------------
    def add_vpc(
        self, cidr: str, *, ipv6_cidr: str | None = None, tags: Mapping[str, str] | None = None
    ) -> str:
        ipaddress.IPv4Network(cidr)
        if ipv6_cidr is not None and ipaddress.IPv6Network(ipv6_cidr).prefixlen != 56:
            raise ValueError(f"EC2 gives VPCs an IPv6 /56; {ipv6_cidr} is not")
        vpc = SimVpc(self._new_id("vpc"), cidr, ipv6_cidr, dict(tags or {}))
        self.vpcs[vpc.id] = vpc
        vpc.default_security_group_id = self.add_security_group(vpc.id, "default")
        return vpc.id

    def add_subnet(
        self,
        vpc_id: str,
        availability_zone: str,
        cidr: str,
        *,
        ipv6_cidr: str | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> str:
        vpc = self._vpc(vpc_id)
        net = ipaddress.IPv4Network(cidr)
        if not net.subnet_of(ipaddress.IPv4Network(vpc.cidr)):
            raise ValueError(f"subnet {cidr} is outside VPC {vpc_id} ({vpc.cidr})")
        for other in self.subnets.values():
            if other.vpc_id == vpc_id and net.overlaps(ipaddress.IPv4Network(other.cidr)):
                raise ValueError(f"subnet {cidr} overlaps {other.id} ({other.cidr})")
        if ipv6_cidr is not None:
            if vpc.ipv6_cidr is None or not ipaddress.IPv6Network(ipv6_cidr).subnet_of(
                ipaddress.IPv6Network(vpc.ipv6_cidr)
            ):
                raise ValueError(f"IPv6 subnet {ipv6_cidr} is outside VPC {vpc_id}'s IPv6 CIDR")
        subnet = SimSubnet(
            id=self._new_id("subnet"),
            vpc_id=vpc_id,
            availability_zone=availability_zone,
            cidr=str(net),
            ipv6_cidr=ipv6_cidr,
            pool=Ipv4Pool(str(net), self.address_placement),
            ipv6_pool=Ipv6Pool(ipv6_cidr) if ipv6_cidr else None,
            tags=dict(tags or {}),
        )
        self.subnets[subnet.id] = subnet
        return subnet.id

    def add_security_group(self, vpc_id: str, name: str, *, tags: Mapping[str, str] | None = None) -> str:
        self._vpc(vpc_id)
        group = SimSecurityGroup(self._new_id("sg"), name, vpc_id, dict(tags or {}))
        self.security_groups[group.id] = group
        return group.id

    def add_route_table(
        self,
        vpc_id: str,
        subnet_ids: Sequence[str] = (),
        *,
        main: bool = False,
        tags: Mapping[str, str] | None = None,
    ) -> str:
        self._vpc(vpc_id)
        for subnet_id in subnet_ids:
            self._subnet(subnet_id)
        table = SimRouteTable(self._new_id("rtb"), vpc_id, list(subnet_ids), main, dict(tags or {}))
        self.route_tables[table.id] = table
        return table.id

    def launch_instance(
        self,
        instance_type: str,
        subnet_id: str,
        *,
        security_group_ids: Sequence[str] = (),
        tags: Mapping[str, str] | None = None,
    ) -> str:
        """A running instance with its primary ENI at device index 0 (deleted on termination)."""
        self.limits.limits_for(instance_type)
        subnet = self._subnet(subnet_id)
        eni = self.new_eni(
            subnet_id, security_group_ids=security_group_ids, description="Primary network interface"
        )
        instance = SimInstance(
            id=self._new_id("i"),
            instance_type=instance_type,
            availability_zone=subnet.availability_zone,
            vpc_id=subnet.vpc_id,
            subnet_id=subnet_id,
            tags=dict(tags or {}),
        )
        self.instances[instance.id] = instance
        self._attach_unchecked(eni, instance, 0, delete_on_termination=True)
        return instance.id

    def terminate_instance(self, instance_id: str) -> None:
        """Detach every ENI; delete those marked delete-on-termination (as EC2 does)."""
        instance = self._instance(instance_id)
        for index in sorted(instance.enis_by_index):
            eni = self.enis[instance.enis_by_index[index]]
            attachment = eni.attachment
            assert attachment is not None
            self.detach(attachment.id, allow_primary=True)
            if attachment.delete_on_termination:
                self.delete_eni(eni.id)
        instance.state = "terminated"
        del self.instances[instance_id]

    def allocate_address(self, *, tags: Mapping[str, str] | None = None) -> str:
        """An Elastic IP from a documentation range; returns its allocation ID."""
        n = len(self.addresses) + 1
        public_ip = (
            str(ipaddress.IPv4Address("198.51.100.0") + n)
            if n < 255
            else str(ipaddress.IPv4Address("203.0.113.0") + (n % 65000))
        )
        address = SimAddress(self._new_id("eipalloc"), public_ip, tags=dict(tags or {}))
        self.addresses[address.allocation_id] = address
        return address.allocation_id

    # --- lookups ---------------------------------------------------------------------------------
    def _vpc(self, vpc_id: str) -> SimVpc:
        if vpc_id not in self.vpcs:
            raise not_found("InvalidVpcID.NotFound", f"VPC {vpc_id}")
        return self.vpcs[vpc_id]

    def _subnet(self, subnet_id: str) -> SimSubnet:
        if subnet_id not in self.subnets:
            raise not_found("InvalidSubnetID.NotFound", f"Subnet {subnet_id}")
        return self.subnets[subnet_id]

    def _security_group(self, group_id: str) -> SimSecurityGroup:
        if group_id not in self.security_groups:
            raise not_found("InvalidGroup.NotFound", f"Security group {group_id}")
        return self.security_groups[group_id]

    def _route_table(self, table_id: str) -> SimRouteTable:
        if table_id not in self.route_tables:
            raise not_found("InvalidRouteTableID.NotFound", f"Route table {table_id}")
        return self.route_tables[table_id]

    def _instance(self, instance_id: str) -> SimInstance:
        if instance_id not in self.instances:
            raise not_found("InvalidInstanceID.NotFound", f"Instance {instance_id}")
        return self.instances[instance_id]

    def _eni(self, eni_id: str) -> SimEni:
        if eni_id not in self.enis:
            raise not_found("InvalidNetworkInterfaceID.NotFound", f"Network interface {eni_id}")
        return self.enis[eni_id]

    def _address(self, allocation_id: str) -> SimAddress:
        if allocation_id not in self.addresses:
            raise not_found("InvalidAllocationID.NotFound", f"Elastic IP allocation {allocation_id}")
        return self.addresses[allocation_id]

    def _tag_target(self, resource_id: str) -> tuple[dict[str, str], SimEni | None]:
        kind = resource_id.rsplit("-", 1)[0]
        tables: Mapping[str, Mapping[str, _Tagged]] = {
            "eni": self.enis,
            "subnet": self.subnets,
            "vpc": self.vpcs,
            "i": self.instances,
            "sg": self.security_groups,
            "rtb": self.route_tables,
            "eipalloc": self.addresses,
        }
        if kind not in tables:
            raise _fail("InvalidID", f"The ID {resource_id!r} is not a taggable resource ID.")
        resource = tables[kind].get(resource_id)
        if resource is None:
            raise not_found(_ID_KINDS[kind][1], f"Resource {resource_id}")
        return resource.tags, resource if isinstance(resource, SimEni) else None

    def _taggables(self) -> Iterator[tuple[str, str, Mapping[str, str]]]:
        groups: list[tuple[str, Mapping[str, _Tagged]]] = [
            ("network-interface", self.enis),
            ("subnet", self.subnets),
            ("vpc", self.vpcs),
            ("instance", self.instances),
            ("security-group", self.security_groups),
            ("route-table", self.route_tables),
            ("elastic-ip", self.addresses),
        ]
        for resource_type, table in groups:
            for resource_id, resource in table.items():
                yield resource_id, resource_type, resource.tags

    def _eni_attributes(self, eni: SimEni) -> dict[str, list[str]]:
        att = eni.attachment
        return {
            "network-interface-id": [eni.id],
            "subnet-id": [eni.subnet_id],
            "vpc-id": [eni.vpc_id],
            "availability-zone": [eni.availability_zone],
            "status": ["in-use" if att else "available"],
            "description": [eni.description],
            "attachment.instance-id": [att.instance_id] if att else [],
            "attachment.device-index": [str(att.device_index)] if att else [],
        }

    def _instance_view(self, instance: SimInstance) -> api.Instance:
        primary = self.enis[instance.enis_by_index[0]].primary_ip if 0 in instance.enis_by_index else ""
        return instance.view(primary)

    def _ipv4_limit(self, eni: SimEni) -> int:
        if eni.attachment is None:
            return self.unattached_ipv4_limit
        instance = self.instances[eni.attachment.instance_id]
        return self.limits.limits_for(instance.instance_type).ipv4_per_interface

    def _ipv6_limit(self, eni: SimEni) -> int:
        if eni.attachment is None:
            return self.unattached_ipv6_limit
        instance = self.instances[eni.attachment.instance_id]
        return self.limits.limits_for(instance.instance_type).ipv6_per_interface

    # --- rules -----------------------------------------------------------------------------------
    def new_eni(
        self,
        subnet_id: str,
        *,
        security_group_ids: Sequence[str] = (),
        description: str = "",
        secondary_count: int = 0,
        prefix_count: int = 0,
        ipv6_prefix_count: int = 0,
        tags: Mapping[str, str] | None = None,
        visible_at: float = 0.0,
        exclusive_counts: bool = False,
    ) -> SimEni:
        """CreateNetworkInterface's checks and effect (EC2-SIM-1..3)."""
        subnet = self._subnet(subnet_id)
        if not security_group_ids:  # EC2 uses the VPC's default group when none is given
            security_group_ids = (self.vpcs[subnet.vpc_id].default_security_group_id,)
        for group_id in security_group_ids:
            if self._security_group(group_id).vpc_id != subnet.vpc_id:
                raise _fail(
                    "InvalidParameterValue",
                    f"Security group {group_id} is not in VPC {subnet.vpc_id} of subnet {subnet_id}.",
                )
        if exclusive_counts or (secondary_count and prefix_count):
            raise _fail(
                "InvalidParameterCombination",
                "SecondaryPrivateIpAddressCount and Ipv4PrefixCount cannot be used in the same request.",
            )
        for name, value in (
            ("SecondaryPrivateIpAddressCount", secondary_count),
            ("Ipv4PrefixCount", prefix_count),
            ("Ipv6PrefixCount", ipv6_prefix_count),
        ):
            if value < 0:
                raise _fail("InvalidParameterValue", f"{name} must be a positive number, not {value}.")
        if 1 + secondary_count + prefix_count > self.unattached_ipv4_limit:
            raise _fail(
                "PrivateIpAddressLimitExceeded",
                f"A network interface can hold at most {self.unattached_ipv4_limit} IPv4 addresses "
                "and prefixes.",
            )
        if ipv6_prefix_count and subnet.ipv6_pool is None:
            raise _fail(
                "InvalidParameterValue",
                f"Subnet {subnet_id} has no IPv6 CIDR block; Ipv6PrefixCount needs a dual-stack subnet.",
            )
        if prefix_count and subnet.pool.free_prefixes < prefix_count:
            raise _fail(
                "InsufficientCidrBlocks",
                f"Subnet {subnet_id} has {subnet.pool.free_prefixes} aligned free /28 blocks, "
                f"{prefix_count} were requested.",
            )
        if subnet.pool.available < 1 + secondary_count + 16 * prefix_count:
            raise _fail(
                "InsufficientFreeAddressesInSubnet",
                f"Subnet {subnet_id} has {subnet.pool.available} free addresses, too few for this interface.",
            )
        prefixes = subnet.pool.take_random_prefixes(prefix_count, self._rng) if prefix_count else []
        ips = subnet.pool.take_random(1 + secondary_count, self._rng)
        v6 = (
            subnet.ipv6_pool.take_random_prefixes(ipv6_prefix_count, self._rng)
            if ipv6_prefix_count and subnet.ipv6_pool
            else []
        )
        eni = SimEni(
            id=self._new_id("eni"),
            subnet_id=subnet.id,
            vpc_id=subnet.vpc_id,
            availability_zone=subnet.availability_zone,
            mac=self._new_mac(),
            primary_ip=ips[0],
            security_group_ids=tuple(security_group_ids),
            description=description,
            visible_at=visible_at,
            secondary_ips=ips[1:],
            prefixes=prefixes,
            ipv6_prefixes=v6,
            tags=dict(tags or {}),
        )
        self.enis[eni.id] = eni
        return eni

    def attach(self, eni_id: str, instance_id: str, device_index: int) -> str:
        """AttachNetworkInterface's checks and effect (EC2-SIM-1)."""
        eni = self._eni(eni_id)
        instance = self._instance(instance_id)
        if eni.attachment is not None:
            raise _fail(
                "InvalidNetworkInterface.InUse",
                f"Network interface {eni_id} is already attached to {eni.attachment.instance_id}.",
            )
        if eni.availability_zone != instance.availability_zone:
            raise _fail(
                "InvalidParameterCombination",
                f"Network interface {eni_id} is in {eni.availability_zone}, instance {instance_id} in "
                f"{instance.availability_zone}; they must share an availability zone.",
            )
        if device_index < 0:
            raise _fail("InvalidParameterValue", f"Device index {device_index} must be 0 or more.")
        if device_index in instance.enis_by_index:
            raise _fail(
                "InvalidParameterValue",
                f"Instance {instance_id} already has an interface attached at device index {device_index}.",
            )
        limits = self.limits.limits_for(instance.instance_type)
        if len(instance.enis_by_index) >= limits.max_network_interfaces:
            raise _fail(
                "AttachmentLimitExceeded",
                f"Instance {instance_id} ({instance.instance_type}) already has the maximum of "
                f"{limits.max_network_interfaces} network interfaces.",
            )
        if eni.ipv4_slots > limits.ipv4_per_interface:
            raise _fail(
                "PrivateIpAddressLimitExceeded",
                f"Network interface {eni_id} holds {eni.ipv4_slots} IPv4 addresses and prefixes; "
                f"{instance.instance_type} allows {limits.ipv4_per_interface} per interface.",
            )
        if len(eni.ipv6_prefixes) > limits.ipv6_per_interface:
            raise _fail(
                "PrivateIpAddressLimitExceeded",
                f"Network interface {eni_id} holds {len(eni.ipv6_prefixes)} IPv6 prefixes; "
                f"{instance.instance_type} allows {limits.ipv6_per_interface} per interface.",
            )
        return self._attach_unchecked(eni, instance, device_index, delete_on_termination=False)

    def _attach_unchecked(
        self, eni: SimEni, instance: SimInstance, device_index: int, *, delete_on_termination: bool
    ) -> str:
        attachment = SimAttachment(
            self._new_id("eni-attach"), instance.id, device_index, delete_on_termination
        )
        eni.attachment = attachment
        eni.touch()
        instance.enis_by_index[device_index] = eni.id
        self._attachments[attachment.id] = eni.id
        return attachment.id

    def detach(self, attachment_id: str, *, allow_primary: bool = False) -> None:
        eni_id = self._attachments.get(attachment_id)
        if eni_id is None:
            raise not_found("InvalidAttachmentID.NotFound", f"Attachment {attachment_id}")
        eni = self.enis[eni_id]
        attachment = eni.attachment
        assert attachment is not None
        if attachment.device_index == 0 and not allow_primary:
            raise _fail(
                "OperationNotPermitted",
                f"The network interface at device index 0 of {attachment.instance_id} cannot be detached.",
            )
        del self.instances[attachment.instance_id].enis_by_index[attachment.device_index]
        del self._attachments[attachment_id]
        eni.attachment = None
        eni.touch()

    def delete_eni(self, eni_id: str) -> None:
        """DeleteNetworkInterface: only detached ENIs (EC2-SIM-4); frees every address it held."""
        eni = self._eni(eni_id)
        if eni.attachment is not None:
            raise _fail(
                "InvalidNetworkInterface.InUse",
                f"Network interface {eni_id} is attached to {eni.attachment.instance_id}; detach it first.",
            )
        subnet = self.subnets[eni.subnet_id]
        for ip in (eni.primary_ip, *eni.secondary_ips):
            subnet.pool.give_back(ip)
        for prefix in eni.prefixes:
            subnet.pool.give_back_prefix(prefix)
        if subnet.ipv6_pool is not None:
            for prefix in eni.ipv6_prefixes:
                subnet.ipv6_pool.give_back_prefix(prefix)
        for address in self.addresses.values():
            if address.eni_id == eni_id:
                address.eni_id = address.association_id = address.private_ip = address.instance_id = None
        del self.enis[eni_id]

    def assign_ipv4(
        self,
        eni_id: str,
        count: int | None,
        ips: list[str],
        prefix_count: int | None,
        prefixes: list[str],
    ) -> api.AssignedAddresses:
        """AssignPrivateIpAddresses: exclusivity (EC2-SIM-3), limits (EC2-SIM-1), space (EC2-SIM-2)."""
        eni = self._eni(eni_id)
        wants_ips = count is not None or bool(ips)
        wants_prefixes = prefix_count is not None or bool(prefixes)
        if not wants_ips and not wants_prefixes:
            raise _fail(
                "MissingParameter",
                "Give one of SecondaryPrivateIpAddressCount, PrivateIpAddresses, Ipv4PrefixCount "
                "or Ipv4Prefixes.",
            )
        if (
            (count is not None and ips)
            or (prefix_count is not None and prefixes)
            or (wants_ips and wants_prefixes)
        ):
            raise _fail(
                "InvalidParameterCombination",
                "Use exactly one of SecondaryPrivateIpAddressCount, PrivateIpAddresses, Ipv4PrefixCount "
                "and Ipv4Prefixes per request.",
            )
        amount = count if count is not None else prefix_count if prefix_count is not None else 0
        if (count is not None or prefix_count is not None) and amount < 1:
            raise _fail("InvalidParameterValue", f"The requested count must be at least 1, not {amount}.")
        adding = amount or len(ips) or len(prefixes)
        limit = self._ipv4_limit(eni)
        if eni.ipv4_slots + adding > limit:
            raise _fail(
                "PrivateIpAddressLimitExceeded",
                f"Network interface {eni_id} holds {eni.ipv4_slots} of {limit} IPv4 addresses and prefixes; "
                f"{adding} more do not fit.",
            )
        pool = self.subnets[eni.subnet_id].pool
        if count is not None:
            new_ips = pool.take_random(count, self._rng)
        elif ips:
            new_ips = pool.take_specific(ips)
        else:
            new_ips = []
        if prefix_count is not None:
            new_prefixes = pool.take_random_prefixes(prefix_count, self._rng)
        elif prefixes:
            new_prefixes = pool.take_specific_prefixes(prefixes)
        else:
            new_prefixes = []
        eni.secondary_ips.extend(new_ips)
        eni.prefixes.extend(new_prefixes)
        eni.touch()
        return api.AssignedAddresses(eni_id, tuple(new_ips), tuple(new_prefixes))

    def unassign_ipv4(self, eni_id: str, ips: list[str], prefixes: list[str]) -> None:
        """UnassignPrivateIpAddresses: only addresses/prefixes this ENI holds, never the primary."""
        eni = self._eni(eni_id)
        if not ips and not prefixes:
            raise _fail("MissingParameter", "Give PrivateIpAddresses or Ipv4Prefixes to unassign.")
        if ips and prefixes:
            raise _fail(
                "InvalidParameterCombination",
                "PrivateIpAddresses and Ipv4Prefixes cannot be unassigned in the same request.",
            )
        for ip in ips:
            if ip == eni.primary_ip:
                raise _fail(
                    "InvalidParameterValue", f"The primary address {ip} of {eni_id} cannot be unassigned."
                )
            if ip not in eni.secondary_ips:
                raise _fail("InvalidParameterValue", f"Address {ip} is not assigned to {eni_id}.")
        for prefix in prefixes:
            if prefix not in eni.prefixes:
                raise _fail("InvalidParameterValue", f"Prefix {prefix} is not assigned to {eni_id}.")
        if len(set(ips)) != len(ips) or len(set(prefixes)) != len(prefixes):
            raise _fail("InvalidParameterValue", "The same address or prefix was listed twice.")
        pool = self.subnets[eni.subnet_id].pool
        for ip in ips:
            eni.secondary_ips.remove(ip)
            pool.give_back(ip)
        for prefix in prefixes:
            eni.prefixes.remove(prefix)
            pool.give_back_prefix(prefix)
        eni.touch()

    def assign_ipv6(self, eni_id: str, count: int) -> tuple[str, ...]:
        """AssignIpv6Addresses(Ipv6PrefixCount): /80s from the subnet's /64 (EC2-SIM-2)."""
        eni = self._eni(eni_id)
        subnet = self.subnets[eni.subnet_id]
        if subnet.ipv6_pool is None:
            raise _fail(
                "InvalidParameterValue",
                f"Subnet {subnet.id} of {eni_id} has no IPv6 CIDR block; add one to use IPv6 prefixes.",
            )
        if count < 1:
            raise _fail("InvalidParameterValue", f"Ipv6PrefixCount must be at least 1, not {count}.")
        limit = self._ipv6_limit(eni)
        if len(eni.ipv6_prefixes) + count > limit:
            raise _fail(
                "PrivateIpAddressLimitExceeded",
                f"Network interface {eni_id} holds {len(eni.ipv6_prefixes)} of {limit} IPv6 prefixes; "
                f"{count} more do not fit.",
            )
        new = subnet.ipv6_pool.take_random_prefixes(count, self._rng)
        eni.ipv6_prefixes.extend(new)
        eni.touch()
        return tuple(new)

    def associate(self, allocation_id: str, eni_id: str, private_ip: str | None) -> str:
        address = self._address(allocation_id)
        eni = self._eni(eni_id)
        target_ip = private_ip or eni.primary_ip
        if target_ip != eni.primary_ip and target_ip not in eni.secondary_ips:
            raise _fail("InvalidParameterValue", f"Address {target_ip} is not assigned to {eni_id}.")
        if address.association_id is not None and address.eni_id != eni_id:
            raise _fail(
                "Resource.AlreadyAssociated",
                f"Elastic IP {address.public_ip} is already associated with {address.eni_id}.",
            )
        address.association_id = self._new_id("eipassoc")
        address.eni_id = eni_id
        address.private_ip = target_ip
        address.instance_id = eni.attachment.instance_id if eni.attachment else None
        eni.public_ip = address.public_ip
        eni.touch()
        return address.association_id
