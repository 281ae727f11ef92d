"""The live `rich` view of a running simulation and the final summary table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from reconciler.sim.metrics import Metrics


def _fmt(value: Any, percent: bool = False) -> str:
    if value is None:
        return "-"
    if percent:
        return f"{float(value):.2%}"
    if isinstance(value, float):
        return f"{value:,.2f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def live_panel(title: str, now: float, nodes_total: int, nodes_ready: int, ips: int, m: Metrics) -> Group:
    """One refresh of the live view: cluster state on the left, EC2 calls by action on the right."""
    state = Table(title=f"{title}  t={now:,.0f}s (simulated)", show_header=False, min_width=40)
    state.add_row("nodes ready", f"{nodes_ready:,} / {nodes_total:,}")
    state.add_row("pods with an IP", f"{m.pods_with_ip:,} / {m.pods:,}")
    state.add_row("pods waiting", f"{m.pods_waiting:,}  (oldest {m.oldest_wait(now):.1f}s)")
    state.add_row("IPs allocated", f"{ips:,}")
    state.add_row("throttled calls", f"{sum(m.throttled.values()):,}")
    calls = Table(title="EC2 calls", min_width=40)
    calls.add_column("action")
    calls.add_column("calls", justify="right")
    calls.add_column("throttled", justify="right")
    for action, n in sorted(m.calls.items()):
        calls.add_row(action, f"{n:,}", f"{m.throttled[action]:,}")
    grid = Table.grid(padding=2)
    grid.add_row(state, calls)
    return Group(grid)


def summary_table(report: Mapping[str, Any], policies: Sequence[str]) -> Table:
    """Each figure next to its target, every policy's value and the lower bound."""
    sc = report["scenario"]
    table = Table(title=f"{sc['name']} ({sc['nodes']:,} nodes, seed {report['seed']}): {sc['description']}")
    table.add_column("figure")
    table.add_column("target", justify="right")
    for p in policies:
        table.add_column(p, justify="right")
    table.add_column("lower bound", justify="right")
    table.add_column("met", justify="center")
    for f in report["figures"]:
        met = f["met"]
        mark = Text(
            "-" if met is None else ("yes" if met else "NO"),
            style="" if met is None else ("green" if met else "red"),
        )
        pct = "share" in f["figure"]
        table.add_row(
            f["figure"],
            _fmt(f["target"], pct),
            *(_fmt(f["values"].get(p), pct) for p in policies),
            _fmt(f["lower_bound"], pct),
            mark,
        )
    return table


def calls_table(report: Mapping[str, Any], policies: Sequence[str]) -> Table:
    table = Table(title="EC2 calls by action")
    table.add_column("action")
    for p in policies:
        table.add_column(p, justify="right")
    table.add_column("minimum", justify="right")
    bound = (report.get("lower_bound") or {}).get("calls_by_action", {})
    actions = sorted({a for p in policies for a in report["policies"][p]["ec2_calls_by_action"]} | set(bound))
    for a in actions:
        table.add_row(
            a,
            *(_fmt(report["policies"][p]["ec2_calls_by_action"].get(a, 0)) for p in policies),
            _fmt(bound.get(a)),
        )
    return table
