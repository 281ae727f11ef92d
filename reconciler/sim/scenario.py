"""Scenario definitions: what cluster the simulation builds, how it churns, what breaks, what to hit.

Plain frozen dataclasses so a scenario is data (printable, JSON-able, comparable) and the runner is
the only code. `SCENARIOS` holds the demo and the benchmarks S1-S5 of issue 7 plus a small chaos run.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal

Mode = Literal["eni", "multipool", "scan"]


@dataclass(frozen=True)
class Churn:
    """Replace `fraction_per_minute` of the running pods every minute during [start, start+duration)."""

    fraction_per_minute: float
    start: float = 60.0
    duration: float = 30 * 60.0


@dataclass(frozen=True)
class Faults:
    """Injected trouble (EC2-SIM-6 and issue 7's chaos list); all off by default."""

    server_error_rate: float = 0.0  # share of mutating calls failing with a 5xx
    invisible_fraction: float = 0.0  # share of new ENIs hidden from Describe ...
    invisible_delay: tuple[float, float] = (2.0, 10.0)  # ... for a uniform time in this range
    operator_restarts: int = 0  # operator killed and restarted at this many random points
    concurrent_agent_writes: bool = False  # agents write their CiliumNode while the operator does
    until: float = 0.0  # faults stop at this simulated time (0: never start)

    @property
    def any(self) -> bool:
        return bool(
            self.server_error_rate
            or self.invisible_fraction
            or self.operator_restarts
            or self.concurrent_agent_writes
        )


@dataclass(frozen=True)
class Targets:
    """Issue 7's targets for our default configuration (None: not measured in this scenario)."""

    time_vs_lower_bound: float | None = None  # time until every pod has an IP / lower bound
    calls_vs_minimum: float | None = None  # mutating calls / minimum
    throttled_share: float | None = None  # throttled calls / all calls
    max_pod_wait_s: float | None = None
    flapping_share: float | None = None  # allocate-then-release within 5 min / allocations
    scan_cpu_s: float | None = None  # one full scan, median of 5
    peak_rss_mb: float | None = None
    allocation_cpu_s: float | None = None


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    mode: Mode = "eni"
    nodes: int = 300
    instance_type: str = "m5.xlarge"
    pods_per_node: int = 25
    node_join_window: float = 0.0  # nodes join uniformly over this many seconds (0: all at t=0)
    pod_start_window: float = 0.0  # each node's pods appear over this many seconds after it joins
    subnets: int = 3
    subnet_prefix: int = 16
    prefix_delegation: bool = False
    release_excess: bool = False
    pre_allocate: int = 8
    churn: Churn | None = None
    faults: Faults = field(default_factory=Faults)
    duration: float = 1800.0  # hard stop in simulated seconds
    pools: int = 2  # multi-pool mode: pools each node requests blocks from
    targets: Targets = field(default_factory=Targets)

    def with_overrides(self, **changes: Any) -> Scenario:
        """A copy with some fields changed (e.g. `--nodes`); unknown names fail loudly."""
        return dataclasses.replace(self, **{k: v for k, v in changes.items() if v is not None})

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


BURST_TARGETS = Targets(time_vs_lower_bound=1.25, calls_vs_minimum=1.10, throttled_share=0.02)

SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario(
            name="demo",
            description="m5.xlarge nodes joining over 2 min, 20 pods each, 5 %/min churn, release on",
            nodes=300,
            pods_per_node=20,
            node_join_window=120.0,
            pod_start_window=10.0,
            release_excess=True,
            churn=Churn(fraction_per_minute=0.05, start=420.0, duration=300.0),
            duration=1000.0,
            targets=Targets(throttled_share=0.02, max_pod_wait_s=5.0, flapping_share=0.01),
        ),
        Scenario(
            name="s1-burst",
            description="m5.xlarge nodes, 25 pending pods each at t=0, three /16 subnets",
            nodes=1000,
            pods_per_node=25,
            duration=3600.0,
            targets=BURST_TARGETS,
        ),
        Scenario(
            name="s2-prefix",
            description="S1 with prefix delegation (/28 per address slot)",
            nodes=1000,
            pods_per_node=25,
            prefix_delegation=True,
            duration=3600.0,
            targets=BURST_TARGETS,
        ),
        Scenario(
            name="s3-churn",
            description="25 pods per node, 10 % replaced per minute for 30 min, release-excess on",
            nodes=1000,
            pods_per_node=25,
            release_excess=True,
            churn=Churn(fraction_per_minute=0.10, start=600.0, duration=1800.0),
            duration=600.0 + 1800.0 + 300.0,
            targets=Targets(max_pod_wait_s=5.0, flapping_share=0.01),
        ),
        Scenario(
            name="s4-scale",
            description="steady state: one full scan (cache refresh + planning)",
            mode="scan",
            nodes=5000,
            pods_per_node=25,
            subnets=6,
            targets=Targets(scan_cpu_s=1.0, peak_rss_mb=600.0),
        ),
        Scenario(
            name="s5-multipool",
            description="every node requesting blocks from two pools",
            mode="multipool",
            nodes=5000,
            pods_per_node=25,
            pools=2,
            targets=Targets(allocation_cpu_s=0.5),
        ),
        Scenario(
            name="chaos",
            description="faults: 10 % 5xx, throttling, 5 % ENIs invisible 2-10 s, operator restarts, "
            "concurrent agent writes",
            nodes=200,
            pods_per_node=25,
            node_join_window=60.0,
            pod_start_window=60.0,
            release_excess=True,
            churn=Churn(fraction_per_minute=0.10, start=120.0, duration=600.0),
            faults=Faults(
                server_error_rate=0.10,
                invisible_fraction=0.05,
                operator_restarts=20,
                concurrent_agent_writes=True,
                until=720.0,
            ),
            duration=2400.0,
        ),
    )
}

DEFAULT_SCENARIO = "demo"


def scenario_named(name: str) -> Scenario:
    """The scenario called `name`, or one clear sentence listing the valid names."""
    try:
        return SCENARIOS[name]
    except KeyError:
        raise ValueError(
            f"unknown scenario {name!r}; choose one of: {', '.join(sorted(SCENARIOS))}"
        ) from None
