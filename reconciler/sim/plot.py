"""The bench plot: pods with an IP over simulated time, one line per policy (matplotlib, Agg)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any


def plot_pods_with_ip(report: Mapping[str, Any], out: Path) -> Path:
    """Write a PNG to `out`; the lower bound (when known) is a vertical line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 5), dpi=100)
    for policy, series in report["series"].items():
        if series:
            ax.plot([s["t"] for s in series], [s["pods_with_ip"] for s in series], label=policy)
    bound = (report.get("lower_bound") or {}).get("seconds")
    if bound:
        ax.axvline(bound, linestyle="--", color="grey", label=f"lower bound ({bound:.0f}s)")
    sc = report["scenario"]
    ax.set_title(f"{sc['name']}: pods with an IP over simulated time")
    ax.set_xlabel("simulated seconds")
    ax.set_ylabel("pods with an IP")
    ax.legend()
    ax.grid(True, alpha=0.3)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    plt.close(fig)
    return out
