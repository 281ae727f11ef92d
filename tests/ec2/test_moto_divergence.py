"""Where moto and the simulator disagree (found by running the contract scenarios on both).

Each test runs one scenario on both backends and asserts the simulator answers as EC2 does (SPEC
section 3) while moto answers differently. They document why these behaviours are proven only on
the simulator; if moto ever implements one, its test fails and the scenario should move into
test_contract.py.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from typing import Any

import pytest

from reconciler.ec2.api import CreateNetworkInterfaceRequest, Ec2Error
from tests.ec2.backends import Backend, moto_backend, sim_backend

pytestmark = pytest.mark.moto


@pytest.fixture
def both(moto_session: Any, moto_endpoint: str) -> tuple[Backend, Backend]:
    return sim_backend(), moto_backend(moto_session.client("ec2", endpoint_url=moto_endpoint))


def outcome(run: Callable[[], object]) -> object:
    """The result, or the AWS error code when the call failed."""
    try:
        return run()
    except Ec2Error as err:
        return err.code


def _eni(b: Backend, **kwargs: Any) -> str:
    return b.ec2.create_network_interface(CreateNetworkInterfaceRequest(subnet_id=b.subnet_id, **kwargs)).id


def test_assign_response_lists_only_new_addresses(both: tuple[Backend, Backend]) -> None:
    """EC2 returns only the new addresses; moto returns every private IP of the ENI."""
    sim, moto = both
    for b, expected in ((sim, 2), (moto, 4)):
        eni = _eni(b, secondary_private_ip_count=1)
        assert (
            len(b.ec2.assign_private_ip_addresses(eni, secondary_private_ip_count=2).private_ips) == expected
        )


def test_prefix_delegation(both: tuple[Backend, Backend]) -> None:
    """EC2-SIM-2: Ipv4PrefixCount / Ipv6PrefixCount give /28 and /80 prefixes; moto ignores them."""
    sim, moto = both
    for b, v4, v6 in ((sim, 1, 1), (moto, 0, 0)):
        eni = b.ec2.create_network_interface(
            CreateNetworkInterfaceRequest(subnet_id=b.subnet_id, ipv4_prefix_count=1, ipv6_prefix_count=1)
        )
        assert (len(eni.ipv4_prefixes), len(eni.ipv6_prefixes)) == (v4, v6)


def test_delete_attached_eni(both: tuple[Backend, Backend]) -> None:
    """EC2-SIM-4: deleting an attached ENI is InvalidNetworkInterface.InUse; moto deletes it."""
    sim, moto = both
    for b, expected in ((sim, "InvalidNetworkInterface.InUse"), (moto, None)):
        eni = _eni(b)
        b.ec2.attach_network_interface(eni, b.instance_id, 1)
        assert outcome(lambda b=b, eni=eni: b.ec2.delete_network_interface(eni)) == expected


def test_attachment_limit_and_index_conflict(both: tuple[Backend, Backend]) -> None:
    """EC2-SIM-1: m5.large takes 3 ENIs and one per device index; moto takes any number."""
    sim, moto = both
    for b, expected in (
        (sim, ["eni-attach", "InvalidParameterValue", "eni-attach", "AttachmentLimitExceeded"]),
        (moto, ["eni-attach"] * 4),
    ):
        results = [
            outcome(lambda b=b, index=index: b.ec2.attach_network_interface(_eni(b), b.instance_id, index))
            for index in (1, 1, 2, 3)
        ]
        assert [str(r)[:10] if str(r).startswith("eni-attach") else r for r in results] == expected


def test_per_eni_address_limit(both: tuple[Backend, Backend]) -> None:
    """EC2-SIM-1: m5.large allows 10 IPv4 per ENI (primary included); moto has no limit."""
    sim, moto = both
    for b, expected in ((sim, "PrivateIpAddressLimitExceeded"), (moto, "ok")):
        eni = _eni(b)
        b.ec2.attach_network_interface(eni, b.instance_id, 1)
        result = outcome(
            lambda b=b, eni=eni: b.ec2.assign_private_ip_addresses(eni, secondary_private_ip_count=10)
        )
        assert (result if isinstance(result, str) else "ok") == expected


def test_delete_on_termination_attribute(both: tuple[Backend, Backend]) -> None:
    """ENI-PARAM-8: ModifyNetworkInterfaceAttribute(Attachment.DeleteOnTermination); moto ignores it."""
    sim, moto = both
    for b, expected in ((sim, True), (moto, False)):
        eni = _eni(b)
        attachment = b.ec2.attach_network_interface(eni, b.instance_id, 1)
        b.ec2.set_delete_on_termination(eni, attachment, True)
        assert b.ec2.describe_network_interfaces(ids=[eni])[0].delete_on_termination is expected


def test_client_token_idempotency(both: tuple[Backend, Backend]) -> None:
    """EC2-SIM-4: the same ClientToken returns the same ENI; moto creates a second one."""
    sim, moto = both
    for b, distinct in ((sim, 1), (moto, 2)):
        assert len({_eni(b, client_token="node-a-1") for _ in range(2)}) == distinct


def test_exclusive_counts(both: tuple[Backend, Backend]) -> None:
    """EC2-SIM-3: IP count with prefix count is rejected; moto accepts (and ignores the prefix)."""
    sim, moto = both
    for b, expected in ((sim, "InvalidParameterCombination"), (moto, "ok")):
        result = outcome(lambda b=b: _eni(b, secondary_private_ip_count=1, ipv4_prefix_count=1))
        assert (result if not str(result).startswith("eni-") else "ok") == expected


def test_address_uniqueness_and_reserved_addresses(both: tuple[Backend, Backend]) -> None:
    """EC2-SIM-2: an address in use or reserved cannot be assigned; moto assigns both."""
    sim, moto = both
    for b, expected in (
        (sim, ["InvalidIPAddress.InUse", "InvalidParameterValue"]),
        (moto, ["ok", "ok"]),
    ):
        holder = b.ec2.create_network_interface(CreateNetworkInterfaceRequest(subnet_id=b.subnet_id))
        eni = _eni(b)
        reserved = str(ipaddress.IPv4Network(b.subnet_cidr).network_address + 1)
        results = [
            outcome(lambda b=b, eni=eni, ip=ip: b.ec2.assign_private_ip_addresses(eni, private_ips=[ip]))
            for ip in (holder.primary_ip, reserved)
        ]
        assert [r if isinstance(r, str) else "ok" for r in results] == expected


def test_unassign_checks_ownership_and_primary(both: tuple[Backend, Backend]) -> None:
    """Unassigning another ENI's address or the primary is InvalidParameterValue; moto accepts."""
    sim, moto = both
    for b, expected in ((sim, ["InvalidParameterValue"] * 2), (moto, [None, None])):
        other = b.ec2.create_network_interface(CreateNetworkInterfaceRequest(subnet_id=b.subnet_id))
        mine = b.ec2.create_network_interface(CreateNetworkInterfaceRequest(subnet_id=b.subnet_id))
        results = [
            outcome(
                lambda b=b, ip=ip, eni=mine.id: b.ec2.unassign_private_ip_addresses(eni, private_ips=[ip])
            )
            for ip in (other.primary_ip, mine.primary_ip)
        ]
        assert results == expected


def test_primary_interface_detach(both: tuple[Backend, Backend]) -> None:
    """The ENI at device index 0 cannot be detached (OperationNotPermitted); moto refuses only
    when it is the instance's last ENI, so with a second ENI attached it detaches the primary."""
    sim, moto = both
    for b, expected in ((sim, "OperationNotPermitted"), (moto, None)):
        b.ec2.attach_network_interface(_eni(b), b.instance_id, 1)
        [instance] = b.ec2.describe_instances(ids=[b.instance_id])
        [primary] = b.ec2.describe_network_interfaces(ids=[instance.network_interface_ids[0]])
        assert primary.attachment_id is not None
        assert outcome(lambda b=b, a=primary.attachment_id: b.ec2.detach_network_interface(a)) == expected


def test_unknown_filter_name(both: tuple[Backend, Backend]) -> None:
    """EC2 rejects an unknown filter (InvalidParameterValue); moto fails with an HTTP 500 page."""
    sim, moto = both
    for b, expected in ((sim, "InvalidParameterValue"), (moto, "ConnectionError")):
        assert outcome(lambda b=b: b.ec2.describe_network_interfaces(filters={"bogus": ["x"]})) == expected


def test_default_security_group_applies_to_both() -> None:
    """Agreement kept on purpose: with no Groups, both use the VPC's default group."""
    sim = sim_backend()
    eni = sim.ec2.create_network_interface(CreateNetworkInterfaceRequest(subnet_id=sim.subnet_id))
    [group] = sim.ec2.describe_security_groups(ids=list(eni.security_group_ids))
    assert group.name == "default" and group.vpc_id == sim.vpc_id
