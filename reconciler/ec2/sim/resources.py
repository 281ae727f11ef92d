"""The simulator's mutable resource records and their frozen `api` views.

Only `SimulatedEc2` mutates these (under its lock); every mutation of an ENI calls `touch()` so the
cached `NetworkInterface` view is rebuilt lazily -- a full DescribeNetworkInterfaces over tens of
thousands of ENIs then costs one list copy, not tens of thousands of dataclass constructions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from reconciler.ec2 import api
from reconciler.ec2.sim.addressing import Ipv4Pool, Ipv6Pool


@dataclass
class SimVpc:
    id: str
    cidr: str
    ipv6_cidr: str | None
    tags: dict[str, str] = field(default_factory=dict)
    default_security_group_id: str = ""

    def view(self) -> api.Vpc:
        return api.Vpc(
            id=self.id,
            cidr_block=self.cidr,
            cidr_blocks=(self.cidr,),
            ipv6_cidr_blocks=(self.ipv6_cidr,) if self.ipv6_cidr else (),
            tags=dict(self.tags),
        )


@dataclass
class SimSubnet:
    id: str
    vpc_id: str
    availability_zone: str
    cidr: str
    ipv6_cidr: str | None
    pool: Ipv4Pool
    ipv6_pool: Ipv6Pool | None
    tags: dict[str, str] = field(default_factory=dict)

    def view(self) -> api.Subnet:
        return api.Subnet(
            id=self.id,
            vpc_id=self.vpc_id,
            availability_zone=self.availability_zone,
            cidr_block=self.cidr,
            available_ip_address_count=self.pool.available,
            ipv6_cidr_blocks=(self.ipv6_cidr,) if self.ipv6_cidr else (),
            tags=dict(self.tags),
        )


@dataclass
class SimSecurityGroup:
    id: str
    name: str
    vpc_id: str
    tags: dict[str, str] = field(default_factory=dict)

    def view(self) -> api.SecurityGroup:
        return api.SecurityGroup(id=self.id, name=self.name, vpc_id=self.vpc_id, tags=dict(self.tags))


@dataclass
class SimRouteTable:
    id: str
    vpc_id: str
    subnet_ids: list[str]
    main: bool
    tags: dict[str, str] = field(default_factory=dict)

    def view(self) -> api.RouteTable:
        return api.RouteTable(
            id=self.id,
            vpc_id=self.vpc_id,
            subnet_ids=tuple(self.subnet_ids),
            main=self.main,
            tags=dict(self.tags),
        )


@dataclass
class SimAttachment:
    id: str
    instance_id: str
    device_index: int
    delete_on_termination: bool


@dataclass
class SimEni:
    id: str
    subnet_id: str
    vpc_id: str
    availability_zone: str
    mac: str
    primary_ip: str
    security_group_ids: tuple[str, ...]
    description: str
    visible_at: float
    secondary_ips: list[str] = field(default_factory=list)
    prefixes: list[str] = field(default_factory=list)
    ipv6_prefixes: list[str] = field(default_factory=list)
    tags: dict[str, str] = field(default_factory=dict)
    attachment: SimAttachment | None = None
    public_ip: str | None = None
    _view: api.NetworkInterface | None = None

    @property
    def ipv4_slots(self) -> int:
        """Slots used against Ipv4AddressesPerInterface: primary + secondaries + /28 prefixes."""
        return 1 + len(self.secondary_ips) + len(self.prefixes)

    def touch(self) -> None:
        self._view = None

    def view(self) -> api.NetworkInterface:
        if self._view is None:
            att = self.attachment
            self._view = api.NetworkInterface(
                id=self.id,
                subnet_id=self.subnet_id,
                vpc_id=self.vpc_id,
                availability_zone=self.availability_zone,
                status="in-use" if att else "available",
                mac_address=self.mac,
                primary_ip=self.primary_ip,
                private_ips=(self.primary_ip, *self.secondary_ips),
                ipv4_prefixes=tuple(self.prefixes),
                ipv6_prefixes=tuple(self.ipv6_prefixes),
                security_group_ids=self.security_group_ids,
                tags=dict(self.tags),
                description=self.description,
                instance_id=att.instance_id if att else None,
                device_index=att.device_index if att else None,
                attachment_id=att.id if att else None,
                delete_on_termination=att.delete_on_termination if att else None,
                public_ip=self.public_ip,
            )
        return self._view


@dataclass
class SimInstance:
    id: str
    instance_type: str
    availability_zone: str
    vpc_id: str
    subnet_id: str
    state: str = "running"
    enis_by_index: dict[int, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)

    def view(self, primary_ip: str) -> api.Instance:
        return api.Instance(
            id=self.id,
            instance_type=self.instance_type,
            availability_zone=self.availability_zone,
            vpc_id=self.vpc_id,
            subnet_id=self.subnet_id,
            private_ip=primary_ip,
            state=self.state,
            network_interface_ids=tuple(self.enis_by_index[i] for i in sorted(self.enis_by_index)),
            tags=dict(self.tags),
        )


@dataclass
class SimAddress:
    allocation_id: str
    public_ip: str
    association_id: str | None = None
    eni_id: str | None = None
    private_ip: str | None = None
    instance_id: str | None = None
    tags: dict[str, str] = field(default_factory=dict)

    def view(self) -> api.Address:
        return api.Address(
            allocation_id=self.allocation_id,
            public_ip=self.public_ip,
            association_id=self.association_id,
            network_interface_id=self.eni_id,
            private_ip=self.private_ip,
            instance_id=self.instance_id,
            tags=dict(self.tags),
        )
