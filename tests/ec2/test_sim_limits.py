"""EC2-SIM-1: per-instance-type ENI and address limits (primary included, a /28 prefix is one slot)."""

from __future__ import annotations

import pytest

from reconciler.ec2.api import LimitExceeded, UnknownInstanceType
from reconciler.ec2.limits import StaticLimits
from tests.ec2.simhelpers import attached_eni, new_eni, small_world


@pytest.mark.parametrize(("instance_type", "max_enis"), [("m5.large", 3), ("t2.micro", 2), ("c5.xlarge", 4)])
def test_ec2_sim_1_attachment_limit_per_instance_type(instance_type: str, max_enis: int) -> None:
    sim, _, subnet, instance = small_world(instance_type=instance_type)
    for index in range(1, max_enis):
        attached_eni(sim, subnet, instance, index)
    extra = new_eni(sim, subnet)
    with pytest.raises(LimitExceeded) as err:
        sim.attach_network_interface(extra.id, instance, max_enis)
    assert err.value.code == "AttachmentLimitExceeded"
    assert instance in str(err.value) and str(max_enis) in str(err.value)


def test_ec2_sim_1_ipv4_limit_includes_primary() -> None:
    """m5.large: 10 IPv4 per ENI, so 9 secondaries fit beside the primary and a 10th does not."""
    sim, _, subnet, instance = small_world()
    eni = attached_eni(sim, subnet, instance)
    sim.assign_private_ip_addresses(eni, secondary_private_ip_count=9)
    with pytest.raises(LimitExceeded) as err:
        sim.assign_private_ip_addresses(eni, secondary_private_ip_count=1)
    assert err.value.code == "PrivateIpAddressLimitExceeded"
    [seen] = sim.describe_network_interfaces(ids=[eni])
    assert len(seen.private_ips) == 10


def test_ec2_sim_1_prefix_uses_one_slot() -> None:
    """Nine /28 prefixes + the primary fill an m5.large ENI's 10 slots (144 addresses)."""
    sim, _, subnet, instance = small_world("10.0.0.0/20")
    eni = attached_eni(sim, subnet, instance)
    sim.assign_private_ip_addresses(eni, ipv4_prefix_count=9)
    with pytest.raises(LimitExceeded):
        sim.assign_private_ip_addresses(eni, ipv4_prefix_count=1)
    with pytest.raises(LimitExceeded):
        sim.assign_private_ip_addresses(eni, secondary_private_ip_count=1)
    [seen] = sim.describe_network_interfaces(ids=[eni])
    assert seen.address_slots_used == 10 and len(seen.ipv4_prefixes) == 9


def test_ec2_sim_1_mixed_ips_and_prefixes_share_slots() -> None:
    sim, _, subnet, instance = small_world("10.0.0.0/20")
    eni = attached_eni(sim, subnet, instance)
    sim.assign_private_ip_addresses(eni, secondary_private_ip_count=4)
    sim.assign_private_ip_addresses(eni, ipv4_prefix_count=5)
    with pytest.raises(LimitExceeded):
        sim.assign_private_ip_addresses(eni, ipv4_prefix_count=1)


def test_ec2_sim_1_attach_checks_the_target_type_limit() -> None:
    """An ENI created with more addresses than t2.micro allows (2) cannot be attached to one."""
    sim, _, subnet, instance = small_world(instance_type="t2.micro")
    eni = new_eni(sim, subnet, secondary_private_ip_count=2)
    with pytest.raises(LimitExceeded) as err:
        sim.attach_network_interface(eni.id, instance, 1)
    assert err.value.code == "PrivateIpAddressLimitExceeded"


def test_ec2_sim_1_attach_checks_the_target_type_ipv6_limit() -> None:
    """Found by the state machine: an ENI with 3 /80s cannot join a t2.micro (2 IPv6 per ENI)."""
    sim, _, subnet, instance = small_world(instance_type="t2.micro")
    eni = new_eni(sim, subnet, ipv6_prefix_count=3)
    with pytest.raises(LimitExceeded) as err:
        sim.attach_network_interface(eni.id, instance, 1)
    assert err.value.code == "PrivateIpAddressLimitExceeded" and "IPv6" in str(err.value)


def test_ec2_sim_1_unattached_eni_is_capped_by_the_largest_type() -> None:
    sim, _, subnet, _ = small_world("10.0.0.0/20")
    cap = max(t.ipv4_per_interface for t in StaticLimits().select(()))
    eni = new_eni(sim, subnet, secondary_private_ip_count=cap - 1)
    with pytest.raises(LimitExceeded):
        sim.assign_private_ip_addresses(eni.id, secondary_private_ip_count=1)
    with pytest.raises(LimitExceeded):
        new_eni(sim, subnet, secondary_private_ip_count=cap)


def test_ec2_sim_1_ipv6_prefix_limit() -> None:
    """t3.nano: 2 IPv6 per ENI, each /80 prefix takes one."""
    sim, _, subnet, instance = small_world(instance_type="t3.nano")
    eni = attached_eni(sim, subnet, instance)
    assert len(sim.assign_ipv6_prefixes(eni, 2)) == 2
    with pytest.raises(LimitExceeded):
        sim.assign_ipv6_prefixes(eni, 1)


def test_ec2_sim_1_describe_instance_types_and_unknown_type() -> None:
    sim, _, subnet, _ = small_world()
    m5, m4, metal = sim.describe_instance_types(["m5.large", "m4.large", "m5.metal"])
    assert (m5.max_network_interfaces, m5.ipv4_per_interface, m5.hypervisor) == (3, 10, "nitro")
    assert m5.supports_prefix_delegation and not m4.supports_prefix_delegation
    assert m4.hypervisor == "xen" and metal.bare_metal and metal.supports_prefix_delegation
    with pytest.raises(UnknownInstanceType) as err:
        sim.describe_instance_types(["x9.huge"])
    assert err.value.code == "InvalidInstanceType" and "x9.huge" in str(err.value)
    with pytest.raises(UnknownInstanceType):
        sim.launch_instance("x9.huge", subnet)


def test_bundled_table_covers_required_families() -> None:
    names = StaticLimits().known_types()
    for family in ("t3", "m5", "c5", "m6i", "m4", "t2"):
        assert any(n.startswith(family + ".") for n in names), family
    assert {StaticLimits().limits_for(n).hypervisor for n in names} >= {"nitro", "xen"}
