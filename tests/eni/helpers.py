"""Test helpers for the ENI engine: simulated worlds, CiliumNodes for instances, and a small agent.

`SimpleAgent` models the Cilium agent the way SPEC section 1 describes it (ENI-ARCH-4/5, ENI-REL-1):
it adopts every CIDR offered in status.eni.enis into `allocated` (pool default) except those it
released while they are still offered, gives each pod one IPv4 address, reports
requested = in-use + pending + pre-allocate, and releases a wholly unused CIDR when the node keeps
enough free addresses without it.
"""

from __future__ import annotations

import dataclasses
import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field

from reconciler.clock import SimClock
from reconciler.ec2.sim import SimulatedEc2, World, build_world
from reconciler.eni.results import NodeResult
from reconciler.model import CiliumNode, EniSpec, IpamSpec, PoolAllocation, PoolRequest

AZ = "us-east-1a"


def sim_world(
    *,
    instance_type: str = "m5.large",
    instances: int = 1,
    subnets: int = 1,
    prefixlen: int = 20,
    dual_stack: bool = True,
    subnet_tags: Mapping[str, str] | None = None,
    seed: int = 0,
    visibility_delay: float = 0.0,
    throttling: bool = True,
) -> tuple[SimClock, SimulatedEc2, World]:
    clock = SimClock(1000.0)
    sim = SimulatedEc2(clock, seed=seed, visibility_delay=visibility_delay, throttling=throttling)
    world = build_world(
        sim,
        azs=(AZ,),
        subnets_per_az=subnets,
        subnet_prefixlen=prefixlen,
        dual_stack=dual_stack,
        subnet_tags=subnet_tags,
        instance_type=instance_type,
        instances_per_az=instances,
    )
    return clock, sim, world


def node_for(
    name: str,
    instance_id: str,
    world: World,
    *,
    instance_type: str = "m5.large",
    requested_v4: int = 0,
    requested_v6: int = 0,
    allocated: tuple[str, ...] = (),
    pre_allocate: int = 8,
    min_allocate: int = 0,
    max_allocate: int = 0,
    max_above_watermark: int = 0,
    static_ip_tags: Mapping[str, str] | None = None,
    **eni: object,
) -> CiliumNode:
    spec = EniSpec(
        instance_type=instance_type,
        vpc_id=world.vpc_id,
        availability_zone=AZ,
        node_subnet_id=world.node_subnet(AZ),
        **eni,  # type: ignore[arg-type]
    )
    requested = (PoolRequest("default", requested_v4, requested_v6),) if requested_v4 or requested_v6 else ()
    ipam = IpamSpec(
        pre_allocate=pre_allocate,
        min_allocate=min_allocate,
        max_allocate=max_allocate,
        max_above_watermark=max_above_watermark,
        static_ip_tags=dict(static_ip_tags or {}),
        requested=requested,
        allocated=(PoolAllocation("default", allocated),) if allocated else (),
    )
    return CiliumNode(name=name, instance_id=instance_id, eni=spec, ipam=ipam)


def v4_addresses(cidrs: tuple[str, ...] | list[str] | set[str]) -> list[str]:
    out: list[str] = []
    for cidr in cidrs:
        net = ipaddress.ip_network(cidr)
        if net.version == 4:
            out.extend(str(a) for a in net)
    return out


@dataclass
class SimpleAgent:
    """One node's agent (see module docstring)."""

    node: CiliumNode
    pods: int = 0
    pending: int = 0
    pod_ips: set[str] = field(default_factory=set)
    released: set[str] = field(default_factory=set)
    releases_enabled: bool = True
    wants_ipv6: bool = False

    def apply(self, result: NodeResult | None) -> None:
        """Write the operator's status back, as the controller would."""
        if result is None:
            return
        changes: dict[str, object] = {}
        if result.enis is not None:
            changes["enis"] = result.enis
        if result.operator_error is not None:
            changes["operator_error"] = result.operator_error
        if changes:
            self.node = dataclasses.replace(self.node, **changes)  # type: ignore[arg-type]

    def offered(self) -> set[str]:
        out: set[str] = set()
        for status in self.node.enis.values():
            out.update(f"{a}/32" for a in status.addresses)
            out.update(status.prefixes)
            out.update(status.ipv6_prefixes)
        return out

    def step(self) -> CiliumNode:
        """Adopt offered CIDRs, place waiting pods, maybe release, then report demand."""
        offered = self.offered()
        self.released &= offered
        allocated = sorted(offered - self.released)
        self.pod_ips &= set(v4_addresses(allocated))
        while len(self.pod_ips) > self.pods:
            self.pod_ips.remove(max(self.pod_ips))
        free = [a for a in v4_addresses(allocated) if a not in self.pod_ips]
        want = self.pods - len(self.pod_ips)
        for address in free[: max(want, 0)]:
            self.pod_ips.add(address)
        self.pending = max(self.pods - len(self.pod_ips), 0)
        pre = self.node.ipam.pre_allocate
        if self.releases_enabled:
            allocated = self._release(allocated, pre)
        demand = len(self.pod_ips) + self.pending + pre
        ipam = dataclasses.replace(
            self.node.ipam,
            requested=(PoolRequest("default", demand, demand if self.wants_ipv6 else 0),),
            allocated=(PoolAllocation("default", tuple(allocated)),) if allocated else (),
        )
        self.node = dataclasses.replace(self.node, ipam=ipam)
        return self.node

    def _release(self, allocated: list[str], pre: int) -> list[str]:
        """ENI-REL-1: drop wholly unused IPv4 CIDRs while free-after-removal >= demand - in-use."""
        keep = list(allocated)
        in_use = len(self.pod_ips)
        demand = in_use + self.pending + pre
        for cidr in sorted(allocated, reverse=True):
            net = ipaddress.ip_network(cidr)
            if net.version != 4 or any(a in self.pod_ips for a in v4_addresses([cidr])):
                continue
            total = len(v4_addresses(keep))
            if total - net.num_addresses - in_use >= demand - in_use:
                keep.remove(cidr)
                self.released.add(cidr)
        return keep


class RealAgent:
    """The project's agent library (reconciler.agent, ENI mode) behind SimpleAgent's interface."""

    def __init__(self, node: CiliumNode, wants_ipv6: bool = False) -> None:
        from reconciler.agent.agent import ENI, Agent, AgentConfig

        self.node = node
        self.wants_ipv6 = wants_ipv6
        self.agent = Agent(node.name, AgentConfig(mode=ENI, enable_ipv6=wants_ipv6))
        self._serial = 0
        self._pods: list[str] = []
        self.pending = 0

    @property
    def pods(self) -> int:
        return len(self._pods)

    @pods.setter
    def pods(self, count: int) -> None:
        from reconciler.agent.pods import PodInfo

        while len(self._pods) < count:
            self._serial += 1
            pod = PodInfo("default", f"{self.node.name}-{self._serial}")
            self.agent.add_pod(pod)
            self._pods.append(pod.key)
        while len(self._pods) > count:
            self.agent.remove_pod(self._pods.pop())

    @property
    def pod_ips(self) -> set[str]:
        return {p.ips[4] for p in self.agent.pods() if 4 in p.ips}

    def apply(self, result: NodeResult | None) -> None:
        SimpleAgent.apply(self, result)  # type: ignore[arg-type]

    def step(self) -> CiliumNode:
        from reconciler.agent.agent import PodStatus

        self.node = dataclasses.replace(self.node, ipam=self.agent.sync(self.node))
        self.pending = sum(1 for p in self.agent.pods() if p.status is PodStatus.PENDING)
        return self.node
