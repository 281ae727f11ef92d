"""The cluster's workload as a timed list of facts: nodes join, pods appear, pods are replaced.

It is generated once per (scenario, seed), before any policy runs, so every policy compared in one
run (ours, Cilium defaults, vpc-cni-like) sees exactly the same nodes and pods at the same times.
It never depends on IP allocation: pods are bound to nodes by the scheduler, not by IPAM.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from enum import Enum

from reconciler.sim.scenario import Scenario

CHURN_TICK_S = 6.0  # churn is spread over the minute in ten ticks, like a rolling deployment


class Kind(Enum):
    NODE_JOIN = 0
    POD_ADD = 1
    POD_DELETE = 2


@dataclass(frozen=True, slots=True)
class Fact:
    t: float
    kind: Kind
    node: int
    pod: int = -1


@dataclass(frozen=True)
class Workload:
    facts: tuple[Fact, ...]
    nodes: int
    pods_created: int

    def node_join_time(self) -> dict[int, float]:
        return {f.node: f.t for f in self.facts if f.kind is Kind.NODE_JOIN}


def node_name(index: int) -> str:
    return f"node-{index:05d}"


def pod_name(index: int) -> str:
    return f"pod-{index:07d}"


def generate(scenario: Scenario, seed: int) -> Workload:
    """All facts of the scenario, sorted by time (ties: generation order)."""
    rng = random.Random(seed ^ 0x5EED)
    facts: list[Fact] = []
    next_pod = 0
    pods_on: list[list[int]] = [[] for _ in range(scenario.nodes)]
    placed: list[tuple[float, int, int]] = []  # (t, node, pod) for the churn replay
    added_at: dict[int, float] = {}
    for node in range(scenario.nodes):
        joined = rng.uniform(0.0, scenario.node_join_window) if scenario.node_join_window else 0.0
        facts.append(Fact(joined, Kind.NODE_JOIN, node))
        for _ in range(scenario.pods_per_node):
            t = joined + (rng.uniform(0.0, scenario.pod_start_window) if scenario.pod_start_window else 0.0)
            placed.append((t, node, next_pod))
            added_at[next_pod] = t
            facts.append(Fact(t, Kind.POD_ADD, node, next_pod))
            next_pod += 1
    churn = scenario.churn
    if churn is not None and churn.fraction_per_minute > 0:
        for _, node, pod in sorted(placed):
            pods_on[node].append(pod)
        running = [p for ps in pods_on for p in ps]
        where = {p: n for n, ps in enumerate(pods_on) for p in ps}
        ticks = int(churn.duration / CHURN_TICK_S)
        per_tick = churn.fraction_per_minute * CHURN_TICK_S / 60.0
        for i in range(ticks):
            t0 = churn.start + i * CHURN_TICK_S
            count = int(per_tick * len(running) + rng.random())  # unbiased rounding
            for _ in range(min(count, len(running))):
                idx = rng.randrange(len(running))
                victim = running[idx]
                running[idx] = running[-1]
                running.pop()
                old_node = where.pop(victim)
                pods_on[old_node].remove(victim)
                # a pod is deleted only after it was created (replacements may be young)
                t = max(t0 + rng.uniform(0.0, CHURN_TICK_S), added_at.pop(victim) + 1.0)
                facts.append(Fact(t, Kind.POD_DELETE, old_node, victim))
                # the scheduler spreads: the less loaded of two random nodes (ties: the first)
                a, b = rng.randrange(scenario.nodes), rng.randrange(scenario.nodes)
                target = a if len(pods_on[a]) <= len(pods_on[b]) else b
                added_at[next_pod] = t + rng.uniform(0.0, 1.0)
                facts.append(Fact(added_at[next_pod], Kind.POD_ADD, target, next_pod))
                pods_on[target].append(next_pod)
                where[next_pod] = target
                running.append(next_pod)
                next_pod += 1
    facts.sort(key=lambda f: f.t)
    return Workload(facts=tuple(facts), nodes=scenario.nodes, pods_created=next_pod)
