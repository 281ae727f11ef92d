"""Contract backends: `SimulatedEc2` and `Boto3Ec2` on a moto server, each with a fresh small world.

Every backend gets its own VPC (/16), one /24 subnet in us-east-1a, a security group and one m5.large
instance, so tests on the shared moto server never see each other's resources as long as they filter
by VPC or by ID.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from reconciler.clock import SimClock
from reconciler.ec2.api import Ec2Api
from reconciler.ec2.boto3_adapter import Boto3Ec2, RetryPolicy
from reconciler.ec2.sim import SimulatedEc2

AZ = "us-east-1a"
INSTANCE_TYPE = "m5.large"
_vpc_numbers = itertools.count(40)


@dataclass
class Backend:
    """One `Ec2Api` implementation with a small world in it."""

    name: str
    ec2: Ec2Api
    vpc_id: str
    subnet_id: str
    subnet_cidr: str
    security_group_id: str
    instance_id: str
    launch_instance: Callable[[], str]
    allocate_address: Callable[[], str]


def sim_backend() -> Backend:
    sim = SimulatedEc2(SimClock(), seed=3)
    vpc = sim.add_vpc("10.1.0.0/16", ipv6_cidr="2600:1f18:1:100::/56")
    subnet_cidr = "10.1.1.0/24"
    subnet = sim.add_subnet(vpc, AZ, subnet_cidr, ipv6_cidr="2600:1f18:1:100::/64")
    sim.add_route_table(vpc, main=True)
    group = sim.add_security_group(vpc, "nodes")

    def launch() -> str:
        return sim.launch_instance(INSTANCE_TYPE, subnet, security_group_ids=[group])

    return Backend("sim", sim, vpc, subnet, subnet_cidr, group, launch(), launch, sim.allocate_address)


def moto_backend(client: Any) -> Backend:
    n = next(_vpc_numbers)
    vpc = client.create_vpc(CidrBlock=f"10.{n}.0.0/16")["Vpc"]["VpcId"]
    subnet_cidr = f"10.{n}.1.0/24"
    subnet = client.create_subnet(VpcId=vpc, CidrBlock=subnet_cidr, AvailabilityZone=AZ)["Subnet"]["SubnetId"]
    group = client.create_security_group(GroupName=f"nodes-{n}", Description="nodes", VpcId=vpc)["GroupId"]
    image = client.describe_images(Owners=["amazon"])["Images"][0]["ImageId"]

    def launch() -> str:
        reservation = client.run_instances(
            ImageId=image,
            InstanceType=INSTANCE_TYPE,
            MinCount=1,
            MaxCount=1,
            SubnetId=subnet,
            SecurityGroupIds=[group],
        )
        return str(reservation["Instances"][0]["InstanceId"])

    def allocate() -> str:
        return str(client.allocate_address(Domain="vpc")["AllocationId"])

    ec2 = Boto3Ec2(
        client=client,
        clock=SimClock(),
        sleep=lambda seconds: None,
        qps=1000.0,
        burst=1000,
        retry=RetryPolicy(max_attempts=3),
        page_sizes={"DescribeInstances": 5},
    )
    return Backend("moto", ec2, vpc, subnet, subnet_cidr, group, launch(), launch, allocate)
