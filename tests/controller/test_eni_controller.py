"""The ENI controller loop on a MemoryStore + SimulatedEc2, stepped on a SimClock (no sleeping).

ENI-ARCH-1 (only the leader calls EC2), ENI-PUB-1 (status.eni.enis written), ENI-NODE-1, ENI-ALLOC-2
(surge from pending pods), ENI-MET-1 (metrics exported from the engine's counters).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from reconciler.clock import SimClock
from reconciler.cluster.memory import MemoryStore
from reconciler.cluster.store import CILIUM_NODE, NODE, POD, NotFound
from reconciler.controller.eni_controller import EniController
from reconciler.controller.gate import LeaderGatedEc2
from reconciler.controller.leader import LeaderElector
from reconciler.ec2.sim import SimulatedEc2, World, build_world
from reconciler.eni.config import EniOperatorConfig
from reconciler.eni.operator import EniOperator
from reconciler.model import CiliumNode, EniSpec, IpamSpec
from tests.controller.agents import eni_agent_sync, ipv4_addresses

AZ = "us-east-1a"


@dataclass
class Operator:
    elector: LeaderElector
    controller: EniController

    def step(self) -> None:
        self.elector.step()
        self.controller.poll_informers(0)
        self.controller.step()


@dataclass
class Cluster:
    clock: SimClock
    store: MemoryStore
    ec2: SimulatedEc2
    world: World

    def operator(self, identity: str, config: EniOperatorConfig | None = None) -> Operator:
        elector = LeaderElector(self.store, "kube-system", "cilium-operator", identity, self.clock)
        cfg = config or EniOperatorConfig()

        def engine() -> EniOperator:
            return EniOperator(LeaderGatedEc2(self.ec2, elector.is_leader), cfg, self.clock)

        return Operator(elector, EniController(self.store, self.clock, elector.is_leader, engine))

    def add_node(self, name: str, instance_id: str, pre_allocate: int = 8) -> None:
        self.store.create(NODE, {"metadata": {"name": name}})
        node = CiliumNode(
            name=name,
            instance_id=instance_id,
            eni=EniSpec(
                instance_type="m5.large",
                vpc_id=self.world.vpc_id,
                availability_zone=AZ,
                node_subnet_id=self.world.node_subnet(AZ),
                first_interface_index=1,
            ),
            ipam=IpamSpec(pre_allocate=pre_allocate),
        )
        obj = node.to_obj()
        obj.pop("status", None)
        self.store.create(CILIUM_NODE, obj)

    def run(self, operators: list[Operator], until: Callable[[], bool], steps: int = 200,
            agents: tuple[str, ...] = (), in_use: int = 0) -> int:
        """Step operators and agents every 0.5 simulated seconds until `until()`; returns steps taken."""
        for n in range(steps):
            for op in operators:
                op.step()
            for name in agents:
                eni_agent_sync(self.store, name, in_use=in_use)
            if until():
                return n
            self.clock.advance(0.5)
        raise AssertionError(f"condition not reached within {steps} steps")


def cluster(instances: int = 1) -> Cluster:
    clock = SimClock(1000.0)
    ec2 = SimulatedEc2(clock, seed=1)
    world = build_world(ec2, azs=(AZ,), instance_type="m5.large", instances_per_az=instances)
    return Cluster(clock, MemoryStore(), ec2, world)


def addresses(c: Cluster, name: str) -> set[str]:
    return ipv4_addresses(c.store.get(CILIUM_NODE, name))


def test_a_node_with_demand_gets_an_eni_and_addresses_ENI_PUB_1() -> None:
    c = cluster()
    op = c.operator("op-1")
    c.add_node("node-1", c.world.instance_ids[0])
    c.run([op], lambda: len(addresses(c, "node-1")) >= 8, agents=("node-1",))
    enis = c.store.get(CILIUM_NODE, "node-1")["status"]["eni"]["enis"]
    assert all(e["number"] >= 1 for e in enis.values())  # first-interface-index 1 (ENI-PARAM-2)
    assert all(e["description"] == f"Cilium-CNI ({c.world.instance_ids[0]})" for e in enis.values())
    assert op.controller.ready()


def test_more_demand_brings_more_addresses_and_metrics_follow_ENI_MET_1() -> None:
    c = cluster()
    op = c.operator("op-1")
    c.add_node("node-1", c.world.instance_ids[0])
    c.run([op], lambda: len(addresses(c, "node-1")) >= 8, agents=("node-1",))
    # m5.large with first-interface-index 1: two pod ENIs of 9 secondaries each -> 18 at most
    c.run([op], lambda: len(addresses(c, "node-1")) >= 16, agents=("node-1",), in_use=8)
    c.clock.advance(61)  # the next scan exports the per-node gauges
    c.run([op], lambda: True, agents=("node-1",), in_use=8)
    metrics = op.controller.metrics
    available = metrics.available_ips.labels(target_node="node-1")._value.get()
    assert available >= 16
    assert metrics.used_ips.labels(target_node="node-1")._value.get() == 8
    subnet = c.world.node_subnet(AZ)
    assert metrics.ops_value("interface_creation_ops", subnet) >= 1
    assert metrics.nodes.labels(category="total")._value.get() == 1
    assert metrics.resync._value.get() >= 2


def test_pending_pods_raise_the_allocation_ENI_ALLOC_2() -> None:
    c = cluster()
    op = c.operator("op-1")
    c.add_node("node-1", c.world.instance_ids[0], pre_allocate=2)
    for i in range(12):
        c.store.create(
            POD,
            {"metadata": {"name": f"p{i}", "namespace": "default"}, "spec": {"nodeName": "node-1"}},
        )
    c.run([op], lambda: len(addresses(c, "node-1")) >= 12, agents=("node-1",))
    assert op.controller.pending.count("node-1") == 12


def test_a_deleted_node_takes_its_cilium_node_with_it_ENI_NODE_1() -> None:
    c = cluster()
    op = c.operator("op-1")
    c.add_node("node-1", c.world.instance_ids[0])
    op.step()
    c.store.delete(NODE, "node-1")
    op.step()
    try:
        c.store.get(CILIUM_NODE, "node-1")
        raise AssertionError("CiliumNode survived its Node")
    except NotFound:
        pass


def test_only_the_leader_calls_ec2_and_a_standby_finishes_the_work_ENI_ARCH_1() -> None:
    c = cluster(instances=2)
    a, b = c.operator("op-a"), c.operator("op-b")
    c.add_node("node-1", c.world.instance_ids[0])
    c.run([a, b], lambda: len(addresses(c, "node-1")) >= 8, agents=("node-1",))
    assert a.elector.is_leader() and not b.elector.is_leader()
    assert b.controller.engine is None  # a standby holds no engine and never calls EC2
    calls_before = len(c.ec2.calls)
    # a dies (stops stepping); b must take over within the lease duration and serve node-2
    c.add_node("node-2", c.world.instance_ids[1])
    taken_over_at: list[float] = []
    start = c.clock.now()

    def node2_served() -> bool:
        if b.elector.is_leader() and not taken_over_at:
            taken_over_at.append(c.clock.now())
        return len(addresses(c, "node-2")) >= 8

    c.run([b], node2_served, agents=("node-1", "node-2"))
    assert taken_over_at and taken_over_at[0] - start <= 15 + 2
    assert len(c.ec2.calls) > calls_before
    all_ips = [ip for n in ("node-1", "node-2") for ip in addresses(c, n)]
    assert len(all_ips) == len(set(all_ips))  # no address assigned twice


def test_losing_the_lease_stops_ec2_calls_at_once_ENI_ARCH_1() -> None:
    c = cluster()
    op = c.operator("op-1")
    c.add_node("node-1", c.world.instance_ids[0])
    op.step()
    assert op.controller.engine is not None
    lease: Any = c.store.get(*_lease())
    lease["spec"]["holderIdentity"] = "someone-else"
    c.store.update(_lease()[0], lease)
    calls = len(c.ec2.calls)
    c.clock.advance(2)
    eni_agent_sync(c.store, "node-1", in_use=5)
    op.step()
    assert not op.elector.is_leader()
    assert op.controller.engine is None
    assert len(c.ec2.calls) == calls
    exported = op.controller.metrics.exposition().decode()
    assert 'target_node="node-1"' not in exported  # a standby exports no per-node numbers


def _lease() -> tuple[Any, str, str]:
    from reconciler.cluster.store import LEASE

    return LEASE, "cilium-operator", "kube-system"


def test_dry_run_plans_and_logs_every_mutation_but_performs_none(caplog: Any) -> None:
    """--dry-run: EC2 is only described; each planned mutation is logged with its reason."""
    c = cluster()
    op = c.operator("op-1", EniOperatorConfig(dry_run=True))
    c.add_node("node-1", c.world.instance_ids[0])
    with caplog.at_level("INFO"):
        for _ in range(6):
            op.step()
            eni_agent_sync(c.store, "node-1")
            c.clock.advance(1.0)
    actions = {call.action for call in c.ec2.calls}
    assert actions and all(a.startswith("Describe") for a in actions), actions
    assert addresses(c, "node-1") == set()
    planned = [r.getMessage() for r in caplog.records if "dry_run" in r.getMessage()]
    assert planned and all("reason=" in line and "node=node-1" in line for line in planned)


def test_a_node_error_is_one_sentence_in_operator_status_and_one_event() -> None:
    """Per-node errors: status.ipam.operator-status.error plus a Warning Event, not repeated."""
    from reconciler.cluster.store import EVENT

    c = cluster()
    op = c.operator("op-1")
    c.add_node("node-1", c.world.instance_ids[0])
    obj = c.store.get(CILIUM_NODE, "node-1")
    obj["spec"]["eni"]["instance-type"] = "x9.imaginary"
    c.store.update(CILIUM_NODE, obj)

    def errored() -> bool:
        return bool(CiliumNode.from_obj(c.store.get(CILIUM_NODE, "node-1")).operator_error)

    c.run([op], errored)
    for _ in range(5):
        op.step()
        c.clock.advance(1)
    error = CiliumNode.from_obj(c.store.get(CILIUM_NODE, "node-1")).operator_error
    assert "x9.imaginary" in error and "\n" not in error
    events = c.store.list(EVENT, "default").items
    assert len(events) == 1
    assert events[0]["involvedObject"]["name"] == "node-1" and events[0]["type"] == "Warning"
    assert events[0]["message"] == error
