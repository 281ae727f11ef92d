"""The `Ec2Api` port: every EC2 call the operator makes, with typed results and typed errors.

Two adapters implement it (DESIGN.md "Ports and adapters"):

- `reconciler.ec2.boto3_adapter.Boto3Ec2` talks to real EC2 (or a moto server): paginated
  describes, tenacity retries, a client-side token bucket (ENI-CFG-1 qps/burst).
- `reconciler.ec2.sim.SimulatedEc2` is an in-process EC2 that enforces SPEC section 3 (EC2-SIM-1..6).

How to use it::

    ec2: Ec2Api = SimulatedEc2(...)            # or Boto3Ec2(region="us-east-1")
    subnets = ec2.describe_subnets(filters={"vpc-id": [vpc_id], "tag:role": ["pods"]})
    eni = ec2.create_network_interface(CreateNetworkInterfaceRequest(
        subnet_id=subnets[0].id, security_group_ids=("sg-1",),
        description=f"Cilium-CNI ({instance_id})", secondary_private_ip_count=4,
        tags={"io.cilium/cilium-managed": "true"}, client_token="node-a/eni-1"))
    attachment_id = ec2.attach_network_interface(eni.id, instance_id, device_index=1)
    ec2.set_delete_on_termination(eni.id, attachment_id, True)
    try:
        ec2.assign_private_ip_addresses(eni.id, ipv4_prefix_count=1)
    except InsufficientCidrBlocks:      # fragmented subnet: fall back to /32s (ENI-ALLOC-4)
        ec2.assign_private_ip_addresses(eni.id, secondary_private_ip_count=16)

Rules of the port:

- Every method is synchronous; the operator runs calls in worker threads.
- Describe methods return *all* pages. `filters` use EC2's filter names and OR semantics within a
  name, AND across names (`{"tag:k": ["v"]}`, `{"tag-key": ["k"]}` work everywhere). Both adapters
  support at least the filter names listed in `SUPPORTED_FILTERS`.
- Every failure is an `Ec2Error` subclass carrying the AWS error `code`; callers branch on the class
  (`Throttled`, `InsufficientCidrBlocks`, ...) and may log `str(err)`, which is one sentence.
- Results are frozen dataclasses; tag maps are plain dicts and must not be mutated.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

Filters = Mapping[str, Sequence[str]]
Tags = Mapping[str, str]

# The filter names both adapters honour, per describe call (EC2 supports more on the wire).
SUPPORTED_FILTERS: Mapping[str, frozenset[str]] = {
    "DescribeNetworkInterfaces": frozenset(
        {
            "network-interface-id",
            "subnet-id",
            "vpc-id",
            "availability-zone",
            "status",
            "description",
            "attachment.instance-id",
            "attachment.device-index",
            "tag-key",
            "tag:*",
        }
    ),
    "DescribeSubnets": frozenset({"subnet-id", "vpc-id", "availability-zone", "tag-key", "tag:*"}),
    "DescribeVpcs": frozenset({"vpc-id", "tag-key", "tag:*"}),
    "DescribeRouteTables": frozenset(
        {"route-table-id", "vpc-id", "association.subnet-id", "association.main", "tag-key", "tag:*"}
    ),
    "DescribeSecurityGroups": frozenset({"group-id", "group-name", "vpc-id", "tag-key", "tag:*"}),
    "DescribeInstances": frozenset(
        {"instance-id", "instance-type", "vpc-id", "subnet-id", "availability-zone", "tag-key", "tag:*"}
    ),
    "DescribeTags": frozenset({"resource-id", "resource-type", "key", "value"}),
    "DescribeAddresses": frozenset(
        {"allocation-id", "public-ip", "network-interface-id", "tag-key", "tag:*"}
    ),
}


# EC2's largest MaxResults per describe page; both adapters page with these sizes (unless given IDs).
DESCRIBE_PAGE_SIZES: Mapping[str, int] = {
    "DescribeNetworkInterfaces": 1000,
    "DescribeSubnets": 1000,
    "DescribeVpcs": 1000,
    "DescribeRouteTables": 100,
    "DescribeSecurityGroups": 1000,
    "DescribeInstanceTypes": 100,
    "DescribeInstances": 1000,
    "DescribeTags": 1000,
}


# --------------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NetworkInterface:
    """One ENI. `private_ips` lists every private IPv4 with the primary first (as EC2 does)."""

    id: str
    subnet_id: str
    vpc_id: str
    availability_zone: str
    status: str  # "available" (detached), "in-use" (attached), "attaching", "detaching"
    mac_address: str
    primary_ip: str
    private_ips: tuple[str, ...] = ()
    ipv4_prefixes: tuple[str, ...] = ()  # "/28" CIDRs
    ipv6_prefixes: tuple[str, ...] = ()  # "/80" CIDRs
    ipv6_addresses: tuple[str, ...] = ()
    security_group_ids: tuple[str, ...] = ()
    tags: Tags = field(default_factory=dict)
    description: str = ""
    instance_id: str | None = None
    device_index: int | None = None
    attachment_id: str | None = None
    delete_on_termination: bool | None = None
    public_ip: str | None = None

    @property
    def secondary_ips(self) -> tuple[str, ...]:
        """Private IPv4s other than the primary (the ones Cilium hands to pods)."""
        return tuple(ip for ip in self.private_ips if ip != self.primary_ip)

    @property
    def address_slots_used(self) -> int:
        """Slots counted against Ipv4AddressesPerInterface: each IP and each /28 prefix is one (EC2-SIM-1)."""
        return len(self.private_ips) + len(self.ipv4_prefixes)


@dataclass(frozen=True)
class Subnet:
    id: str
    vpc_id: str
    availability_zone: str
    cidr_block: str
    available_ip_address_count: int
    ipv6_cidr_blocks: tuple[str, ...] = ()
    tags: Tags = field(default_factory=dict)


@dataclass(frozen=True)
class Vpc:
    id: str
    cidr_block: str  # the primary IPv4 CIDR
    cidr_blocks: tuple[str, ...] = ()  # every associated IPv4 CIDR, primary first
    ipv6_cidr_blocks: tuple[str, ...] = ()
    tags: Tags = field(default_factory=dict)


@dataclass(frozen=True)
class RouteTable:
    """A route table; `main` tables also serve every subnet without an explicit association."""

    id: str
    vpc_id: str
    subnet_ids: tuple[str, ...] = ()
    main: bool = False
    tags: Tags = field(default_factory=dict)


@dataclass(frozen=True)
class SecurityGroup:
    id: str
    name: str
    vpc_id: str
    tags: Tags = field(default_factory=dict)


@dataclass(frozen=True)
class InstanceTypeLimits:
    """Network limits of an instance type (DescribeInstanceTypes, ENI-CACHE-1, EC2-SIM-1)."""

    instance_type: str
    max_network_interfaces: int
    ipv4_per_interface: int  # includes the primary address; a /28 prefix uses one slot
    ipv6_per_interface: int
    hypervisor: str  # "nitro", "xen" or "" (bare metal reports none)
    bare_metal: bool = False

    @property
    def supports_prefix_delegation(self) -> bool:
        """Prefix delegation needs a Nitro instance or bare metal (ENI-ALLOC-4)."""
        return self.hypervisor == "nitro" or self.bare_metal


@dataclass(frozen=True)
class Instance:
    id: str
    instance_type: str
    availability_zone: str
    vpc_id: str
    subnet_id: str
    private_ip: str
    state: str = "running"
    network_interface_ids: tuple[str, ...] = ()
    tags: Tags = field(default_factory=dict)


@dataclass(frozen=True)
class Address:
    """An Elastic IP (ENI-PARAM-9)."""

    allocation_id: str
    public_ip: str
    association_id: str | None = None
    network_interface_id: str | None = None
    private_ip: str | None = None
    instance_id: str | None = None
    tags: Tags = field(default_factory=dict)


@dataclass(frozen=True)
class TagDescription:
    resource_id: str
    resource_type: str  # "network-interface", "subnet", "instance", ...
    key: str
    value: str


@dataclass(frozen=True)
class AssignedAddresses:
    """What AssignPrivateIpAddresses added (only the new ones)."""

    network_interface_id: str
    private_ips: tuple[str, ...] = ()
    ipv4_prefixes: tuple[str, ...] = ()


@dataclass(frozen=True)
class CreateNetworkInterfaceRequest:
    """CreateNetworkInterface parameters (ENI-CREATE-3).

    At most one of `secondary_private_ip_count` / `ipv4_prefix_count` may be set (EC2-SIM-3).
    """

    subnet_id: str
    security_group_ids: tuple[str, ...] = ()
    description: str = ""
    secondary_private_ip_count: int | None = None
    ipv4_prefix_count: int | None = None
    ipv6_prefix_count: int | None = None
    tags: Tags = field(default_factory=dict)
    client_token: str | None = None


# --------------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------------


class Ec2Error(Exception):
    """An EC2 call failed. `code` is the AWS error code; `str(err)` is one sentence."""

    default_code = "Unknown"
    retryable = False

    def __init__(self, message: str, *, code: str | None = None, action: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code
        self.action = action

    def __str__(self) -> str:
        return self.message


class Throttled(Ec2Error):
    """RequestLimitExceeded: the account's per-action token bucket is empty (EC2-SIM-5)."""

    default_code = "RequestLimitExceeded"
    retryable = True


class LimitExceeded(Ec2Error):
    """AttachmentLimitExceeded / PrivateIpAddressLimitExceeded: instance-type limits (EC2-SIM-1)."""

    default_code = "PrivateIpAddressLimitExceeded"


class InsufficientAddresses(Ec2Error):
    """InsufficientFreeAddressesInSubnet: the subnet has too few free addresses (EC2-SIM-2)."""

    default_code = "InsufficientFreeAddressesInSubnet"


class InsufficientCidrBlocks(Ec2Error):
    """InsufficientCidrBlocks: no aligned, wholly free /28 left in the subnet (EC2-SIM-2)."""

    default_code = "InsufficientCidrBlocks"


class NotFound(Ec2Error):
    """An ID does not exist (or is not visible yet: eventual consistency, EC2-SIM-6)."""

    default_code = "InvalidNetworkInterfaceID.NotFound"


class InUse(Ec2Error):
    """InvalidNetworkInterface.InUse: e.g. deleting an attached ENI (EC2-SIM-4)."""

    default_code = "InvalidNetworkInterface.InUse"


class Unauthorized(Ec2Error):
    """UnauthorizedOperation: the IAM policy lacks a permission (ENI-PERM-1)."""

    default_code = "UnauthorizedOperation"


class InvalidParameter(Ec2Error):
    """InvalidParameterValue / InvalidParameterCombination: the request itself is wrong."""

    default_code = "InvalidParameterValue"


class UnknownInstanceType(InvalidParameter):
    """InvalidInstanceType: EC2 does not know this instance type."""

    default_code = "InvalidInstanceType"


class ServerError(Ec2Error):
    """A 5xx from EC2 (InternalError, Unavailable); safe to retry."""

    default_code = "InternalError"
    retryable = True


_EXACT_CODES: Mapping[str, type[Ec2Error]] = {
    "RequestLimitExceeded": Throttled,
    "Throttling": Throttled,
    "ThrottlingException": Throttled,
    "AttachmentLimitExceeded": LimitExceeded,
    "PrivateIpAddressLimitExceeded": LimitExceeded,
    "NetworkInterfaceLimitExceeded": LimitExceeded,
    "InsufficientFreeAddressesInSubnet": InsufficientAddresses,
    "InsufficientCidrBlocks": InsufficientCidrBlocks,
    "UnauthorizedOperation": Unauthorized,
    "AuthFailure": Unauthorized,
    "AccessDenied": Unauthorized,
    "InvalidParameterValue": InvalidParameter,
    "InvalidParameterCombination": InvalidParameter,
    "InvalidParameter": InvalidParameter,
    "MissingParameter": InvalidParameter,
    "IdempotentParameterMismatch": InvalidParameter,
    "OperationNotPermitted": InvalidParameter,
    "InvalidID": InvalidParameter,
    "Resource.AlreadyAssociated": InUse,
    "InvalidInstanceType": UnknownInstanceType,
    "InternalError": ServerError,
    "InternalFailure": ServerError,
    "ServiceUnavailable": ServerError,
    "Unavailable": ServerError,
}


def error_class_for(code: str, http_status: int | None = None) -> type[Ec2Error]:
    """The typed error for an AWS error code (used by both adapters so they classify alike)."""
    if code in _EXACT_CODES:
        return _EXACT_CODES[code]
    if code.endswith(".NotFound"):
        return NotFound
    if code.endswith(".Malformed"):
        return InvalidParameter
    if code.endswith(".InUse"):
        return InUse
    if http_status is not None and http_status >= 500:
        return ServerError
    return Ec2Error


def make_error(code: str, message: str, *, action: str = "", http_status: int | None = None) -> Ec2Error:
    """Build the typed error for `code` with a one-sentence message."""
    return error_class_for(code, http_status)(message, code=code, action=action)


# --------------------------------------------------------------------------------------------------
# The port
# --------------------------------------------------------------------------------------------------


@runtime_checkable
class Ec2Api(Protocol):
    """Every EC2 operation the operator performs (ENI-PERM-1 lists the matching IAM actions)."""

    # --- describe (all pages; see SUPPORTED_FILTERS) ---------------------------------------------
    def describe_network_interfaces(
        self, *, ids: Sequence[str] = (), filters: Filters | None = None
    ) -> list[NetworkInterface]: ...

    def describe_subnets(
        self, *, ids: Sequence[str] = (), filters: Filters | None = None
    ) -> list[Subnet]: ...

    def describe_vpcs(self, *, ids: Sequence[str] = (), filters: Filters | None = None) -> list[Vpc]: ...

    def describe_route_tables(
        self, *, ids: Sequence[str] = (), filters: Filters | None = None
    ) -> list[RouteTable]: ...

    def describe_security_groups(
        self, *, ids: Sequence[str] = (), filters: Filters | None = None
    ) -> list[SecurityGroup]: ...

    def describe_instance_types(self, instance_types: Sequence[str] = ()) -> list[InstanceTypeLimits]:
        """Limits for the named types (all known types when empty); unknown -> UnknownInstanceType."""
        ...

    def describe_instances(
        self, *, ids: Sequence[str] = (), filters: Filters | None = None
    ) -> list[Instance]: ...

    def describe_tags(self, *, filters: Filters | None = None) -> list[TagDescription]: ...

    def describe_addresses(self, *, ids: Sequence[str] = (), filters: Filters | None = None) -> list[Address]:
        """Elastic IPs; `ids` are allocation IDs."""
        ...

    # --- ENI lifecycle ---------------------------------------------------------------------------
    def create_network_interface(self, request: CreateNetworkInterfaceRequest) -> NetworkInterface: ...

    def attach_network_interface(self, network_interface_id: str, instance_id: str, device_index: int) -> str:
        """Attach; returns the attachment ID (AttachmentLimitExceeded past MaximumNetworkInterfaces)."""
        ...

    def set_delete_on_termination(
        self, network_interface_id: str, attachment_id: str, delete_on_termination: bool
    ) -> None:
        """ModifyNetworkInterfaceAttribute(Attachment.DeleteOnTermination) (ENI-PARAM-8)."""
        ...

    def detach_network_interface(self, attachment_id: str, *, force: bool = False) -> None: ...

    def delete_network_interface(self, network_interface_id: str) -> None:
        """Delete a detached ENI (attached -> InUse, EC2-SIM-4)."""
        ...

    # --- addresses -------------------------------------------------------------------------------
    def assign_private_ip_addresses(
        self,
        network_interface_id: str,
        *,
        secondary_private_ip_count: int | None = None,
        private_ips: Sequence[str] = (),
        ipv4_prefix_count: int | None = None,
        ipv4_prefixes: Sequence[str] = (),
    ) -> AssignedAddresses:
        """Exactly one of the four must be given (EC2-SIM-3)."""
        ...

    def unassign_private_ip_addresses(
        self,
        network_interface_id: str,
        *,
        private_ips: Sequence[str] = (),
        ipv4_prefixes: Sequence[str] = (),
    ) -> None:
        """Release /32s or whole /28 prefixes (ENI-REL-2); one of the two must be non-empty."""
        ...

    def assign_ipv6_prefixes(self, network_interface_id: str, count: int = 1) -> tuple[str, ...]:
        """AssignIpv6Addresses(Ipv6PrefixCount); returns the new /80 prefixes (ENI-V6-1)."""
        ...

    # --- tags and elastic IPs --------------------------------------------------------------------
    def create_tags(self, resource_ids: Sequence[str], tags: Tags) -> None: ...

    def delete_tags(self, resource_ids: Sequence[str], keys: Sequence[str]) -> None: ...

    def associate_address(
        self, allocation_id: str, network_interface_id: str, *, private_ip: str | None = None
    ) -> str:
        """Associate an Elastic IP with an ENI; returns the association ID (ENI-PARAM-9)."""
        ...
