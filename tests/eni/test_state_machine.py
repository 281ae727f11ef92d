"""Hypothesis state machine: the ENI engine against SimulatedEc2 with simple agents.

Random nodes (instance types, first-interface-index, IPv6, prefix-delegation opt-out), demand
changes, agent releases, injected EC2 faults (before and after effect), leaked ENIs, node removals
and engine restarts (a fresh EniOperator rebuilt from CiliumNodes + EC2 only).

Invariants after every step:
- every IPv4 address a node's agent holds in `allocated` is assigned to an ENI of that node's
  instance in EC2 (so nothing was released while covered, ENI-REL-4) and no address is on two nodes;
- no instance exceeds its type's ENI count or per-ENI address slots (EC2-SIM-1);
- at most one IPv6 /80 per node (ENI-V6-1).
After `settle` (faults stopped, enough simulated time): every node whose demand fits its instance
has no deficit and no waiting pod, and no detached GC-tagged ENI is older than one GC grace period
(two GC intervals, ENI-GC-1).
"""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from reconciler.ec2.limits import StaticLimits
from reconciler.eni.calc import node_demand
from reconciler.eni.config import EniOperatorConfig
from reconciler.eni.operator import EniOperator
from reconciler.eni.results import NodeResult

from .helpers import AZ, RealAgent, SimpleAgent, node_for, sim_world

TYPES = ["m5.large", "m5.xlarge", "t3.medium", "m4.large", "c5.large"]
GC_INTERVAL = 30.0
RELEASE_DELAY = 20.0
SCAN_EVERY = 10.0
GC_TAGS = {"io.cilium/cilium-managed": "true", "io.cilium/cluster-name": "default"}
FAULT_ACTIONS = [
    "CreateNetworkInterface",
    "AttachNetworkInterface",
    "AssignPrivateIpAddresses",
    "UnassignPrivateIpAddresses",
    "ModifyNetworkInterfaceAttribute",
    "AssignIpv6Addresses",
    "DescribeNetworkInterfaces",
]
FAULT_CODES = ["InternalError", "RequestLimitExceeded"]


class EniEngineMachine(RuleBasedStateMachine):
    agent_type: type[SimpleAgent] | type[RealAgent] = SimpleAgent

    def __init__(self) -> None:
        super().__init__()
        self.clock, self.sim, self.world = sim_world(instances=0, subnets=2, prefixlen=22, seed=11)
        self.limits = StaticLimits()
        self.agents: dict[str, SimpleAgent | RealAgent] = {}
        self.count = 0
        self.restarts = 0
        self.prefix_delegation = False
        self.op = self._new_operator()
        self.last_scan = -1e9
        self.available_since: dict[str, float] = {}

    def _new_operator(self) -> EniOperator:
        config = EniOperatorConfig(
            aws_release_excess_ips=True,
            excess_ip_release_delay=RELEASE_DELAY,
            eni_gc_interval=GC_INTERVAL,
            aws_enable_prefix_delegation=self.prefix_delegation,
        )
        op = EniOperator(self.sim, config, self.clock)
        op.refresh(force=True)
        return op

    # --- rules -----------------------------------------------------------------------------------
    @rule(enabled=st.booleans())
    def toggle_prefix_delegation(self, enabled: bool) -> None:
        """Operator flag change = a restart with the new flag."""
        self.prefix_delegation = enabled
        self.restart()

    @initialize(
        itype=st.sampled_from(TYPES), first=st.sampled_from([0, 1]), v6=st.booleans(), pods=st.integers(0, 30)
    )
    def first_node(self, itype: str, first: int, v6: bool, pods: int) -> None:
        self.add_node(itype, first, v6, False, pods)

    def teardown(self) -> None:
        """Every example ends with faults stopped and time to converge: check it did."""
        self.settle()

    @precondition(lambda self: len(self.agents) < 5)
    @rule(
        itype=st.sampled_from(TYPES),
        first=st.sampled_from([0, 1]),
        v6=st.booleans(),
        opt_out=st.booleans(),
        pods=st.integers(0, 30),
    )
    def add_node(self, itype: str, first: int, v6: bool, opt_out: bool, pods: int) -> None:
        subnet = self.world.node_subnet(AZ)
        iid = self.sim.launch_instance(itype, subnet, security_group_ids=self.world.security_group_ids[:1])
        name = f"node-{self.count}"
        self.count += 1
        node = node_for(
            name,
            iid,
            self.world,
            instance_type=itype,
            first_interface_index=first,
            disable_prefix_delegation=opt_out,
        )
        agent = self.agent_type(node, wants_ipv6=v6)
        agent.pods = pods
        self.agents[name] = agent
        self.op.on_node_changed(agent.step())

    @precondition(lambda self: self.agents)
    @rule(data=st.data(), pods=st.integers(0, 40))
    def change_demand(self, data: st.DataObject, pods: int) -> None:
        name = data.draw(st.sampled_from(sorted(self.agents)))
        self.agents[name].pods = pods

    @precondition(lambda self: self.agents)
    @rule(data=st.data())
    def remove_node(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(sorted(self.agents)))
        agent = self.agents.pop(name)
        self.sim.terminate_instance(agent.node.instance_id)
        self.op.on_node_deleted(name)

    @rule(seconds=st.sampled_from([0.5, 1.0, 2.0, 5.0]))
    def tick(self, seconds: float) -> None:
        self._tick(seconds)

    @rule(
        action=st.sampled_from(FAULT_ACTIONS),
        code=st.sampled_from(FAULT_CODES),
        phase=st.sampled_from(["before", "after"]),
        times=st.integers(1, 3),
    )
    def inject_fault(self, action: str, code: str, phase: str, times: int) -> None:
        self.sim.faults.script(code, action=action, times=times, phase=phase)  # type: ignore[arg-type]

    @rule()
    def leak_an_eni(self) -> None:
        """An operator that crashed between create and attach leaves a tagged, detached ENI."""
        self.sim.new_eni(self.world.node_subnet(AZ), tags=GC_TAGS)  # admin call: no throttling, no faults

    @rule()
    def restart(self) -> None:
        """A new leader: nothing survives but CiliumNodes and EC2."""
        event("engine restarted")
        self.clock.advance(1.0)
        self.restarts += 1
        self.op = self._new_operator()
        for agent in self.agents.values():
            self.op.on_node_changed(agent.node)

    @rule()
    def settle(self) -> None:
        self.sim.faults.clear()
        for _ in range(int((RELEASE_DELAY + 3 * SCAN_EVERY + 2 * GC_INTERVAL) / 3) + 10):
            self._tick(3.0)
        for name, agent in self.agents.items():
            agent.step()
            if self._fits(agent):
                event("settle checked a node whose demand fits")
                demand = node_demand(agent.node)
                assert agent.pending == 0, (
                    f"{name}: {agent.pending} pods still wait ({agent.node.operator_error})"
                )
                assert demand.needed == 0, f"{name}: deficit {demand.needed} ({agent.node.operator_error})"
        self._check_no_leaks(strict=True)

    # --- the loop --------------------------------------------------------------------------------
    def _apply(self, results: dict[str, NodeResult]) -> None:
        for name, result in results.items():
            if name in self.agents:
                self.agents[name].apply(result)

    def _tick(self, seconds: float) -> None:
        self.clock.advance(seconds)
        nodes = [a.step() for a in self.agents.values()]
        pending = {a.node.name: a.pending for a in self.agents.values()}
        scan = self.clock.now() - self.last_scan >= SCAN_EVERY
        if scan:
            self.last_scan = self.clock.now()
        self._apply(self.op.reconcile(nodes, pending, scan=scan))
        self._check_no_leaks(strict=False)

    def _fits(self, agent: SimpleAgent | RealAgent) -> bool:
        """Demand fits the instance with /32 addresses (prefix delegation only adds room)."""
        limits = self.limits.limits_for(agent.node.eni.instance_type)
        usable_enis = limits.max_network_interfaces - agent.node.eni.first_interface_index
        capacity = usable_enis * (limits.ipv4_per_interface - 1)
        return agent.pods + agent.node.ipam.pre_allocate <= capacity

    def _check_no_leaks(self, strict: bool) -> None:
        now = self.clock.now()
        current = {
            e.id
            for e in self.sim.enis.values()
            if e.attachment is None and all(e.tags.get(k) == v for k, v in GC_TAGS.items())
        }
        self.available_since = {k: self.available_since.get(k, now) for k in current}
        if strict:
            for eni_id, since in self.available_since.items():
                assert now - since <= 2 * GC_INTERVAL + 5.0, f"{eni_id} leaked for {now - since:.0f}s"

    # --- invariants ------------------------------------------------------------------------------
    @invariant()
    def addresses_held_by_agents_exist_on_their_instance_only(self) -> None:
        owner: dict[str, str] = {}
        for name, agent in self.agents.items():
            on_instance: set[str] = set()
            for eni in self.sim.enis.values():
                if eni.attachment and eni.attachment.instance_id == agent.node.instance_id:
                    on_instance.update(eni.secondary_ips)
                    on_instance.add(eni.primary_ip)
                    for prefix in eni.prefixes:
                        on_instance.update(str(a) for a in ipaddress.ip_network(prefix))
            for cidr in agent.node.ipam.cidrs_of("default"):
                net = ipaddress.ip_network(cidr)
                if net.version != 4:
                    continue
                for address in (str(a) for a in net):
                    assert address in on_instance, f"{name} holds {address} which EC2 no longer gives it"
                    assert owner.setdefault(address, name) == name, (
                        f"{address} on {owner[address]} and {name}"
                    )

    @invariant()
    def instance_limits_respected(self) -> None:
        for instance in self.sim.instances.values():
            limits = self.limits.limits_for(instance.instance_type)
            assert len(instance.enis_by_index) <= limits.max_network_interfaces
            for eni_id in instance.enis_by_index.values():
                assert self.sim.enis[eni_id].ipv4_slots <= limits.ipv4_per_interface

    @invariant()
    def at_most_one_ipv6_prefix_per_node(self) -> None:
        for name, agent in self.agents.items():
            prefixes = [
                p
                for e in self.sim.enis.values()
                if e.attachment and e.attachment.instance_id == agent.node.instance_id
                for p in e.ipv6_prefixes
            ]
            assert len(prefixes) <= 1, f"{name} has {prefixes}"


EniEngineMachine.TestCase.settings = settings(
    max_examples=40,
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestEniEngineStateMachine = pytest.mark.slow(EniEngineMachine.TestCase)


class RealAgentMachine(EniEngineMachine):
    """The same machine with the project's agent library (reconciler.agent) on every node."""

    agent_type = RealAgent


RealAgentMachine.TestCase.settings = settings(
    max_examples=25,
    stateful_step_count=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestEniEngineWithRealAgent = pytest.mark.slow(RealAgentMachine.TestCase)
