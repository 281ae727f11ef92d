"""Chaos: the real engine under faults, with the safety invariants checked after every operator step.

Faults (issue 7): a share of mutating EC2 calls fail with a 5xx, AWS throttling stays on, a share of
new ENIs stay invisible to Describe for 2-10 s (EC2-SIM-6), the operator is killed at random points
-- mid-pass, keeping only the EC2 effects before the kill -- and restarted with state rebuilt from
CiliumNodes + EC2 only, and the operator's informer lags so its writes race the agents' (real
resourceVersion conflicts). Faults stop at `Faults.until`.

Invariants, after every engine tick (1 s):
- every CIDR a node lists in spec.ipam.pools.allocated is assigned in EC2 to an ENI attached to that
  node's instance (so no address is on two nodes, and nothing was released while covered, ENI-REL-4);
- no pod IP is held on two nodes (checked at every sample, 5 s);
- instance limits hold: ENIs per instance, address slots per ENI (EC2-SIM-1);
- no ENI leaks: a detached ENI carrying our GC tags is gone within two GC intervals (mark, then
  delete: one grace period, ENI-GC-1) plus a minute of slack, counted from when faults stop
  (each restart forgets the GC's marks, as Cilium's does);
- liveness: after faults stop, every pod has an IP within 2 x the fault-free run's fill time.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass, field
from typing import Any

from reconciler.ec2 import api
from reconciler.ec2.sim import SimulatedEc2
from reconciler.sim.engine_policy import EnginePolicy, our_defaults
from reconciler.sim.lower_bound import MUTATING_ACTIONS
from reconciler.sim.runner import RunContext, new_context, run
from reconciler.sim.scenario import Faults, Scenario
from reconciler.sim.speedups import memoised_cidr_parsing
from reconciler.sim.workload import generate

LEAK_SLACK_S = 60.0
MAX_VIOLATIONS = 50


class InvisibleEnis:
    """Wraps the simulated EC2: a share of new ENIs stays hidden from Describe for a while."""

    def __init__(self, inner: SimulatedEc2, rng: random.Random, faults: Faults, clock: Any) -> None:
        self._inner = inner
        self._rng = rng
        self._faults = faults
        self._clock = clock

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def create_network_interface(self, request: api.CreateNetworkInterfaceRequest) -> api.NetworkInterface:
        eni = self._inner.create_network_interface(request)
        now = self._clock.now()
        if now < self._faults.until and self._rng.random() < self._faults.invisible_fraction:
            low, high = self._faults.invisible_delay
            self._inner.enis[eni.id].visible_at = now + self._rng.uniform(low, high)
        return eni


@dataclass
class ChaosReport:
    scenario: str
    seed: int
    fault_free_fill_s: float | None
    faults_stop_s: float
    satisfied_after_faults_s: float | None
    deadline_s: float | None
    restarts: int
    conflicts: int
    checks: int
    server_errors: int
    throttled: int
    violations: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations

    def to_json(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "ok": self.ok}


class InvariantChecker:
    def __init__(
        self, ctx: RunContext, policy: EnginePolicy, gc_interval: float, faults_until: float = 0.0
    ) -> None:
        """Leak clocks start no earlier than `faults_until`: operator restarts (a fault) reset the
        GC's in-memory marks, so a leak is judged by what happens once the faults have stopped."""
        self.faults_until = faults_until
        self.ctx = ctx
        self.policy = policy
        self.gc_interval = gc_interval
        self.violations: list[str] = []
        self.checks = 0
        self._detached_since: dict[str, float] = {}
        self._gc_tags = {"io.cilium/cilium-managed": "true"}

    def _fail(self, message: str) -> None:
        if len(self.violations) < MAX_VIOLATIONS:
            self.violations.append(f"t={self.ctx.loop.now():.1f}s: {message}")

    def step(self) -> None:
        """Allocated-vs-EC2, instance limits, leaks (cheap enough for every tick)."""
        self.checks += 1
        ec2 = self.ctx.ec2
        now = self.ctx.loop.now()
        limits = ec2.limits.limits_for(self.ctx.world.instance_type)
        for name, obj in self.policy.cluster.latest.items():
            instance_id = obj["spec"].get("instance-id", "")
            instance = ec2.instances.get(instance_id)
            if instance is None:
                continue
            if len(instance.enis_by_index) > limits.max_network_interfaces:
                self._fail(
                    f"{instance_id} has {len(instance.enis_by_index)} ENIs, "
                    f"limit {limits.max_network_interfaces}"
                )
            held: set[str] = set()
            for eni_id in instance.enis_by_index.values():
                eni = ec2.enis[eni_id]
                if eni.ipv4_slots > limits.ipv4_per_interface:
                    self._fail(
                        f"{eni_id} uses {eni.ipv4_slots} address slots, limit {limits.ipv4_per_interface}"
                    )
                held.update(f"{ip}/32" for ip in eni.secondary_ips)
                held.update(eni.prefixes)
            for pool in (obj["spec"].get("ipam") or {}).get("pools", {}).get("allocated", []):
                for cidr in pool.get("cidrs", []):
                    if ":" not in cidr and cidr not in held:
                        self._fail(f"node {name} lists {cidr} but EC2 does not assign it to {instance_id}")
        for eni_id, eni in ec2.enis.items():
            if eni.attachment is None and all(eni.tags.get(k) == v for k, v in self._gc_tags.items()):
                since = self._detached_since.setdefault(eni_id, max(now, self.faults_until))
                if now > since and now - since > 2 * self.gc_interval + LEAK_SLACK_S:
                    self._fail(f"{eni_id} detached since t={since:.0f}s and not collected (ENI-GC-1)")
                    self._detached_since[eni_id] = now  # report once per period
        self._detached_since = {k: v for k, v in self._detached_since.items() if k in ec2.enis}

    def pods(self) -> None:
        """No pod IP on two nodes."""
        owner: dict[str, str] = {}
        for name, agent in self.policy.agents.items():
            for pod in agent.agent.pods():
                ip = pod.ips.get(4)
                if ip is None:
                    continue
                other = owner.setdefault(ip, name)
                if other != name:
                    self._fail(f"pod IP {ip} is on {other} and {name}")


def _fill_time(scenario: Scenario, seed: int, gc_interval: float) -> float | None:
    calm = scenario.with_overrides(faults=Faults())
    ctx = new_context(calm, seed, "fault-free", sleep_latency=True)
    config = dataclasses.replace(our_defaults(calm), eni_gc_interval=gc_interval)
    policy = EnginePolicy(ctx, config, name="ours")
    return run(ctx, policy, generate(calm, seed)).all_pods_with_ip_at


def run_chaos(scenario: Scenario, seed: int, *, gc_interval: float = 60.0) -> ChaosReport:
    """Fault-free reference run, then the faulty run with invariants checked at every step."""
    faults = scenario.faults
    with memoised_cidr_parsing():
        fill = _fill_time(scenario, seed, gc_interval)
        ctx = new_context(scenario, seed, "chaos", sleep_latency=True)
        rng = random.Random(seed * 7919 + 1)
        config = dataclasses.replace(our_defaults(scenario), eni_gc_interval=gc_interval)
        policy = EnginePolicy(
            ctx,
            config,
            name="ours",
            informer_lag=(lambda: rng.uniform(0.0, 0.5)) if faults.concurrent_agent_writes else None,
            wrap_ec2=lambda raw: InvisibleEnis(raw, rng, faults, ctx.clock),
        )
        for action in MUTATING_ACTIONS:
            ctx.ec2.faults.set_error_rate(action, faults.server_error_rate, "InternalError")
        ctx.loop.at(faults.until, ctx.ec2.faults.clear)
        for _ in range(faults.operator_restarts):
            policy.kill_at(rng.uniform(5.0, faults.until))
        checker = InvariantChecker(ctx, policy, gc_interval, faults.until)
        policy.after_tick.append(checker.step)
        satisfied: list[float] = []

        def on_sample(c: RunContext, p: Any) -> None:
            checker.pods()
            if not satisfied and c.loop.now() >= faults.until and c.metrics.pods_waiting == 0:
                satisfied.append(c.loop.now())

        settle = faults.until + 2 * gc_interval + LEAK_SLACK_S + 30.0
        metrics = run(ctx, policy, generate(scenario, seed), on_sample=on_sample, min_time=settle)
    deadline = faults.until + 2 * fill if fill is not None else None
    after = satisfied[0] - faults.until if satisfied else None
    report = ChaosReport(
        scenario=scenario.name,
        seed=seed,
        fault_free_fill_s=fill,
        faults_stop_s=faults.until,
        satisfied_after_faults_s=after,
        deadline_s=deadline,
        restarts=policy.restarts,
        conflicts=policy.cluster.conflicts,
        checks=checker.checks,
        server_errors=sum(n for code, n in metrics.errors.items() if code == "InternalError"),
        throttled=sum(metrics.throttled.values()),
        violations=list(checker.violations),
    )
    if deadline is None:
        report.violations.append("the fault-free run never gave every pod an IP; no liveness yardstick")
    elif not satisfied or satisfied[0] > deadline:
        report.violations.append(
            f"pods still waiting at t={deadline:.0f}s, 2 x the fault-free fill time ({fill:.0f}s) after "
            f"faults stopped at {faults.until:.0f}s"
        )
    return report
