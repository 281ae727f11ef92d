"""Builds the simulated AWS side of a scenario: one VPC, N subnets (one per AZ), one instance per node.

Admin calls on `SimulatedEc2` are neither throttled nor recorded, so building a 5,000-node world
costs no simulated time and no EC2 budget. Instances are launched lazily, when their node joins.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from reconciler.ec2.sim import SimulatedEc2
from reconciler.sim.scenario import Scenario

AZS = ("us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d", "us-east-1e", "us-east-1f")
POD_SUBNET_TAGS = {"kubernetes.io/role/cni": "1"}


@dataclass
class ClusterWorld:
    ec2: SimulatedEc2
    vpc_id: str
    subnet_ids: list[str]
    security_group_id: str
    instance_type: str
    instance_of: dict[int, str] = field(default_factory=dict)

    def subnet_for(self, node: int) -> str:
        return self.subnet_ids[node % len(self.subnet_ids)]

    def az_for(self, node: int) -> str:
        return AZS[(node % len(self.subnet_ids)) % len(AZS)]

    def launch(self, node: int) -> str:
        """Start the node's instance (primary ENI at index 0) and remember it."""
        iid = self.ec2.launch_instance(
            self.instance_type, self.subnet_for(node), security_group_ids=(self.security_group_id,)
        )
        self.instance_of[node] = iid
        return iid


def build_cluster_world(ec2: SimulatedEc2, scenario: Scenario) -> ClusterWorld:
    """VPC 10.0.0.0/8 with IPv6, `scenario.subnets` subnets of /`subnet_prefix`, one per AZ."""
    if scenario.subnets > len(AZS) or scenario.subnets < 1:
        raise ValueError(f"scenario {scenario.name!r} asks for {scenario.subnets} subnets; use 1..{len(AZS)}")
    vpc = ec2.add_vpc("10.0.0.0/8", tags={"Name": f"sim-{scenario.name}"})
    step = 2 ** (24 - min(scenario.subnet_prefix, 24)) if scenario.subnet_prefix <= 24 else 1
    subnets: list[str] = []
    for i in range(scenario.subnets):
        if scenario.subnet_prefix <= 24:
            cidr = f"10.{(i * step) // 256 + 1}.{(i * step) % 256}.0/{scenario.subnet_prefix}"
        else:
            cidr = f"10.1.{i}.0/{scenario.subnet_prefix}"
        subnets.append(ec2.add_subnet(vpc, AZS[i], cidr, tags=POD_SUBNET_TAGS))
    ec2.add_route_table(vpc, subnets, main=True)
    sg = ec2.add_security_group(vpc, "nodes")
    return ClusterWorld(ec2, vpc, subnets, sg, scenario.instance_type)
