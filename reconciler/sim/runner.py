"""Runs one policy through one scenario's workload on its own event loop and simulated EC2.

Each policy gets a fresh world (own account, own token buckets) and the identical workload, so
figures from one run compare like for like. The run stops at the scenario's duration, or earlier
once the workload is over, no pod waits, and no mutating EC2 call happened for `QUIET_S`
(so pre-allocation and releases have settled and the call count is complete). A policy whose
calls run ahead of the loop (the engine's pass in worker time) says until when via `busy_until`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from reconciler.ec2.sim import TYPICAL_LATENCY, LatencyModel, SimulatedEc2
from reconciler.sim.ec2_tap import MetricsObserver
from reconciler.sim.loop import EventLoop
from reconciler.sim.lower_bound import MUTATING_ACTIONS
from reconciler.sim.metrics import Metrics
from reconciler.sim.parallel import WorkerClock
from reconciler.sim.scenario import Scenario
from reconciler.sim.workload import Fact, Kind, Workload
from reconciler.sim.world import ClusterWorld, build_cluster_world

SAMPLE_S = 5.0
QUIET_S = 120.0


class Policy(Protocol):
    """What the runner drives: the workload goes in, figures come out (via `Metrics`)."""

    name: str

    def node_join(self, index: int) -> None: ...

    def pod_add(self, index: int, pod: int) -> None: ...

    def pod_delete(self, index: int, pod: int) -> None: ...

    def nodes_ready(self) -> int: ...

    def ips_allocated(self) -> int: ...


@dataclass
class RunContext:
    """One policy's private world. `clock` is the worker-aware clock EC2 and the engine read."""

    scenario: Scenario
    seed: int
    loop: EventLoop
    clock: WorkerClock
    ec2: SimulatedEc2
    world: ClusterWorld
    metrics: Metrics


PolicyFactory = Callable[[RunContext], Policy]
SampleHook = Callable[[RunContext, Policy], None]


def new_context(
    scenario: Scenario,
    seed: int,
    label: str,
    latency: LatencyModel = TYPICAL_LATENCY,
    *,
    sleep_latency: bool = False,
) -> RunContext:
    """A fresh world. With `sleep_latency`, each EC2 call's latency is lived on the worker clock
    (the engine's synchronous calls); without, callers read `ec2.last_call.finished_at` (event style).
    """
    loop = EventLoop(seed)
    clock = WorkerClock(loop.clock)
    metrics = Metrics(label)
    ec2 = SimulatedEc2(
        clock,
        seed=seed,
        latency=latency,
        observer=MetricsObserver(metrics),
        record_calls=not sleep_latency,
        sleep=clock.sleep if sleep_latency else None,
    )
    world = build_cluster_world(ec2, scenario)
    return RunContext(scenario, seed, loop, clock, ec2, world, metrics)


def _mutations(metrics: Metrics) -> int:
    return sum(n for a, n in metrics.calls.items() if a in MUTATING_ACTIONS)


def run(
    ctx: RunContext,
    policy: Policy,
    workload: Workload,
    *,
    on_sample: SampleHook | None = None,
    sample_every: float = SAMPLE_S,
    min_time: float = 0.0,
) -> Metrics:
    """Replay `workload` into `policy` until done (see module docstring); returns the metrics."""
    loop, metrics = ctx.loop, ctx.metrics
    metrics.expected_pods = ctx.scenario.nodes * ctx.scenario.pods_per_node
    if ctx.scenario.churn is not None:
        metrics.steady_from = ctx.scenario.churn.start
    facts = workload.facts
    state = {"next": 0, "last_mutations": 0, "quiet_since": 0.0}

    def feed(i: int) -> None:
        now = loop.now()
        while i < len(facts) and facts[i].t <= now:
            _dispatch(policy, facts[i])
            i += 1
        state["next"] = i
        if i < len(facts):
            loop.at(facts[i].t, feed, i)

    def sample() -> None:
        now = loop.now()
        metrics.sample(now, policy.nodes_ready(), policy.ips_allocated())
        mutations = _mutations(metrics)
        if mutations != state["last_mutations"]:
            state["last_mutations"] = mutations
            # An operator pass runs inside one loop event; its calls spread up to when it ends.
            state["quiet_since"] = max(now, float(getattr(policy, "busy_until", now)))
        if on_sample is not None:
            on_sample(ctx, policy)

    def finished() -> bool:
        return (
            loop.now() >= min_time
            and state["next"] >= len(facts)
            and metrics.pods_waiting == 0
            and loop.now() - state["quiet_since"] >= QUIET_S
        )

    if facts:
        loop.at(facts[0].t, feed, 0)
    loop.every(sample_every, sample, first=0.0)
    t = 0.0
    while t < ctx.scenario.duration:
        t = loop.run_until(min(t + sample_every, ctx.scenario.duration))
        if finished():
            break
    sample_final = metrics.samples[-1].t if metrics.samples else -1.0
    if sample_final < loop.now():
        metrics.sample(loop.now(), policy.nodes_ready(), policy.ips_allocated())
    return metrics


def _dispatch(policy: Policy, fact: Fact) -> None:
    if fact.kind is Kind.POD_ADD:
        policy.pod_add(fact.node, fact.pod)
    elif fact.kind is Kind.POD_DELETE:
        policy.pod_delete(fact.node, fact.pod)
    else:
        policy.node_join(fact.node)
