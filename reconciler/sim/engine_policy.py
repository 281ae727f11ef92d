"""Policies (a) and ours: the real ENI engine (`reconciler.eni.operator.EniOperator`) in the loop.

The driver here is the simulator's stand-in for the controller: it keeps CiliumNodes in a
`MemoryStore` (resourceVersion, conflicts), feeds the engine node changes and pending-pod counts,
ticks it (at most once per second, ENI-CALC-4; the 1-minute scan, ENI-CALC-3), and writes the
engine's `NodeResult`s back as status updates. Per-node work runs on `VirtualWorkers`
(`--parallel-alloc-workers` in simulated time) and every EC2 call goes through a client limiter
(`limiters.py`) into `SimulatedEc2`, whose latency lands on the worker's timeline. A node's status
write becomes visible at the moment its worker finished, not at the end of the whole pass.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reconciler.cluster.memory import MemoryStore, clone
from reconciler.cluster.store import CILIUM_NODE, Conflict
from reconciler.ec2.aws_buckets_limiter import AwsBucketsLimiter
from reconciler.eni.config import EniOperatorConfig
from reconciler.eni.operator import EniOperator
from reconciler.eni.results import NodeResult
from reconciler.model import CiliumNode, IpamSpec
from reconciler.sim.agent_sim import SimAgent
from reconciler.sim.ec2_tap import AddressTap
from reconciler.sim.limiters import GlobalLimiter, LimitedEc2, Limiter
from reconciler.sim.parallel import OperatorKilled, VirtualWorkers
from reconciler.sim.runner import RunContext
from reconciler.sim.scenario import Scenario
from reconciler.sim.workload import node_name

TICK_S = 1.0
SCAN_S = 60.0
WRITE_RETRIES = 5


def _base_config(scenario: Scenario, **extra: Any) -> EniOperatorConfig:
    return EniOperatorConfig(
        cluster_name="sim",
        aws_release_excess_ips=scenario.release_excess,
        aws_enable_prefix_delegation=scenario.prefix_delegation,
        **extra,
    )


def cilium_defaults(scenario: Scenario) -> EniOperatorConfig:
    """Baseline (a): Cilium's defaults -- one client bucket, qps 4, burst 20 (ENI-CFG-1)."""
    return _base_config(scenario, limit_ipam_api_qps=4.0, limit_ipam_api_burst=20)


def our_defaults(scenario: Scenario) -> EniOperatorConfig:
    """Ours: the same engine; the simulator pairs it with per-action client buckets sized like
    AWS's (AwsBucketsLimiter, as the operator ships it). qps/burst here only document the aggregate."""
    return _base_config(scenario, limit_ipam_api_qps=40.0, limit_ipam_api_burst=100)


def limiter_for(name: str, config: EniOperatorConfig, ctx: RunContext) -> Limiter:
    if name == "ours":
        return AwsBucketsLimiter(ctx.clock, ctx.clock.sleep)
    return GlobalLimiter(
        ctx.clock, ctx.clock.sleep, config.limit_ipam_api_qps, config.limit_ipam_api_burst, adaptive=False
    )


class SimCluster:
    """CiliumNodes in a MemoryStore plus the informer plumbing between agents and the operator."""

    def __init__(self, ctx: RunContext, informer_lag: Callable[[], float]) -> None:
        self.ctx = ctx
        self.store = MemoryStore(history_limit=64)
        self.latest: dict[str, dict[str, Any]] = {}
        self.operator_seen: dict[str, dict[str, Any]] = {}
        self.lag = informer_lag
        self.on_operator_event: Callable[[CiliumNode], None] = lambda node: None
        self.on_agent_event: Callable[[str, CiliumNode], None] = lambda name, node: None
        self.conflicts = 0

    def _changed(self, obj: dict[str, Any]) -> None:
        name = obj["metadata"]["name"]
        self.latest[name] = obj
        self.ctx.loop.after(self.lag(), self._deliver_to_operator, obj)

    def _deliver_to_operator(self, obj: dict[str, Any]) -> None:
        name = obj["metadata"]["name"]
        seen = self.operator_seen.get(name)
        if seen is not None and int(seen["metadata"]["resourceVersion"]) >= int(
            obj["metadata"]["resourceVersion"]
        ):
            return
        self.operator_seen[name] = obj
        self.on_operator_event(CiliumNode.from_obj(obj))

    def create(self, obj: dict[str, Any]) -> None:
        self._changed(self.store.create(CILIUM_NODE, obj))

    def write_spec(self, name: str, ipam: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        """The agent writes spec.ipam (update with resourceVersion; re-read and retry on conflict)."""
        for _ in range(WRITE_RETRIES):
            current = self.latest[name]
            obj = dict(current)
            obj["spec"] = dict(current["spec"])
            obj["spec"]["ipam"] = ipam(current["spec"].get("ipam") or {})
            try:
                self._changed(self.store.update(CILIUM_NODE, obj))
                return
            except Conflict:
                self.conflicts += 1
                self.latest[name] = self.store.get(CILIUM_NODE, name)

    def write_status(self, result: NodeResult) -> None:
        """The operator writes status from its own (possibly lagging) view; conflicts -> re-read."""
        name = result.node
        if result.enis is None and result.operator_error is None:
            return
        base = self.operator_seen.get(name) or self.latest.get(name)
        for _ in range(WRITE_RETRIES):
            if base is None:
                return
            status = clone(base.get("status") or {})
            if result.enis is not None:
                status.setdefault("eni", {})["enis"] = {k: v.to_obj() for k, v in result.enis.items()}
            if result.operator_error is not None:
                status.setdefault("ipam", {}).setdefault("operator-status", {})["error"] = (
                    result.operator_error
                )
            obj = dict(base)
            obj["status"] = status
            try:
                new = self.store.update_status(CILIUM_NODE, obj)
            except Conflict:
                self.conflicts += 1
                base = self.store.get(CILIUM_NODE, name)
                continue
            self._changed(new)
            self.operator_seen[name] = new
            self.ctx.loop.after(self.lag(), self.on_agent_event, name, CiliumNode.from_obj(new))
            return


class EnginePolicy:
    """The engine + simulated agents + simulated EC2, for one named configuration."""

    def __init__(
        self,
        ctx: RunContext,
        config: EniOperatorConfig,
        *,
        name: str = "ours",
        informer_lag: Callable[[], float] | None = None,
        wrap_ec2: Callable[[Any], Any] | None = None,
    ) -> None:
        """`informer_lag`: seconds before a write reaches the other side (0: at once); with a lag the
        operator writes from a stale view and meets real conflicts. `wrap_ec2`: wraps the raw
        simulated EC2 (fault injection) under the limiter."""
        self.name = name
        self.ctx = ctx
        self.config = config
        self.scenario = ctx.scenario
        self.loop = ctx.loop
        self.after_tick: list[Callable[[], None]] = []
        self.restarts = 0
        self.cluster = SimCluster(ctx, informer_lag=informer_lag or (lambda: 0.0))
        self.cluster.on_operator_event = self._operator_event
        self.cluster.on_agent_event = self._agent_event
        limiter = limiter_for(name, config, ctx)
        raw = wrap_ec2(ctx.ec2) if wrap_ec2 is not None else ctx.ec2
        self.ec2 = AddressTap(LimitedEc2(raw, limiter), ctx.metrics, ctx.clock)
        self.agents: dict[str, SimAgent] = {}
        self.pending: dict[str, int] = {}
        self.workers = VirtualWorkers(ctx.clock, config.parallel_alloc_workers)
        self._busy_until = 0.0
        self._next_scan = 0.0
        self._kills: list[float] = []
        self.op = self._new_operator()
        self._done_at: dict[str, float] = {}
        self.workers.on_item_done = self._item_done
        self.loop.every(TICK_S, self._tick, first=0.0)

    @property
    def busy_until(self) -> float:
        """When the operator's last pass ends: its EC2 calls are spread up to then (worker time)."""
        return self._busy_until

    # --- operator lifecycle ----------------------------------------------------------------------
    def _new_operator(self) -> EniOperator:
        op = EniOperator(self.ec2, self.config, self.ctx.clock, runner=self.workers)
        self.ctx.clock.enter(self.loop.now())
        try:
            op.refresh(force=True)
        finally:
            self._busy_until = self.ctx.clock.leave()
        return op

    def restart_operator(self) -> None:
        """Kill and restart: the new engine knows only what CiliumNodes and EC2 say."""
        self.restarts += 1
        self.op = self._new_operator()
        for obj in self.cluster.latest.values():
            self.op.on_node_changed(CiliumNode.from_obj(obj))
        self.cluster.operator_seen = dict(self.cluster.latest)
        self._next_scan = self.loop.now()

    def _write_if_alive(self, epoch: int, result: NodeResult) -> None:
        if epoch == self.restarts:
            self.cluster.write_status(result)

    def _operator_event(self, node: CiliumNode) -> None:
        """Informer event. A node whose instance the EC2 cache does not know yet (it just booted)
        asks for a triggered refresh (ENI-CACHE-2: at most 1/s) instead of waiting for the minute."""
        if node.instance_id and not self.op.cache.enis_of_instance(node.instance_id):
            self.op.cache.trigger()
        self.op.on_node_changed(node)

    def _agent_event(self, name: str, node: CiliumNode) -> None:
        agent = self.agents.get(name)
        if agent is not None:
            agent.on_status(node)
            self._pending_changed(agent)

    def _item_done(self, item: object, done: float) -> None:
        self._done_at[str(item)] = done

    def kill_at(self, when: float) -> None:
        """Chaos: the operator process dies at `when` (mid-pass if one is running) and restarts."""
        self._kills.append(when)
        self._kills.sort()
        self.loop.at(when, self._killed, when)

    def _killed(self, when: float) -> None:
        self._kills.remove(when)
        self.restart_operator()

    def _tick(self) -> None:
        now = self.loop.now()
        if now < self._busy_until:
            return
        clock = self.ctx.clock
        self._done_at = {}
        clock.deadline = self._kills[0] if self._kills else None
        clock.enter(now)
        results: dict[str, NodeResult] = {}
        epoch = self.restarts
        try:
            refreshed = self.op.refresh()
            self.op.set_pending_pods(self.pending)
            plan = None
            if now >= self._next_scan:
                self._next_scan = now + SCAN_S
                plan = self.op.resync(None, self.pending)
            results.update(self.op.run_allocations())
            if plan is not None:
                for name, res in self.op.run_release(plan).items():
                    results[name] = results[name].merge(res) if name in results else res
            self.op.run_gc()
            if refreshed or plan is not None:
                for name, res in self.op.publish().items():
                    if name not in results or results[name].enis is None:
                        results[name] = results[name].merge(res) if name in results else res
        except OperatorKilled:
            results = {}  # the process died: its unsent writes are gone; EC2 effects before stay
        finally:
            end = clock.leave()
            clock.deadline = None
        self._busy_until = end
        for name, res in results.items():
            self.loop.at(self._done_at.get(name, end), self._write_if_alive, epoch, res)
        for hook in self.after_tick:
            hook()

    # --- workload --------------------------------------------------------------------------------
    def node_join(self, index: int) -> None:
        """ENI-ARCH-2: the agent creates its CiliumNode from the instance's metadata."""
        world = self.ctx.world
        instance_id = world.launch(index)
        name = node_name(index)
        obj = {
            "metadata": {"name": name},
            "spec": {
                "instance-id": instance_id,
                "eni": {
                    "instance-type": world.instance_type,
                    "vpc-id": world.vpc_id,
                    "availability-zone": world.az_for(index),
                    "node-subnet-id": world.subnet_for(index),
                    "first-interface-index": 0,
                },
                "ipam": {"pre-allocate": self.scenario.pre_allocate},
            },
        }
        self.agents[name] = SimAgent(
            name, self.loop, self.ctx.metrics, self._write_agent_spec, CiliumNode.from_obj(obj)
        )
        self.cluster.create(obj)
        self.agents[name].schedule_sync()

    def _write_agent_spec(self, agent: SimAgent, ipam: IpamSpec) -> None:
        def spec_ipam(current: dict[str, Any]) -> dict[str, Any]:
            return {**{k: v for k, v in current.items() if k != "pools"}, **ipam.to_obj()}

        self.cluster.write_spec(agent.name, spec_ipam)
        self._pending_changed(agent)

    def _pending_changed(self, agent: SimAgent) -> None:
        """Pods bound to the node without an IP yet: the surge input of ENI-ALLOC-2."""
        if agent.pending:
            self.pending[agent.name] = len(agent.pending)
        else:
            self.pending.pop(agent.name, None)

    def pod_add(self, index: int, pod: int) -> None:
        agent = self.agents[node_name(index)]
        agent.pod_add(pod)
        self._pending_changed(agent)

    def pod_delete(self, index: int, pod: int) -> None:
        agent = self.agents[node_name(index)]
        agent.pod_delete(pod)
        self._pending_changed(agent)

    # --- figures ---------------------------------------------------------------------------------
    def nodes_ready(self) -> int:
        return sum(1 for a in self.agents.values() if a.ready)

    def ips_allocated(self) -> int:
        return sum(a.ips() for a in self.agents.values())
