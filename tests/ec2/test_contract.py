"""One contract, two implementations: `SimulatedEc2` and `Boto3Ec2` on a moto server.

Only behaviour moto implements faithfully is asserted here (DESIGN.md "Ports and adapters"); the
simulator-only rules (limits, prefixes, throttling...) live in test_sim_*.py and the places where
moto and the simulator disagree are listed in test_moto_divergence.py.
"""

from __future__ import annotations

import ipaddress

import pytest

from reconciler.ec2.api import (
    CreateNetworkInterfaceRequest,
    InvalidParameter,
    NetworkInterface,
    NotFound,
    UnknownInstanceType,
)
from reconciler.ec2.limits import StaticLimits
from tests.ec2.backends import AZ, INSTANCE_TYPE, Backend

pytestmark = pytest.mark.moto


def _create(backend: Backend, **kwargs: object) -> NetworkInterface:
    request = CreateNetworkInterfaceRequest(
        subnet_id=backend.subnet_id,
        security_group_ids=(backend.security_group_id,),
        description=str(kwargs.pop("description", "Cilium-CNI (i-test)")),
        **kwargs,  # type: ignore[arg-type]
    )
    return backend.ec2.create_network_interface(request)


def _distinct_where_modelled(backend: Backend, ips: tuple[str, ...]) -> bool:
    """EC2-SIM-2 uniqueness. moto draws each address at random and can repeat one (a documented
    divergence, tests/ec2/test_moto_divergence.py), so on moto only the count is part of the contract."""
    return backend.name == "moto" or len(set(ips)) == len(ips)


def _in_subnet(backend: Backend, ips: tuple[str, ...]) -> bool:
    net = ipaddress.IPv4Network(backend.subnet_cidr)
    return all(ipaddress.IPv4Address(ip) in net for ip in ips)


def test_create_returns_detached_eni_with_requested_secondaries_in_subnet(backend: Backend) -> None:
    """ENI-CREATE-3: the count is requested in the create call; description and tags are kept."""
    eni = _create(backend, secondary_private_ip_count=3, tags={"io.cilium/cilium-managed": "true"})
    assert eni.id.startswith("eni-")
    assert eni.status == "available"
    assert (eni.subnet_id, eni.vpc_id, eni.availability_zone) == (backend.subnet_id, backend.vpc_id, AZ)
    assert len(eni.private_ips) == 4 and _distinct_where_modelled(backend, eni.private_ips)
    assert eni.private_ips[0] == eni.primary_ip and len(eni.secondary_ips) == 3
    assert _in_subnet(backend, eni.private_ips)
    assert eni.description == "Cilium-CNI (i-test)"
    assert eni.tags == {"io.cilium/cilium-managed": "true"}
    assert eni.security_group_ids == (backend.security_group_id,)
    assert eni.instance_id is None and eni.attachment_id is None


def test_describe_by_id_matches_create(backend: Backend) -> None:
    eni = _create(backend, secondary_private_ip_count=2)
    [seen] = backend.ec2.describe_network_interfaces(ids=[eni.id])
    assert seen.id == eni.id
    assert seen.primary_ip == eni.primary_ip
    assert sorted(seen.private_ips) == sorted(eni.private_ips)
    assert seen.mac_address == eni.mac_address


def test_describe_filters_and_semantics(backend: Backend) -> None:
    """ENI-CACHE-1: filters narrow describes; OR within a name, AND across names."""
    tagged = _create(backend, tags={"team": "a"}, description="first")
    other = _create(backend, tags={"team": "b"}, description="second")
    ec2 = backend.ec2

    def ids(**filters: list[str]) -> set[str]:
        named = {k.replace("__", ":").replace("_", "-"): v for k, v in filters.items()}
        return {e.id for e in ec2.describe_network_interfaces(filters={"vpc-id": [backend.vpc_id], **named})}

    assert {tagged.id, other.id} <= ids(subnet_id=[backend.subnet_id])
    assert ids(tag__team=["a"]) == {tagged.id}
    assert ids(tag__team=["a", "b"]) == {tagged.id, other.id}
    assert {tagged.id, other.id} <= ids(tag_key=["team"])
    assert ids(description=["second"]) == {other.id}
    assert ids(tag__team=["a"], description=["second"]) == set()
    assert {tagged.id, other.id} <= ids(availability_zone=[AZ])
    assert ids(network_interface_id=[other.id]) == {other.id}


def test_attach_sets_instance_and_device_index(backend: Backend) -> None:
    """ENI-CREATE-4: attach returns the attachment ID; describe shows instance, index, in-use."""
    eni = _create(backend)
    attachment_id = backend.ec2.attach_network_interface(eni.id, backend.instance_id, 1)
    assert attachment_id.startswith("eni-attach-")
    [seen] = backend.ec2.describe_network_interfaces(ids=[eni.id])
    assert (seen.instance_id, seen.device_index, seen.attachment_id) == (
        backend.instance_id,
        1,
        attachment_id,
    )
    assert seen.status == "in-use"
    on_instance = backend.ec2.describe_network_interfaces(
        filters={"attachment.instance-id": [backend.instance_id]}
    )
    assert {e.device_index for e in on_instance} == {0, 1}


def test_assign_count_adds_that_many_unique_addresses(backend: Backend) -> None:
    """ENI-ALLOC-3: AssignPrivateIpAddresses(SecondaryPrivateIpAddressCount)."""
    eni = _create(backend, secondary_private_ip_count=1)
    result = backend.ec2.assign_private_ip_addresses(eni.id, secondary_private_ip_count=2)
    [after] = backend.ec2.describe_network_interfaces(ids=[eni.id])
    assert len(after.secondary_ips) == 3
    assert len(after.private_ips) == 4 and _distinct_where_modelled(backend, after.private_ips)
    assert _in_subnet(backend, after.private_ips)
    assert set(result.private_ips) <= set(after.private_ips)
    assert set(eni.private_ips) <= set(after.private_ips)


def test_assign_explicit_addresses_then_unassign_them(backend: Backend) -> None:
    """ENI-REL-2: /32s go back with UnassignPrivateIpAddresses(PrivateIpAddresses)."""
    eni = _create(backend)
    base = ipaddress.IPv4Network(backend.subnet_cidr).network_address
    wanted = [str(base + 200), str(base + 201)]
    backend.ec2.assign_private_ip_addresses(eni.id, private_ips=wanted)
    [after] = backend.ec2.describe_network_interfaces(ids=[eni.id])
    assert set(wanted) <= set(after.secondary_ips)
    backend.ec2.unassign_private_ip_addresses(eni.id, private_ips=[wanted[0]])
    [final] = backend.ec2.describe_network_interfaces(ids=[eni.id])
    assert wanted[0] not in final.private_ips and wanted[1] in final.private_ips


def test_detach_then_delete_removes_eni(backend: Backend) -> None:
    """EC2-SIM-4: a detached ENI can be deleted; afterwards its ID is NotFound."""
    eni = _create(backend)
    attachment_id = backend.ec2.attach_network_interface(eni.id, backend.instance_id, 1)
    backend.ec2.detach_network_interface(attachment_id)
    [detached] = backend.ec2.describe_network_interfaces(ids=[eni.id])
    assert detached.status == "available" and detached.instance_id is None
    backend.ec2.delete_network_interface(eni.id)
    with pytest.raises(NotFound) as err:
        backend.ec2.describe_network_interfaces(ids=[eni.id])
    assert err.value.code == "InvalidNetworkInterfaceID.NotFound"


def test_unknown_ids_are_not_found_with_aws_codes(backend: Backend) -> None:
    """EC2-SIM-4: unknown IDs -> *.NotFound."""
    with pytest.raises(NotFound) as eni_err:
        backend.ec2.delete_network_interface("eni-0123456789abcdef0")
    assert eni_err.value.code == "InvalidNetworkInterfaceID.NotFound"
    with pytest.raises(NotFound) as subnet_err:
        backend.ec2.create_network_interface(
            CreateNetworkInterfaceRequest(subnet_id="subnet-0123456789abcdef0")
        )
    assert subnet_err.value.code == "InvalidSubnetID.NotFound"
    with pytest.raises(NotFound) as describe_err:
        backend.ec2.describe_subnets(ids=["subnet-0123456789abcdef0"])
    assert describe_err.value.code == "InvalidSubnetID.NotFound"


def test_subnet_describe_and_available_count_drop(backend: Backend) -> None:
    """EC2-SIM-2: a /24 has 251 usable addresses; creating an ENI with 3 secondaries takes 4."""
    [before] = backend.ec2.describe_subnets(ids=[backend.subnet_id])
    assert (before.vpc_id, before.availability_zone, before.cidr_block) == (
        backend.vpc_id,
        AZ,
        backend.subnet_cidr,
    )
    _create(backend, secondary_private_ip_count=3)
    [after] = backend.ec2.describe_subnets(ids=[backend.subnet_id])
    assert before.available_ip_address_count - after.available_ip_address_count == 4
    by_vpc = backend.ec2.describe_subnets(filters={"vpc-id": [backend.vpc_id]})
    assert [s.id for s in by_vpc] == [backend.subnet_id]


def test_vpc_security_group_and_route_table_describes(backend: Backend) -> None:
    """ENI-CACHE-1: VPCs, security groups and route tables are readable by VPC."""
    [vpc] = backend.ec2.describe_vpcs(ids=[backend.vpc_id])
    assert ipaddress.IPv4Network(backend.subnet_cidr).subnet_of(ipaddress.IPv4Network(vpc.cidr_block))
    groups = backend.ec2.describe_security_groups(filters={"vpc-id": [backend.vpc_id]})
    assert backend.security_group_id in {g.id for g in groups}
    [group] = backend.ec2.describe_security_groups(ids=[backend.security_group_id])
    assert group.vpc_id == backend.vpc_id
    tables = backend.ec2.describe_route_tables(filters={"vpc-id": [backend.vpc_id]})
    assert any(t.main for t in tables) and all(t.vpc_id == backend.vpc_id for t in tables)


def test_tags_create_describe_delete(backend: Backend) -> None:
    """ENI-CREATE-3 / ENI-GC-1: CreateTags, DescribeTags(resource-id), DeleteTags."""
    eni = _create(backend)
    backend.ec2.create_tags([eni.id], {"io.cilium/cluster-name": "c1", "extra": "x"})
    found = backend.ec2.describe_tags(filters={"resource-id": [eni.id]})
    assert {(t.key, t.value) for t in found} == {("io.cilium/cluster-name", "c1"), ("extra", "x")}
    assert {t.resource_type for t in found} == {"network-interface"}
    backend.ec2.delete_tags([eni.id], ["extra"])
    [seen] = backend.ec2.describe_network_interfaces(ids=[eni.id])
    assert seen.tags == {"io.cilium/cluster-name": "c1"}
    gc = backend.ec2.describe_network_interfaces(
        filters={"vpc-id": [backend.vpc_id], "status": ["available"], "tag:io.cilium/cluster-name": ["c1"]}
    )
    assert [e.id for e in gc] == [eni.id]


def test_describe_instances_pages_through_everything(backend: Backend) -> None:
    """ENI-CACHE-1: describes return all pages (Boto3Ec2 uses PageSize 5 here: 3 pages for 12)."""
    launched = {backend.instance_id} | {backend.launch_instance() for _ in range(11)}
    found = backend.ec2.describe_instances(filters={"vpc-id": [backend.vpc_id]})
    assert {i.id for i in found} == launched
    one = next(i for i in found if i.id == backend.instance_id)
    assert (one.instance_type, one.availability_zone, one.subnet_id) == (INSTANCE_TYPE, AZ, backend.subnet_id)
    assert len(one.network_interface_ids) == 1
    [primary] = backend.ec2.describe_network_interfaces(ids=list(one.network_interface_ids))
    assert primary.device_index == 0 and primary.primary_ip == one.private_ip


def test_instance_types_match_bundled_table_and_unknown_is_clear(backend: Backend) -> None:
    """ENI-CACHE-1 / EC2-SIM-1: DescribeInstanceTypes gives the same limits as our bundled table."""
    [limits] = backend.ec2.describe_instance_types([INSTANCE_TYPE])
    assert limits == StaticLimits().limits_for(INSTANCE_TYPE)
    with pytest.raises(InvalidParameter) as err:
        backend.ec2.describe_instance_types(["m5.gigantic"])
    assert err.value.code in ("InvalidInstanceType", "InvalidParameterValue")


def test_static_limits_unknown_type_is_one_sentence() -> None:
    with pytest.raises(UnknownInstanceType) as err:
        StaticLimits().limits_for("m5.gigantic")
    assert "m5.gigantic" in str(err.value) and str(err.value).count(".") >= 1 and "\n" not in str(err.value)


def test_elastic_ip_association_to_primary_eni(backend: Backend) -> None:
    """ENI-PARAM-9: AssociateAddress on the node's primary ENI; DescribeAddresses shows it."""
    [instance] = backend.ec2.describe_instances(ids=[backend.instance_id])
    primary_eni = instance.network_interface_ids[0]
    allocation = backend.allocate_address()
    association = backend.ec2.associate_address(allocation, primary_eni)
    assert association.startswith("eipassoc-")
    [address] = backend.ec2.describe_addresses(ids=[allocation])
    assert (address.network_interface_id, address.private_ip) == (primary_eni, instance.private_ip)
    [eni] = backend.ec2.describe_network_interfaces(ids=[primary_eni])
    assert eni.public_ip == address.public_ip
