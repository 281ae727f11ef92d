"""EC2-SIM-3 (exclusive counts and lists) and EC2-SIM-4 (delete needs detached, NotFound codes,
ClientToken idempotency), plus the attach / detach / tag / Elastic IP rules the operator relies on."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from reconciler.ec2.api import (
    CreateNetworkInterfaceRequest,
    Ec2Error,
    InUse,
    InvalidParameter,
    NotFound,
)
from tests.ec2.simhelpers import attached_eni, new_eni, small_world

ASSIGN_COMBINATIONS: list[tuple[dict[str, Any], str]] = [
    ({"secondary_private_ip_count": 1, "private_ips": ["10.0.1.100"]}, "InvalidParameterCombination"),
    ({"ipv4_prefix_count": 1, "ipv4_prefixes": ["10.0.1.128/28"]}, "InvalidParameterCombination"),
    ({"secondary_private_ip_count": 1, "ipv4_prefix_count": 1}, "InvalidParameterCombination"),
    ({"private_ips": ["10.0.1.100"], "ipv4_prefixes": ["10.0.1.128/28"]}, "InvalidParameterCombination"),
    ({}, "MissingParameter"),
    ({"secondary_private_ip_count": 0}, "InvalidParameterValue"),
    ({"ipv4_prefix_count": -1}, "InvalidParameterValue"),
    ({"ipv4_prefixes": ["10.0.1.8/28"]}, "InvalidParameterValue"),  # not aligned
]


@pytest.mark.parametrize(("kwargs", "code"), ASSIGN_COMBINATIONS)
def test_ec2_sim_3_assign_exclusivity(kwargs: dict[str, Any], code: str) -> None:
    sim, _, subnet, _ = small_world()
    eni = new_eni(sim, subnet)
    with pytest.raises(InvalidParameter) as err:
        sim.assign_private_ip_addresses(eni.id, **kwargs)
    assert err.value.code == code
    [after] = sim.describe_network_interfaces(ids=[eni.id])
    assert after == eni  # a rejected call changes nothing


def test_ec2_sim_3_create_rejects_ip_count_with_prefix_count() -> None:
    sim, _, subnet, _ = small_world()
    before = sim.describe_subnets(ids=[subnet])[0].available_ip_address_count
    with pytest.raises(InvalidParameter) as err:
        new_eni(sim, subnet, secondary_private_ip_count=2, ipv4_prefix_count=1)
    assert err.value.code == "InvalidParameterCombination"
    assert sim.describe_subnets(ids=[subnet])[0].available_ip_address_count == before


def test_ec2_sim_3_unassign_needs_exactly_one_list() -> None:
    sim, _, subnet, _ = small_world()
    eni = new_eni(sim, subnet, ipv4_prefix_count=1)
    with pytest.raises(InvalidParameter) as err:
        sim.unassign_private_ip_addresses(eni.id)
    assert err.value.code == "MissingParameter"
    with pytest.raises(InvalidParameter) as err2:
        sim.unassign_private_ip_addresses(
            eni.id, private_ips=[eni.primary_ip], ipv4_prefixes=list(eni.ipv4_prefixes)
        )
    assert err2.value.code == "InvalidParameterCombination"


def test_ec2_sim_4_delete_needs_detached() -> None:
    sim, _, subnet, instance = small_world()
    eni = attached_eni(sim, subnet, instance)
    with pytest.raises(InUse) as err:
        sim.delete_network_interface(eni)
    assert err.value.code == "InvalidNetworkInterface.InUse" and "detach" in str(err.value)
    [seen] = sim.describe_network_interfaces(ids=[eni])
    assert seen.attachment_id is not None
    sim.detach_network_interface(seen.attachment_id)
    sim.delete_network_interface(eni)
    assert eni not in {e.id for e in sim.describe_network_interfaces()}


@pytest.mark.parametrize(
    ("call", "code"),
    [
        (lambda s: s.delete_network_interface("eni-0000000000000dead"), "InvalidNetworkInterfaceID.NotFound"),
        (
            lambda s: s.assign_private_ip_addresses("eni-0000000000000dead", secondary_private_ip_count=1),
            "InvalidNetworkInterfaceID.NotFound",
        ),
        (
            lambda s: s.describe_network_interfaces(ids=["eni-0000000000000dead"]),
            "InvalidNetworkInterfaceID.NotFound",
        ),
        (lambda s: s.describe_subnets(ids=["subnet-000000000000dead"]), "InvalidSubnetID.NotFound"),
        (lambda s: s.describe_vpcs(ids=["vpc-000000000000dead"]), "InvalidVpcID.NotFound"),
        (lambda s: s.describe_security_groups(ids=["sg-000000000000dead"]), "InvalidGroup.NotFound"),
        (lambda s: s.describe_route_tables(ids=["rtb-000000000000dead"]), "InvalidRouteTableID.NotFound"),
        (lambda s: s.describe_instances(ids=["i-000000000000dead"]), "InvalidInstanceID.NotFound"),
        (lambda s: s.describe_addresses(ids=["eipalloc-0000dead"]), "InvalidAllocationID.NotFound"),
        (lambda s: s.detach_network_interface("eni-attach-0000dead"), "InvalidAttachmentID.NotFound"),
        (
            lambda s: s.create_tags(["eni-0000000000000dead"], {"a": "b"}),
            "InvalidNetworkInterfaceID.NotFound",
        ),
        (
            lambda s: s.create_network_interface(CreateNetworkInterfaceRequest(subnet_id="subnet-dead")),
            "InvalidSubnetID.NotFound",
        ),
    ],
)
def test_ec2_sim_4_unknown_ids_are_not_found(call: Any, code: str) -> None:
    sim, _, _, _ = small_world()
    with pytest.raises(NotFound) as err:
        call(sim)
    assert err.value.code == code and "does not exist" in str(err.value)


def test_ec2_sim_4_client_token_makes_create_idempotent() -> None:
    sim, _, subnet, _ = small_world()
    request = CreateNetworkInterfaceRequest(
        subnet_id=subnet, secondary_private_ip_count=2, client_token="node-a/1"
    )
    first = sim.create_network_interface(request)
    again = sim.create_network_interface(request)
    assert again.id == first.id and again.private_ips == first.private_ips
    assert len(sim.describe_network_interfaces(filters={"subnet-id": [subnet]})) == 2  # + the primary ENI
    with pytest.raises(InvalidParameter) as err:
        sim.create_network_interface(
            CreateNetworkInterfaceRequest(
                subnet_id=subnet, secondary_private_ip_count=3, client_token="node-a/1"
            )
        )
    assert err.value.code == "IdempotentParameterMismatch"


def test_ec2_sim_4_client_token_rescues_a_lost_response() -> None:
    """The create happens but the caller sees a 500 (fault after effect); the retry with the same
    token returns the same ENI instead of leaking a second one (ENI-CREATE-3)."""
    sim, _, subnet, _ = small_world()
    sim.faults.script("InternalError", action="CreateNetworkInterface", phase="after")
    request = CreateNetworkInterfaceRequest(subnet_id=subnet, client_token="node-b/1")
    with pytest.raises(Ec2Error) as err:
        sim.create_network_interface(request)
    assert err.value.code == "InternalError" and err.value.retryable
    retried = sim.create_network_interface(request)
    enis = sim.describe_network_interfaces(filters={"subnet-id": [subnet]})
    assert len(enis) == 2 and retried.id in {e.id for e in enis}


def test_attach_rules_index_in_use_az_mismatch_primary_detach() -> None:
    sim, _, subnet, instance = small_world()
    attached_eni(sim, subnet, instance, 1)
    with pytest.raises(InvalidParameter) as index_err:
        sim.attach_network_interface(new_eni(sim, subnet).id, instance, 1)
    assert index_err.value.code == "InvalidParameterValue" and "device index 1" in str(index_err.value)
    vpc = sim.describe_subnets(ids=[subnet])[0].vpc_id
    other_az = sim.add_subnet(vpc, "us-east-1b", "10.0.9.0/24")
    with pytest.raises(InvalidParameter) as az_err:
        sim.attach_network_interface(new_eni(sim, other_az).id, instance, 2)
    assert az_err.value.code == "InvalidParameterCombination"
    [primary] = sim.describe_network_interfaces(filters={"attachment.device-index": ["0"]})
    assert primary.attachment_id is not None
    with pytest.raises(InvalidParameter) as detach_err:
        sim.detach_network_interface(primary.attachment_id)
    assert detach_err.value.code == "OperationNotPermitted"
    attached = new_eni(sim, subnet)
    sim.attach_network_interface(attached.id, instance, 2)
    with pytest.raises(InUse):
        sim.attach_network_interface(attached.id, instance, 3)


def test_terminate_deletes_only_delete_on_termination_enis() -> None:
    """ENI-PARAM-8: DeleteOnTermination decides whether an ENI outlives its instance."""
    sim, _, subnet, instance = small_world()
    keep = attached_eni(sim, subnet, instance, 1)
    drop = attached_eni(sim, subnet, instance, 2)
    [dropped] = sim.describe_network_interfaces(ids=[drop])
    assert dropped.attachment_id is not None
    sim.set_delete_on_termination(drop, dropped.attachment_id, True)
    assert sim.describe_network_interfaces(ids=[drop])[0].delete_on_termination is True
    sim.terminate_instance(instance)
    remaining = {e.id: e for e in sim.describe_network_interfaces()}
    assert set(remaining) == {keep} and remaining[keep].status == "available"
    with pytest.raises(NotFound):
        sim.set_delete_on_termination(drop, dropped.attachment_id, False)


def test_elastic_ip_cannot_be_taken_from_another_eni() -> None:
    """ENI-PARAM-9: an associated Elastic IP is Resource.AlreadyAssociated for another ENI."""
    sim, _, subnet, instance = small_world()
    allocation = sim.allocate_address(tags={"pool": "static"})
    primary = sim.describe_instances(ids=[instance])[0].network_interface_ids[0]
    sim.associate_address(allocation, primary)
    with pytest.raises(InUse) as err:
        sim.associate_address(allocation, new_eni(sim, subnet).id)
    assert err.value.code == "Resource.AlreadyAssociated"
    assert sim.describe_addresses(filters={"tag:pool": ["static"]})[0].network_interface_id == primary


def test_unknown_filter_is_rejected() -> None:
    sim, _, _, _ = small_world()
    with pytest.raises(InvalidParameter) as err:
        sim.describe_network_interfaces(filters={"attachment.instance-idd": ["i-1"]})
    assert "attachment.instance-idd" in str(err.value)


def test_describe_tags_filters_by_type_key_and_value() -> None:
    sim, _, subnet, _ = small_world()
    eni = new_eni(sim, subnet, tags={"io.cilium/cilium-managed": "true"})
    sim.create_tags([subnet], {"kubernetes.io/role/cni": "1"})
    found = sim.describe_tags(filters={"key": ["io.cilium/*"], "resource-type": ["network-interface"]})
    assert [(t.resource_id, t.value) for t in found] == [(eni.id, "true")]
    assert [t.resource_id for t in sim.describe_tags(filters={"value": ["1"]})] == [subnet]


def test_concurrent_workers_never_share_an_address() -> None:
    """The operator calls EC2 from worker threads (--parallel-alloc-workers); the simulator's lock
    keeps allocations atomic."""
    sim, _, subnet, _ = small_world("10.0.0.0/22", throttling=False)
    enis = [new_eni(sim, subnet).id for _ in range(8)]

    def work(eni: str) -> None:
        for _ in range(12):
            sim.assign_private_ip_addresses(eni, secondary_private_ip_count=4)

    threads = [threading.Thread(target=work, args=(eni,)) for eni in enis]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    held = [ip for e in sim.describe_network_interfaces() for ip in e.private_ips]
    assert len(held) == len(set(held)) == 1 + 8 * 49
    assert sim.describe_subnets(ids=[subnet])[0].available_ip_address_count == 1024 - 5 - len(held)
