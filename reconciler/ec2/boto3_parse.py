"""Pure translation between EC2's wire shapes (botocore dicts) and the `api` types.

Kept apart from the adapter so parsing is tested without any client (and so the adapter file is
only about calling, retrying and rate limiting).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from reconciler.ec2 import api

Wire = Mapping[str, Any]


def wire_filters(filters: api.Filters | None) -> list[dict[str, Any]]:
    return [{"Name": name, "Values": list(values)} for name, values in (filters or {}).items()]


def wire_tags(tags: api.Tags) -> list[dict[str, str]]:
    return [{"Key": key, "Value": value} for key, value in tags.items()]


def tags_of(items: Iterable[Wire] | None) -> dict[str, str]:
    return {str(t["Key"]): str(t.get("Value", "")) for t in items or ()}


def _associated(blocks: Iterable[Wire] | None, key: str, state_key: str) -> tuple[str, ...]:
    return tuple(
        str(b[key])
        for b in blocks or ()
        if key in b and b.get(state_key, {}).get("State", "associated") in ("associated", "associating")
    )


def network_interface(d: Wire) -> api.NetworkInterface:
    attachment = d.get("Attachment") or {}
    ips = d.get("PrivateIpAddresses") or []
    primary = str(
        d.get("PrivateIpAddress") or next((i["PrivateIpAddress"] for i in ips if i.get("Primary")), "")
    )
    ordered = [primary] if primary else []
    ordered += [str(i["PrivateIpAddress"]) for i in ips if i.get("PrivateIpAddress") != primary]
    device_index = attachment.get("DeviceIndex")
    return api.NetworkInterface(
        id=str(d["NetworkInterfaceId"]),
        subnet_id=str(d.get("SubnetId", "")),
        vpc_id=str(d.get("VpcId", "")),
        availability_zone=str(d.get("AvailabilityZone", "")),
        status=str(d.get("Status", "")),
        mac_address=str(d.get("MacAddress", "")),
        primary_ip=primary,
        private_ips=tuple(ordered),
        ipv4_prefixes=tuple(str(p["Ipv4Prefix"]) for p in d.get("Ipv4Prefixes") or ()),
        ipv6_prefixes=tuple(str(p["Ipv6Prefix"]) for p in d.get("Ipv6Prefixes") or ()),
        ipv6_addresses=tuple(str(a["Ipv6Address"]) for a in d.get("Ipv6Addresses") or ()),
        security_group_ids=tuple(str(g["GroupId"]) for g in d.get("Groups") or ()),
        tags=tags_of(d.get("TagSet") or d.get("Tags")),
        description=str(d.get("Description") or ""),
        instance_id=attachment.get("InstanceId"),
        device_index=int(device_index) if device_index is not None else None,
        attachment_id=attachment.get("AttachmentId"),
        delete_on_termination=attachment.get("DeleteOnTermination"),
        public_ip=(d.get("Association") or {}).get("PublicIp"),
    )


def subnet(d: Wire) -> api.Subnet:
    return api.Subnet(
        id=str(d["SubnetId"]),
        vpc_id=str(d.get("VpcId", "")),
        availability_zone=str(d.get("AvailabilityZone", "")),
        cidr_block=str(d.get("CidrBlock", "")),
        available_ip_address_count=int(d.get("AvailableIpAddressCount", 0)),
        ipv6_cidr_blocks=_associated(
            d.get("Ipv6CidrBlockAssociationSet"), "Ipv6CidrBlock", "Ipv6CidrBlockState"
        ),
        tags=tags_of(d.get("Tags")),
    )


def vpc(d: Wire) -> api.Vpc:
    primary = str(d.get("CidrBlock", ""))
    others = [
        c
        for c in _associated(d.get("CidrBlockAssociationSet"), "CidrBlock", "CidrBlockState")
        if c != primary
    ]
    return api.Vpc(
        id=str(d["VpcId"]),
        cidr_block=primary,
        cidr_blocks=(primary, *others),
        ipv6_cidr_blocks=_associated(
            d.get("Ipv6CidrBlockAssociationSet"), "Ipv6CidrBlock", "Ipv6CidrBlockState"
        ),
        tags=tags_of(d.get("Tags")),
    )


def route_table(d: Wire) -> api.RouteTable:
    associations = d.get("Associations") or []
    return api.RouteTable(
        id=str(d["RouteTableId"]),
        vpc_id=str(d.get("VpcId", "")),
        subnet_ids=tuple(str(a["SubnetId"]) for a in associations if a.get("SubnetId")),
        main=any(bool(a.get("Main")) for a in associations),
        tags=tags_of(d.get("Tags")),
    )


def security_group(d: Wire) -> api.SecurityGroup:
    return api.SecurityGroup(
        id=str(d["GroupId"]),
        name=str(d.get("GroupName", "")),
        vpc_id=str(d.get("VpcId", "")),
        tags=tags_of(d.get("Tags")),
    )


def instance_type(d: Wire) -> api.InstanceTypeLimits:
    net = d.get("NetworkInfo") or {}
    return api.InstanceTypeLimits(
        instance_type=str(d["InstanceType"]),
        max_network_interfaces=int(net.get("MaximumNetworkInterfaces", 0)),
        ipv4_per_interface=int(net.get("Ipv4AddressesPerInterface", 0)),
        ipv6_per_interface=int(net.get("Ipv6AddressesPerInterface", 0)),
        hypervisor=str(d.get("Hypervisor") or ""),
        bare_metal=bool(d.get("BareMetal", False)),
    )


def instances(reservations: Iterable[Wire]) -> list[api.Instance]:
    found = []
    for reservation in reservations:
        for d in reservation.get("Instances") or ():
            enis = sorted(
                d.get("NetworkInterfaces") or (),
                key=lambda n: int((n.get("Attachment") or {}).get("DeviceIndex", 0)),
            )
            found.append(
                api.Instance(
                    id=str(d["InstanceId"]),
                    instance_type=str(d.get("InstanceType", "")),
                    availability_zone=str((d.get("Placement") or {}).get("AvailabilityZone", "")),
                    vpc_id=str(d.get("VpcId", "")),
                    subnet_id=str(d.get("SubnetId", "")),
                    private_ip=str(d.get("PrivateIpAddress", "")),
                    state=str((d.get("State") or {}).get("Name", "")),
                    network_interface_ids=tuple(str(n["NetworkInterfaceId"]) for n in enis),
                    tags=tags_of(d.get("Tags")),
                )
            )
    return found


def address(d: Wire) -> api.Address:
    return api.Address(
        allocation_id=str(d.get("AllocationId", "")),
        public_ip=str(d.get("PublicIp", "")),
        association_id=d.get("AssociationId"),
        network_interface_id=d.get("NetworkInterfaceId"),
        private_ip=d.get("PrivateIpAddress"),
        instance_id=d.get("InstanceId"),
        tags=tags_of(d.get("Tags")),
    )


def tag_description(d: Wire) -> api.TagDescription:
    return api.TagDescription(
        resource_id=str(d["ResourceId"]),
        resource_type=str(d.get("ResourceType", "")),
        key=str(d["Key"]),
        value=str(d.get("Value", "")),
    )


def create_request(request: api.CreateNetworkInterfaceRequest) -> dict[str, Any]:
    """CreateNetworkInterface parameters; counts are sent only when set (EC2-SIM-3)."""
    params: dict[str, Any] = {"SubnetId": request.subnet_id, "Description": request.description}
    if request.security_group_ids:
        params["Groups"] = list(request.security_group_ids)
    if request.secondary_private_ip_count is not None:
        params["SecondaryPrivateIpAddressCount"] = request.secondary_private_ip_count
    if request.ipv4_prefix_count is not None:
        params["Ipv4PrefixCount"] = request.ipv4_prefix_count
    if request.ipv6_prefix_count is not None:
        params["Ipv6PrefixCount"] = request.ipv6_prefix_count
    if request.tags:
        params["TagSpecifications"] = [{"ResourceType": "network-interface", "Tags": wire_tags(request.tags)}]
    if request.client_token:
        params["ClientToken"] = request.client_token
    return params


def assign_request(
    eni_id: str,
    count: int | None,
    ips: Sequence[str],
    prefix_count: int | None,
    prefixes: Sequence[str],
) -> dict[str, Any]:
    params: dict[str, Any] = {"NetworkInterfaceId": eni_id}
    if count is not None:
        params["SecondaryPrivateIpAddressCount"] = count
    if ips:
        params["PrivateIpAddresses"] = list(ips)
    if prefix_count is not None:
        params["Ipv4PrefixCount"] = prefix_count
    if prefixes:
        params["Ipv4Prefixes"] = list(prefixes)
    return params


def assigned(eni_id: str, response: Wire) -> api.AssignedAddresses:
    return api.AssignedAddresses(
        network_interface_id=eni_id,
        private_ips=tuple(
            str(a["PrivateIpAddress"]) for a in response.get("AssignedPrivateIpAddresses") or ()
        ),
        ipv4_prefixes=tuple(str(p["Ipv4Prefix"]) for p in response.get("AssignedIpv4Prefixes") or ()),
    )
