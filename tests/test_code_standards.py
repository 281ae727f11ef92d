"""The code standards of DESIGN.md (Conventions) hold, so they cannot quietly erode.

- `ruff check` (rules in pyproject.toml [tool.ruff]) is clean on every Python directory.
- `mypy --strict` (pyproject.toml [tool.mypy]) is clean on the packages in MYPY_STRICT_CLEAN.
  A package joins the list once it passes; the list is the only place that names them (the
  Makefile's `lint` target runs this test).

mypy runs with --follow-imports=silent: modules outside the list that a listed one imports are
still analysed for their types, but their own errors are not reported here.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

RUFF_PATHS = ("provider", "reconciler", "policies", "stacks", "tests", "bench")

MYPY_STRICT_CLEAN = (
    "provider",
    "policies",
    "stacks",
    "reconciler/__init__.py",
    "reconciler/agent",
    "reconciler/cidr.py",
    "reconciler/cli.py",
    "reconciler/clock.py",
    "reconciler/cluster",
    "reconciler/controller",
    "reconciler/crds",
    "reconciler/ec2",
    "reconciler/model.py",
    "reconciler/multipool",
)

# A cold mypy cache takes minutes (pulumi_aws and pulumi_kubernetes are large); warm runs take seconds.
TOOL_TIMEOUT_S = 840


def run_tool(*argv: str) -> subprocess.CompletedProcess[str]:
    """Run a tool from this venv at the repository root, where it finds pyproject.toml."""
    return subprocess.run(
        [sys.executable, "-m", *argv],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=TOOL_TIMEOUT_S,
        check=False,
    )


def test_ruff_check_is_clean_everywhere() -> None:
    result = run_tool("ruff", "check", "--no-cache", *RUFF_PATHS)
    assert result.returncode == 0, f"ruff check found problems:\n{result.stdout}{result.stderr}"


def test_mypy_strict_is_clean_on_finished_packages() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["mypy"]
    assert config.get("strict") is True, "pyproject.toml [tool.mypy] must keep strict = true"
    result = run_tool(
        "mypy", "--config-file", "pyproject.toml", "--follow-imports=silent", *MYPY_STRICT_CLEAN
    )
    assert result.returncode == 0, f"mypy --strict found problems:\n{result.stdout}{result.stderr}"
    assert "Success" in result.stdout, result.stdout
