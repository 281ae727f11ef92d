"""`cilium-ipam simulate`: run a scenario on a simulated cluster and simulated EC2, live.

    cilium-ipam simulate                         # the demo: a few hundred nodes, < 1 min wall time
    cilium-ipam simulate --scenario s1-burst --policies ours,cilium-defaults,vpc-cni-like
    cilium-ipam simulate --nodes 50 --seed 3 --json out.json --plot out.png

Every policy runs in its own simulated account on the identical workload (same seed), so the summary
compares like for like; the lower bound is computed from the scenario (reconciler.sim.lower_bound).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.live import Live

from reconciler.sim.metrics import Metrics
from reconciler.sim.report import report, scenario_lower_bound
from reconciler.sim.runner import Policy, RunContext, new_context, run
from reconciler.sim.scenario import DEFAULT_SCENARIO, SCENARIOS, Scenario, scenario_named
from reconciler.sim.speedups import memoised_cidr_parsing
from reconciler.sim.view import calls_table, live_panel, summary_table
from reconciler.sim.workload import Workload, generate

POLICY_NAMES = ("ours", "cilium-defaults", "vpc-cni-like")
LIVE_REFRESH_S = 0.25


def policy_factory(name: str) -> Callable[[RunContext], Policy]:
    """The constructor for a policy name (engine policies import the engine lazily)."""
    if name == "vpc-cni-like":
        from reconciler.sim.ec2_tap import AddressTap
        from reconciler.sim.vpc_cni import VpcCniPolicy

        return lambda ctx: VpcCniPolicy(
            ctx.loop, AddressTap(ctx.ec2, ctx.metrics, ctx.loop.clock), ctx.world, ctx.metrics
        )
    from reconciler.sim.engine_policy import EnginePolicy, cilium_defaults, our_defaults

    config = our_defaults if name == "ours" else cilium_defaults
    return lambda ctx: EnginePolicy(ctx, config(ctx.scenario), name=name)


def add_simulate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--scenario",
        default=DEFAULT_SCENARIO,
        help=f"one of: {', '.join(sorted(SCENARIOS))} (default {DEFAULT_SCENARIO})",
    )
    parser.add_argument("--nodes", type=int, default=None, help="override the scenario's node count")
    parser.add_argument("--seed", type=int, default=1, help="random seed; same seed, same run (default 1)")
    parser.add_argument(
        "--policies",
        default="ours",
        help=f"comma-separated, from: {', '.join(POLICY_NAMES)} (default: ours)",
    )
    parser.add_argument("--json", type=Path, default=None, metavar="OUT.json", help="write the full report")
    parser.add_argument(
        "--plot", type=Path, default=None, metavar="OUT.png", help="plot pods with an IP over time"
    )
    parser.add_argument("--no-live", action="store_true", help="print only the summary")
    parser.add_argument(
        "--log", type=Path, default=None, metavar="FILE", help="write the engine's structured log lines here"
    )


def parse_policies(raw: str) -> list[str]:
    names = [p.strip() for p in raw.split(",") if p.strip()]
    bad = [p for p in names if p not in POLICY_NAMES]
    if bad or not names:
        raise ValueError(f"unknown policy {bad[0] if bad else raw!r}; choose from: {', '.join(POLICY_NAMES)}")
    return names


def run_scenario(
    scenario: Scenario,
    seed: int,
    policies: Sequence[str],
    *,
    console: Console | None = None,
    live: bool = False,
) -> dict[str, Any]:
    """Run every policy on the same workload; returns the report (see reconciler.sim.report)."""
    with memoised_cidr_parsing():
        return _run_scenario(scenario, seed, policies, console=console, live=live)


def _run_scenario(
    scenario: Scenario,
    seed: int,
    policies: Sequence[str],
    *,
    console: Console | None,
    live: bool,
) -> dict[str, Any]:
    workload: Workload = generate(scenario, seed)
    results: dict[str, Metrics] = {}
    cpu: dict[str, float] = {}
    for name in policies:
        ctx = new_context(scenario, seed, name, sleep_latency=name != "vpc-cni-like")
        policy = policy_factory(name)(ctx)
        started = time.process_time()
        if live and console is not None:
            last = [0.0]
            with Live(console=console, refresh_per_second=4, transient=False) as view:

                def on_sample(
                    c: RunContext, p: Policy, view: Live = view, last: list[float] = last, name: str = name
                ) -> None:
                    wall = time.monotonic()
                    if wall - last[0] >= LIVE_REFRESH_S:
                        last[0] = wall
                        view.update(
                            live_panel(
                                name,
                                c.loop.now(),
                                scenario.nodes,
                                p.nodes_ready(),
                                p.ips_allocated(),
                                c.metrics,
                            )
                        )

                results[name] = run(ctx, policy, workload, on_sample=on_sample)
                view.update(
                    live_panel(
                        name,
                        ctx.loop.now(),
                        scenario.nodes,
                        policy.nodes_ready(),
                        policy.ips_allocated(),
                        ctx.metrics,
                    )
                )
            console.print()
        else:
            results[name] = run(ctx, policy, workload)
        cpu[name] = time.process_time() - started
    return report(scenario, seed, results, scenario_lower_bound(scenario), extra={"cpu_seconds": cpu})


@contextlib.contextmanager
def engine_log(path: Path | None) -> Iterator[None]:
    """Engine log lines go to `path` (or only errors to stderr) so they do not tear the live view."""
    logger = logging.getLogger("reconciler")
    saved = (logger.level, logger.propagate, list(logger.handlers))
    handler: logging.Handler = logging.FileHandler(path) if path is not None else logging.StreamHandler()
    handler.setLevel(logging.INFO if path is not None else logging.ERROR)
    logger.handlers = [handler]
    logger.setLevel(logging.INFO if path is not None else logging.ERROR)
    logger.propagate = False
    try:
        yield
    finally:
        handler.close()
        logger.setLevel(saved[0])
        logger.propagate = saved[1]
        logger.handlers = saved[2]


def run_simulate(args: argparse.Namespace) -> int:
    console = Console(width=None if sys.stdout.isatty() else 140)
    try:
        scenario = scenario_named(args.scenario).with_overrides(nodes=args.nodes)
        policies = parse_policies(args.policies)
        if scenario.nodes < 1:
            raise ValueError(f"--nodes must be at least 1, not {scenario.nodes}")
        if scenario.mode != "eni":
            raise ValueError(f"scenario {scenario.name!r} is a CPU benchmark; run it with `make bench`")
    except ValueError as err:
        console.print(f"[red]cilium-ipam simulate:[/red] {err}")
        return 2
    wall = time.monotonic()
    with engine_log(args.log):
        result = run_scenario(scenario, args.seed, policies, console=console, live=not args.no_live)
    result["wall_seconds"] = time.monotonic() - wall
    console.print(summary_table(result, policies))
    console.print(calls_table(result, policies))
    console.print(
        f"wall time {result['wall_seconds']:.1f}s, CPU per policy: "
        + ", ".join(f"{p} {s:.1f}s" for p, s in result["cpu_seconds"].items())
    )
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1))
        console.print(f"report written to {args.json}")
    if args.plot is not None:
        from reconciler.sim.plot import plot_pods_with_ip

        console.print(f"plot written to {plot_pods_with_ip(result, args.plot)}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cilium-ipam simulate", description=__doc__)
    add_simulate_arguments(parser)
    return run_simulate(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
