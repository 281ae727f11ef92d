"""`make bench`: issue 7's scenarios with baselines, JSON + PNG under bench/results/ (never fails on targets).

    python -m bench                      # everything: S1 S2 S3 (3 policies each), S4, S5, chaos
    python -m bench --only s1,s4 --seed 2
    python -m bench --scale 0.1          # the ENI scenarios with a tenth of the nodes (a quick look)

S1-S3 run the real engine with our default configuration ("ours"), the same engine with Cilium's
default limiter ("cilium-defaults", qps 4 / burst 20) and a per-node VPC-CNI model ("vpc-cni-like")
on the identical workload, next to the lower bound (reconciler.sim.lower_bound). S4 measures one full
scan of 5,000 nodes in a fresh process (for its peak RSS); S5 the multi-pool allocator for 5,000
nodes x 2 pools; "chaos" the large chaos run (reconciler.sim.chaos). Every figure is printed next
to its target and the baselines; a missed target is reported, never an error exit.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from reconciler.sim.chaos import run_chaos
from reconciler.sim.cli import POLICY_NAMES, run_scenario
from reconciler.sim.plot import plot_pods_with_ip
from reconciler.sim.scenario import SCENARIOS
from reconciler.sim.view import calls_table, summary_table

RESULTS = Path(__file__).resolve().parent / "results"
ENI_SCENARIOS = {"s1": "s1-burst", "s2": "s2-prefix", "s3": "s3-churn"}
ALL = ("s1", "s2", "s3", "s4", "s5", "chaos")


def _eni(key: str, seed: int, scale: float, console: Console, out: Path) -> dict[str, Any]:
    scenario = SCENARIOS[ENI_SCENARIOS[key]]
    if scale != 1.0:
        scenario = scenario.with_overrides(nodes=max(int(scenario.nodes * scale), 1))
    console.rule(f"{scenario.name}: {scenario.nodes} nodes")
    wall = time.monotonic()
    result = run_scenario(scenario, seed, list(POLICY_NAMES))
    result["wall_seconds"] = time.monotonic() - wall
    console.print(summary_table(result, list(POLICY_NAMES)))
    console.print(calls_table(result, list(POLICY_NAMES)))
    (out / f"{scenario.name}.json").write_text(json.dumps(result, indent=1))
    plot_pods_with_ip(result, out / f"{scenario.name}.png")
    return {"scenario": scenario.name, "figures": result["figures"], "cpu_seconds": result["cpu_seconds"]}


def _scale(console: Console, out: Path) -> dict[str, Any]:
    console.rule("s4-scale: 5,000 nodes, one full scan")
    runs = {}
    for memo in (False, True):
        cmd = [sys.executable, "-m", "bench.scale", "--json", *(["--memo"] if memo else [])]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            runs["memo" if memo else "plain"] = {"error": done.stderr.strip().splitlines()[-1:]}
            continue
        runs["memo" if memo else "plain"] = json.loads(done.stdout.strip().splitlines()[-1])
    t = SCENARIOS["s4-scale"].targets
    plain, memo = runs.get("plain", {}), runs.get("memo", {})
    figures = [
        _figure("one full scan, CPU s (median of 5)", t.scan_cpu_s, plain.get("scan_cpu_s")),
        _figure("  same, CIDR parsing memoised", t.scan_cpu_s, memo.get("scan_cpu_s")),
        _figure("peak RSS, MB", t.peak_rss_mb, plain.get("peak_rss_mb")),
    ]
    (out / "s4-scale.json").write_text(json.dumps(runs, indent=1))
    return {"scenario": "s4-scale", "figures": figures, "runs": runs}


def _multipool(console: Console, out: Path) -> dict[str, Any]:
    from bench.multipool_two import measure

    console.rule("s5-multipool: 5,000 nodes x 2 pools")
    plain = measure()
    memo = measure(memo=True)
    target = SCENARIOS["s5-multipool"].targets.allocation_cpu_s
    figures = [
        _figure("allocation CPU s (median of 5)", target, plain["allocation_cpu_s"]),
        _figure("  same, CIDR parsing memoised", target, memo["allocation_cpu_s"]),
    ]
    (out / "s5-multipool.json").write_text(json.dumps({"plain": plain, "memo": memo}, indent=1))
    return {"scenario": "s5-multipool", "figures": figures}


def _chaos(seed: int, console: Console, out: Path) -> dict[str, Any]:
    scenario = SCENARIOS["chaos"]
    console.rule(f"chaos: {scenario.description}")
    report = run_chaos(scenario, seed)
    (out / "chaos.json").write_text(json.dumps(report.to_json(), indent=1))
    figures = [
        _figure("invariant violations", 0, float(len(report.violations))),
        _figure(
            "pods all served after faults stop, s",
            2 * report.fault_free_fill_s if report.fault_free_fill_s else None,
            report.satisfied_after_faults_s,
        ),
    ]
    for v in report.violations[:10]:
        console.print(f"[red]violation[/red] {v}")
    console.print(
        f"restarts {report.restarts}, conflicts {report.conflicts}, 5xx {report.server_errors}, "
        f"throttled {report.throttled}, invariant checks {report.checks}"
    )
    return {"scenario": "chaos", "figures": figures, "report": report.to_json()}


def _figure(name: str, target: float | None, value: float | None) -> dict[str, Any]:
    met = None if target is None or value is None else value <= target
    return {"figure": name, "target": target, "values": {"ours": value}, "lower_bound": None, "met": met}


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    return f"{v:,.3f}" if isinstance(v, float) else str(v)


def summary(results: list[dict[str, Any]]) -> Table:
    table = Table(title="bench summary: every figure, its target, our value, the baselines, the bound")
    for col in ("scenario", "figure", "target", *POLICY_NAMES, "lower bound", "met"):
        table.add_column(col, justify="left" if col in ("scenario", "figure") else "right")
    for res in results:
        for f in res["figures"]:
            if f["target"] is None and f["figure"] not in (
                "time until every pod has an IP (s)",
                "mutating EC2 calls",
            ):
                continue
            met = f["met"]
            table.add_row(
                res["scenario"],
                f["figure"],
                _fmt(f["target"]),
                *(_fmt(f["values"].get(p)) for p in POLICY_NAMES),
                _fmt(f["lower_bound"]),
                "-" if met is None else ("[green]yes[/green]" if met else "[red]NO[/red]"),
            )
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(ALL), help=f"comma-separated subset of {', '.join(ALL)}")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--scale", type=float, default=1.0, help="node-count factor for S1-S3 (default 1)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    console = Console(width=None if sys.stdout.isatty() else 160)
    wanted = [w.strip() for w in args.only.split(",") if w.strip()]
    unknown = [w for w in wanted if w not in ALL]
    if unknown:
        console.print(
            f"[red]python -m bench:[/red] unknown part {unknown[0]!r}; choose from {', '.join(ALL)}"
        )
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    results: list[dict[str, Any]] = []
    for part in wanted:
        if part in ENI_SCENARIOS:
            results.append(_eni(part, args.seed, args.scale, console, args.out))
        elif part == "s4":
            results.append(_scale(console, args.out))
        elif part == "s5":
            results.append(_multipool(console, args.out))
        else:
            results.append(_chaos(args.seed, console, args.out))
        (args.out / "summary.json").write_text(json.dumps(results, indent=1))
    console.print(summary(results))
    console.print(f"results in {args.out}/ (JSON per scenario, PNG per ENI scenario, summary.json)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
