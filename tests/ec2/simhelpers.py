"""Small helpers shared by the simulator tests."""

from __future__ import annotations

import pytest

from reconciler.clock import SimClock
from reconciler.ec2.api import CreateNetworkInterfaceRequest, Ec2Error, NetworkInterface
from reconciler.ec2.sim import SimulatedEc2

AZ = "us-east-1a"


def small_world(
    cidr: str = "10.0.1.0/24",
    *,
    instance_type: str = "m5.large",
    ipv6: bool = True,
    seed: int = 5,
    **kwargs: object,
) -> tuple[SimulatedEc2, SimClock, str, str]:
    """One VPC, one subnet `cidr`, one instance; returns (sim, clock, subnet, instance)."""
    clock = SimClock()
    sim = SimulatedEc2(clock, seed=seed, **kwargs)  # type: ignore[arg-type]
    vpc = sim.add_vpc("10.0.0.0/16", ipv6_cidr="2600:1f18:1:100::/56" if ipv6 else None)
    subnet = sim.add_subnet(vpc, AZ, cidr, ipv6_cidr="2600:1f18:1:100::/64" if ipv6 else None)
    instance = sim.launch_instance(instance_type, subnet)
    return sim, clock, subnet, instance


def new_eni(sim: SimulatedEc2, subnet: str, **kwargs: object) -> NetworkInterface:
    return sim.create_network_interface(CreateNetworkInterfaceRequest(subnet_id=subnet, **kwargs))  # type: ignore[arg-type]


def attached_eni(sim: SimulatedEc2, subnet: str, instance: str, index: int = 1, **kwargs: object) -> str:
    eni = new_eni(sim, subnet, **kwargs)
    sim.attach_network_interface(eni.id, instance, index)
    return eni.id


def error_code(excinfo: pytest.ExceptionInfo[Ec2Error]) -> str:
    return excinfo.value.code
