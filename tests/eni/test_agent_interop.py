"""The engine with the project's real agent library (reconciler.agent, ENI mode) instead of the
test agent: ENI-ARCH-4/5 in, status.eni.enis out, ENI-REL-1 releases -- the whole loop converges."""

from __future__ import annotations

import dataclasses

from reconciler.agent.agent import ENI, Agent, AgentConfig, PodStatus
from reconciler.agent.pods import PodInfo
from reconciler.ec2.sim import SimulatedEc2
from reconciler.eni.config import EniOperatorConfig
from reconciler.eni.operator import EniOperator
from reconciler.model import CiliumNode

from .helpers import node_for, sim_world


class Cluster:
    def __init__(self, instance_type: str, count: int, ipv6: bool, **cfg: object) -> None:
        self.clock, self.sim, world = sim_world(instance_type=instance_type, instances=count, subnets=2)
        self.op = EniOperator(self.sim, EniOperatorConfig(**cfg), self.clock)  # type: ignore[arg-type]
        self.op.refresh(force=True)
        self.nodes: dict[str, CiliumNode] = {}
        self.agents: dict[str, Agent] = {}
        for i, iid in enumerate(world.instance_ids):
            name = f"node-{i}"
            self.nodes[name] = node_for(
                name, iid, world, instance_type=instance_type, first_interface_index=1
            )
            self.agents[name] = Agent(name, AgentConfig(mode=ENI, enable_ipv6=ipv6), clock=self.clock)

    def tick(self, seconds: float = 1.0, scan: bool = False) -> None:
        self.clock.advance(seconds)
        for name, agent in self.agents.items():
            node = self.nodes[name]
            self.nodes[name] = dataclasses.replace(node, ipam=agent.sync(node))
        pending = {
            n: sum(1 for p in a.pods() if p.status is PodStatus.PENDING) for n, a in self.agents.items()
        }
        for name, result in self.op.reconcile(list(self.nodes.values()), pending, scan=scan).items():
            if result.enis is not None:
                self.nodes[name] = dataclasses.replace(self.nodes[name], enis=result.enis)
            if result.operator_error is not None:
                self.nodes[name] = dataclasses.replace(self.nodes[name], operator_error=result.operator_error)


def _all_addresses(cluster: Cluster, family: int) -> list[str]:
    return [p.ips[family] for a in cluster.agents.values() for p in a.pods() if family in p.ips]


def _sim(cluster: Cluster) -> SimulatedEc2:
    return cluster.sim


def test_real_agent_pods_get_addresses_and_ipv6_dual_stack() -> None:
    cluster = Cluster("m5.xlarge", 3, ipv6=True)
    for name, agent in cluster.agents.items():
        for i in range(20):
            agent.add_pod(PodInfo("default", f"{name}-pod-{i}"))
    for t in range(10):
        cluster.tick(scan=t % 5 == 0)
    for name, agent in cluster.agents.items():
        statuses = {p.status for p in agent.pods()}
        assert statuses == {PodStatus.ALLOCATED}, (name, cluster.nodes[name].operator_error)
    v4 = _all_addresses(cluster, 4)
    v6 = _all_addresses(cluster, 6)
    assert len(v4) == len(set(v4)) == 60 and len(v6) == len(set(v6)) == 60
    for node in cluster.nodes.values():
        assert sum(len(e.ipv6_prefixes) for e in node.enis.values()) == 1
        assert node.operator_error == ""


def test_real_agent_release_cycle_with_prefix_delegation() -> None:
    cluster = Cluster(
        "m5.large",
        2,
        ipv6=False,
        aws_enable_prefix_delegation=True,
        aws_release_excess_ips=True,
        excess_ip_release_delay=30,
    )
    for name, agent in cluster.agents.items():
        for i in range(40):
            agent.add_pod(PodInfo("default", f"{name}-pod-{i}"))
    for t in range(8):
        cluster.tick(scan=t % 4 == 0)
    assert all(p.status is PodStatus.ALLOCATED for a in cluster.agents.values() for p in a.pods())
    prefixes_before = sum(len(e.prefixes) for e in _sim(cluster).enis.values())
    assert prefixes_before >= 6  # 48 addresses per node come as /28s
    for name, agent in cluster.agents.items():
        for i in range(2, 40):
            agent.remove_pod(f"default/{name}-pod-{i}")
    cluster.tick(seconds=600.0)  # the agent's release hysteresis: CIDRs idle for 10 minutes first
    for t in range(60):
        cluster.tick(seconds=2.0, scan=t % 5 == 0)
    prefixes_after = sum(len(e.prefixes) for e in _sim(cluster).enis.values())
    assert prefixes_after < prefixes_before
    assert any(c.action == "UnassignPrivateIpAddresses" for c in _sim(cluster).calls)
    # The two pods left keep their addresses, which EC2 still assigns to their node.
    for name, agent in cluster.agents.items():
        kept = [p for p in agent.pods()]
        assert len(kept) == 2 and all(p.status is PodStatus.ALLOCATED for p in kept)
        node = cluster.nodes[name]
        on_node = {ip for e in node.enis.values() for ip in e.addresses}
        on_node |= {
            str(a)
            for e in node.enis.values()
            for p in e.prefixes
            for a in __import__("ipaddress").ip_network(p)
        }
        assert all(p.ips[4] in on_node for p in kept)
