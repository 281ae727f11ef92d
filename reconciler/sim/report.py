"""Turns a run's metrics into figures next to their targets, the baselines and the lower bound.

Pure: metrics + scenario in, JSON-able dict out. The CLI and `make bench` print it; nothing here
fails a build -- a missed target is a figure with `met: false` and the reason printed beside it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reconciler.ec2.limits import StaticLimits
from reconciler.ec2.sim import TYPICAL_LATENCY, LatencyModel
from reconciler.sim.lower_bound import MUTATING_ACTIONS, LowerBound, lower_bound
from reconciler.sim.metrics import Metrics
from reconciler.sim.scenario import Scenario

OURS = "ours"


def scenario_lower_bound(scenario: Scenario, latency: LatencyModel = TYPICAL_LATENCY) -> LowerBound | None:
    """The bound for the initial fill: every node's pods + pre-allocate (ENI-ARCH-5) from scratch.

    The time part is meaningful only when all demand exists at t=0 (a burst); otherwise it is None.
    Latencies are the model's nominal values minus its jitter, so the bound stays a bound.
    """
    if scenario.mode != "eni":
        return None
    limits = StaticLimits().limits_for(scenario.instance_type)
    lows = {a: v * (1.0 - latency.jitter) for a, v in latency.per_action.items()}
    bound = lower_bound(
        [scenario.pods_per_node + scenario.pre_allocate] * scenario.nodes,
        limits,
        pod_demands=[scenario.pods_per_node] * scenario.nodes,
        prefix_delegation=scenario.prefix_delegation,
        latency={a: lows.get(a, latency.default * (1.0 - latency.jitter)) for a in MUTATING_ACTIONS},
    )
    return bound


def is_burst(scenario: Scenario) -> bool:
    return scenario.node_join_window == 0 and scenario.pod_start_window == 0


@dataclass(frozen=True)
class Figure:
    name: str
    target: float | None
    values: Mapping[str, float | None]  # policy -> value
    bound: float | None = None
    better: str = "lower"

    @property
    def met(self) -> bool | None:
        ours = self.values.get(OURS)
        if self.target is None or ours is None:
            return None
        return ours <= self.target

    def to_json(self) -> dict[str, Any]:
        return {
            "figure": self.name,
            "target": self.target,
            "values": dict(self.values),
            "lower_bound": self.bound,
            "met": self.met,
        }


def _ratio(value: float | None, bound: float | None) -> float | None:
    if value is None or not bound:
        return None
    return value / bound


def figures(
    scenario: Scenario, summaries: Mapping[str, Mapping[str, Any]], bound: LowerBound | None
) -> list[Figure]:
    """The figures issue 7 asks for, for every policy that ran."""
    t = scenario.targets
    out: list[Figure] = []
    time_bound = bound.seconds if bound is not None and is_burst(scenario) else None
    calls_bound = float(bound.mutating_calls) if bound is not None else None
    out.append(
        Figure(
            "time until every pod has an IP (s)",
            None,
            {p: s.get("all_pods_with_ip_s") for p, s in summaries.items()},
            time_bound,
        )
    )
    if time_bound:
        out.append(
            Figure(
                "time / lower bound",
                t.time_vs_lower_bound,
                {p: _ratio(s.get("all_pods_with_ip_s"), time_bound) for p, s in summaries.items()},
                1.0,
            )
        )
    out.append(
        Figure(
            "mutating EC2 calls", None, {p: s["mutating_calls"] for p, s in summaries.items()}, calls_bound
        )
    )
    if calls_bound and scenario.churn is None:
        out.append(
            Figure(
                "mutating calls / minimum",
                t.calls_vs_minimum,
                {p: _ratio(s["mutating_calls"], calls_bound) for p, s in summaries.items()},
                1.0,
            )
        )
    out.append(
        Figure(
            "throttled share of calls",
            t.throttled_share,
            {p: s["throttled_share"] for p, s in summaries.items()},
            0.0,
        )
    )
    if scenario.churn is not None:
        churn_max = {p: s["churn_pod_wait_max_s"] for p, s in summaries.items()}
        churn_p99 = {p: s["churn_pod_wait_p99_s"] for p, s in summaries.items()}
        out.append(Figure("max pod wait during churn (s)", t.max_pod_wait_s, churn_max))
        out.append(Figure("p99 pod wait during churn (s)", None, churn_p99))
        out.append(
            Figure(
                "max pod wait, initial fill included (s)",
                None,
                {p: s["pod_wait_max_s"] for p, s in summaries.items()},
            )
        )
    else:
        out.append(
            Figure(
                "max pod wait (s)", t.max_pod_wait_s, {p: s["pod_wait_max_s"] for p, s in summaries.items()}
            )
        )
    out.append(Figure("p99 pod wait (s)", None, {p: s["pod_wait_p99_s"] for p, s in summaries.items()}))
    out.append(
        Figure(
            "flapping share (<5 min)",
            t.flapping_share,
            {p: s["flapping_share"] for p, s in summaries.items()},
        )
    )
    return out


def report(
    scenario: Scenario,
    seed: int,
    metrics: Mapping[str, Metrics],
    bound: LowerBound | None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    summaries = {p: m.summary(MUTATING_ACTIONS) for p, m in metrics.items()}
    return {
        "scenario": scenario.to_json(),
        "seed": seed,
        "lower_bound": None
        if bound is None
        else {
            "calls_by_action": dict(bound.calls_by_action),
            "mutating_calls": bound.mutating_calls,
            "seconds": bound.seconds if is_burst(scenario) else None,
        },
        "policies": summaries,
        "figures": [f.to_json() for f in figures(scenario, summaries, bound)],
        "series": {p: m.series() for p, m in metrics.items()},
        **(extra or {}),
    }
