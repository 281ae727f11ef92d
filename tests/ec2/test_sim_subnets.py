"""EC2-SIM-2: subnet capacity, reserved addresses, unique addresses, /28 alignment and
fragmentation, /80 IPv6 prefixes from /64 subnets."""

from __future__ import annotations

import ipaddress
import random

import pytest

from reconciler.ec2.api import InsufficientAddresses, InsufficientCidrBlocks, InvalidParameter
from reconciler.ec2.sim.addressing import Ipv4Pool
from tests.ec2.simhelpers import attached_eni, new_eni, small_world


def _available(sim, subnet: str) -> int:  # type: ignore[no-untyped-def]
    return sim.describe_subnets(ids=[subnet])[0].available_ip_address_count


def test_ec2_sim_2_reserved_addresses_are_never_handed_out_and_full_subnet_fails() -> None:
    """A /28 has 11 usable addresses (first four and last reserved); the 12th request fails."""
    sim, _, subnet, instance = small_world("10.0.1.0/28", instance_type="m5.metal")
    assert _available(sim, subnet) == 10  # the instance's primary ENI took one
    eni = attached_eni(sim, subnet, instance, secondary_private_ip_count=9)
    assert _available(sim, subnet) == 0
    with pytest.raises(InsufficientAddresses) as err:
        sim.assign_private_ip_addresses(eni, secondary_private_ip_count=1)
    assert err.value.code == "InsufficientFreeAddressesInSubnet"
    with pytest.raises(InsufficientAddresses):
        new_eni(sim, subnet)
    held = {ip for e in sim.describe_network_interfaces() for ip in e.private_ips}
    net = ipaddress.IPv4Network("10.0.1.0/28")
    assert held == {str(net[i]) for i in range(4, 15)}


def test_ec2_sim_2_reserved_address_cannot_be_requested() -> None:
    sim, _, subnet, _ = small_world()
    eni = new_eni(sim, subnet)
    for reserved in ("10.0.1.0", "10.0.1.3", "10.0.1.255"):
        with pytest.raises(InvalidParameter) as err:
            sim.assign_private_ip_addresses(eni.id, private_ips=[reserved])
        assert "reserved" in str(err.value)
    with pytest.raises(InvalidParameter):
        sim.assign_private_ip_addresses(eni.id, private_ips=["10.0.2.10"])  # outside the subnet


def test_ec2_sim_2_available_count_drops_by_one_per_ip_and_sixteen_per_prefix() -> None:
    sim, _, subnet, instance = small_world()
    start = _available(sim, subnet)
    eni = attached_eni(sim, subnet, instance, secondary_private_ip_count=2)
    assert _available(sim, subnet) == start - 3
    sim.assign_private_ip_addresses(eni, ipv4_prefix_count=2)
    assert _available(sim, subnet) == start - 3 - 32
    [seen] = sim.describe_network_interfaces(ids=[eni])
    sim.unassign_private_ip_addresses(eni, ipv4_prefixes=[seen.ipv4_prefixes[0]])
    assert _available(sim, subnet) == start - 3 - 16


def test_ec2_sim_2_addresses_are_unique_in_the_subnet() -> None:
    sim, _, subnet, instance = small_world()
    holder = attached_eni(sim, subnet, instance, secondary_private_ip_count=3)
    [seen] = sim.describe_network_interfaces(ids=[holder])
    other = new_eni(sim, subnet)
    with pytest.raises(Exception) as err:
        sim.assign_private_ip_addresses(other.id, private_ips=[seen.secondary_ips[0]])
    assert getattr(err.value, "code", "") == "InvalidIPAddress.InUse"


def test_ec2_sim_2_prefixes_are_aligned_28s_disjoint_from_addresses() -> None:
    sim, _, subnet, instance = small_world("10.0.0.0/22", instance_type="m5.metal")
    eni = attached_eni(sim, subnet, instance, secondary_private_ip_count=10)
    sim.assign_private_ip_addresses(eni, ipv4_prefix_count=20)
    [seen] = sim.describe_network_interfaces(ids=[eni])
    prefixes = [ipaddress.IPv4Network(p) for p in seen.ipv4_prefixes]
    assert all(p.prefixlen == 28 and int(p.network_address) % 16 == 0 for p in prefixes)
    assert all(p.subnet_of(ipaddress.IPv4Network("10.0.0.0/22")) for p in prefixes)
    assert len({p for p in prefixes}) == 20
    all_ips = {ip for e in sim.describe_network_interfaces() for ip in e.private_ips}
    assert not any(ipaddress.IPv4Address(ip) in p for ip in all_ips for p in prefixes)


def test_ec2_sim_2_fragmentation_gives_insufficient_cidr_blocks() -> None:
    """A /26 has four /28 blocks; the first and last hold reserved addresses, so two can be
    delegated. One address in each of the middle blocks leaves 57 free addresses and no prefix."""
    sim, _, subnet, instance = small_world("10.0.1.0/26", instance_type="m5.metal")
    eni = attached_eni(sim, subnet, instance)
    [seen] = sim.describe_network_interfaces(ids=[eni])
    taken = {ip for e in sim.describe_network_interfaces() for ip in e.private_ips}
    blockers = [ip for ip in ("10.0.1.20", "10.0.1.40") if ip not in taken]
    sim.assign_private_ip_addresses(eni, private_ips=blockers)
    middle_used = {ip for ip in taken | set(blockers) if 16 <= int(ip.rsplit(".", 1)[1]) < 48}
    assert {int(ip.rsplit(".", 1)[1]) // 16 for ip in middle_used} == {1, 2}
    assert _available(sim, subnet) > 16
    with pytest.raises(InsufficientCidrBlocks) as err:
        sim.assign_private_ip_addresses(eni, ipv4_prefix_count=1)
    assert err.value.code == "InsufficientCidrBlocks"
    with pytest.raises(InsufficientCidrBlocks):
        new_eni(sim, subnet, ipv4_prefix_count=1)
    assert seen.id == eni


def test_ec2_sim_2_released_prefix_can_be_delegated_again() -> None:
    sim, _, subnet, instance = small_world("10.0.1.0/24", instance_type="m5.metal")
    eni = attached_eni(sim, subnet, instance)
    free = sim.subnets[subnet].pool.free_prefixes
    got = sim.assign_private_ip_addresses(eni, ipv4_prefix_count=free).ipv4_prefixes
    with pytest.raises(InsufficientCidrBlocks):
        sim.assign_private_ip_addresses(eni, ipv4_prefix_count=1)
    sim.unassign_private_ip_addresses(eni, ipv4_prefixes=[got[0]])
    assert sim.assign_private_ip_addresses(eni, ipv4_prefix_count=1).ipv4_prefixes == (got[0],)


def test_ec2_sim_2_ipv6_prefixes_are_80s_inside_the_64() -> None:
    sim, _, subnet, instance = small_world(instance_type="m5.metal")
    eni = attached_eni(sim, subnet, instance, ipv6_prefix_count=1)
    more = sim.assign_ipv6_prefixes(eni, 5)
    [seen] = sim.describe_network_interfaces(ids=[eni])
    nets = [ipaddress.IPv6Network(p) for p in seen.ipv6_prefixes]
    assert len(nets) == 6 and len(set(nets)) == 6 and set(more) <= set(seen.ipv6_prefixes)
    assert all(n.prefixlen == 80 and n.subnet_of(ipaddress.IPv6Network("2600:1f18:1:100::/64")) for n in nets)


def test_ec2_sim_2_ipv6_on_ipv4_only_subnet_is_invalid_parameter() -> None:
    sim, _, subnet, instance = small_world(ipv6=False)
    with pytest.raises(InvalidParameter) as err:
        new_eni(sim, subnet, ipv6_prefix_count=1)
    assert err.value.code == "InvalidParameterValue" and subnet in str(err.value)
    eni = attached_eni(sim, subnet, instance)
    with pytest.raises(InvalidParameter) as err2:
        sim.assign_ipv6_prefixes(eni, 1)
    assert err2.value.code == "InvalidParameterValue"


def test_ec2_sim_2_subnet_sizes_are_16_to_28() -> None:
    for bad in ("10.0.0.0/15", "10.0.0.0/29"):
        with pytest.raises(ValueError):
            Ipv4Pool(bad)
    assert Ipv4Pool("10.0.0.0/16").available == 65536 - 5
    assert Ipv4Pool("10.0.0.0/28").available == 11


def test_ec2_sim_2_delete_returns_every_address() -> None:
    sim, _, subnet, instance = small_world(instance_type="m5.metal")
    start = _available(sim, subnet)
    eni = new_eni(sim, subnet, ipv4_prefix_count=2, ipv6_prefix_count=1)
    pool = sim.subnets[subnet].pool
    free_ip = next(f"10.0.1.{n}" for n in range(4, 255) if pool.is_free(f"10.0.1.{n}"))
    sim.assign_private_ip_addresses(eni.id, private_ips=[free_ip])
    assert _available(sim, subnet) == start - 1 - 32 - 1
    sim.delete_network_interface(eni.id)
    assert _available(sim, subnet) == start


def test_ec2_sim_2_packed_placement_keeps_prefixes_available_random_fragments() -> None:
    """A /24 has 16 blocks; 100 packed addresses fill the two reserved blocks (27 free) and five
    more, leaving 9 delegable /28s. Scattered (random) placement leaves fewer."""
    free_prefixes = {}
    for placement in ("packed", "random"):
        sim, _, subnet, _ = small_world("10.0.1.0/24", ipv6=False, address_placement=placement)
        for _ in range(11):  # the instance's primary + 11 x 9 = 100 addresses
            new_eni(sim, subnet, secondary_private_ip_count=8)
        assert sim.describe_subnets(ids=[subnet])[0].available_ip_address_count == 251 - 100
        free_prefixes[placement] = sim.subnets[subnet].pool.free_prefixes
    assert free_prefixes["packed"] == 9 and free_prefixes["random"] < 9


def test_ec2_sim_2_packed_placement_reuses_released_addresses_first() -> None:
    pool = Ipv4Pool("10.0.1.0/24", "packed")
    rng = random.Random(0)
    first = pool.take_random(30, rng)
    pool.give_back(first[-1])
    assert pool.take_random(1, rng) == [first[-1]]  # the only hole in a partly used block
    with pytest.raises(ValueError):
        Ipv4Pool("10.0.1.0/24", "sparse")
