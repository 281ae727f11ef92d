"""Builders for simulated EC2 worlds: one call gives a dual-stack VPC with tagged subnets per AZ,
route tables, security groups and running instances with their primary ENIs.

    world = build_world(sim, azs=("us-east-1a", "us-east-1b"), subnets_per_az=2,
                        instance_type="m5.large", instances_per_az=10)
    world.subnet_ids["us-east-1a"]      # [subnet-..., subnet-...]; the first is the node subnet
    world.instance_ids                  # every launched instance

The VPC gets an IPv4 CIDR (default /16) and an IPv6 /56; every subnet gets the next IPv4 block of
`subnet_prefixlen` and (when `dual_stack`) the next IPv6 /64. Use the simulator's admin methods
(`add_subnet`, `launch_instance`, ...) to go beyond this shape.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from reconciler.ec2.sim.state import SimState

DEFAULT_IPV6_CIDR = "2600:1f18:4000:ab00::/56"


@dataclass
class World:
    vpc_id: str
    subnet_ids: dict[str, list[str]] = field(default_factory=dict)  # AZ -> subnets, node subnet first
    route_table_ids: dict[str, str] = field(default_factory=dict)  # AZ -> its route table; "main" too
    security_group_ids: list[str] = field(default_factory=list)
    instance_ids: list[str] = field(default_factory=list)

    def node_subnet(self, az: str) -> str:
        return self.subnet_ids[az][0]

    def all_subnet_ids(self) -> list[str]:
        return [s for ids in self.subnet_ids.values() for s in ids]


def build_world(
    sim: SimState,
    *,
    azs: Sequence[str] = ("us-east-1a",),
    vpc_cidr: str = "10.0.0.0/16",
    ipv6_cidr: str | None = DEFAULT_IPV6_CIDR,
    subnet_prefixlen: int = 20,
    subnets_per_az: int = 1,
    dual_stack: bool = True,
    subnet_tags: Mapping[str, str] | None = None,
    security_group_names: Sequence[str] = ("nodes",),
    instance_type: str = "m5.large",
    instances_per_az: int = 0,
    vpc_tags: Mapping[str, str] | None = None,
) -> World:
    """Create the world in `sim` and return the IDs (see module docstring)."""
    vpc_id = sim.add_vpc(vpc_cidr, ipv6_cidr=ipv6_cidr if dual_stack else None, tags=vpc_tags)
    world = World(vpc_id=vpc_id)
    v4_blocks = ipaddress.IPv4Network(vpc_cidr).subnets(new_prefix=subnet_prefixlen)
    v6_blocks = (
        ipaddress.IPv6Network(ipv6_cidr).subnets(new_prefix=64) if (dual_stack and ipv6_cidr) else None
    )
    world.route_table_ids["main"] = sim.add_route_table(vpc_id, main=True)
    for group_name in security_group_names:
        world.security_group_ids.append(sim.add_security_group(vpc_id, group_name, tags={"Name": group_name}))
    for az in azs:
        ids = []
        for index in range(subnets_per_az):
            tags = {"Name": f"{az}-{index}", **(subnet_tags or {})}
            ids.append(
                sim.add_subnet(
                    vpc_id,
                    az,
                    str(next(v4_blocks)),
                    ipv6_cidr=str(next(v6_blocks)) if v6_blocks is not None else None,
                    tags=tags,
                )
            )
        world.subnet_ids[az] = ids
        world.route_table_ids[az] = sim.add_route_table(vpc_id, ids, tags={"Name": f"{az}-rt"})
        for n in range(instances_per_az):
            world.instance_ids.append(
                sim.launch_instance(
                    instance_type,
                    ids[0],
                    security_group_ids=world.security_group_ids[:1],
                    tags={"Name": f"node-{az}-{n}"},
                )
            )
    return world
