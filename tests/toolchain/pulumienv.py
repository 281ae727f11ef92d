"""The real Pulumi engine for tests: the built CLI on a local file backend, offline.

Everything the CLI writes (state, PULUMI_HOME) lives in a temp dir; plugin downloads are disabled,
so only the binaries in the toolchain cache (pulumi, our Python language host, the dynamic provider
shim) and the project venv's Python are used.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from . import locate

DEFAULT_TIMEOUT_SECONDS = 600
TEST_PASSPHRASE = "cilium-ipam-tests"


class PulumiCommandFailed(RuntimeError):
    """A `pulumi` command exited non-zero; the message carries the command and its output."""

    def __init__(self, result: subprocess.CompletedProcess[str]) -> None:
        self.result = result
        super().__init__(
            f"`{' '.join(result.args)}` exited {result.returncode}\n"
            f"--- stdout ---\n{result.stdout[-6000:]}\n--- stderr ---\n{result.stderr[-6000:]}"
        )


def engine_env(workdir: Path, base: dict[str, str] | None = None) -> dict[str, str]:
    """Environment for running the CLI offline on a `file://` backend under `workdir`."""
    pulumi = locate.pulumi_cli()
    language_host = locate.require(locate.PULUMI_LANGUAGE_PYTHON)
    python = locate.project_python()
    env = dict(os.environ if base is None else base)
    for key in [k for k in env if k.startswith("PULUMI_")]:
        del env[key]
    backend = workdir / "backend"
    home = workdir / "home"
    backend.mkdir(parents=True, exist_ok=True)
    home.mkdir(parents=True, exist_ok=True)
    path_dirs = dict.fromkeys([str(pulumi.parent), str(language_host.parent), str(python.parent)])
    env.update(
        PATH=os.pathsep.join([*path_dirs, env.get("PATH", "")]),
        PULUMI_BACKEND_URL=backend.as_uri(),
        PULUMI_HOME=str(home),
        PULUMI_CONFIG_PASSPHRASE=TEST_PASSPHRASE,
        PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION="true",
        PULUMI_SKIP_UPDATE_CHECK="true",
        PULUMI_SKIP_CONFIRMATIONS="true",
        PULUMI_SELF_MANAGED_STATE_NO_LEGACY_WARNING="true",
        PULUMI_DIY_BACKEND_NO_LEGACY_WARNING="true",
        PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK="true",
        CILIUM_IPAM_PYTHON=str(python),
        NO_COLOR="1",
    )
    return env


@dataclass(frozen=True)
class PulumiEngine:
    """The CLI plus its environment; `run` executes `pulumi ARGS` in a project directory."""

    pulumi: Path
    env: dict[str, str]
    workdir: Path

    def run(
        self,
        args: Sequence[str],
        cwd: Path | str,
        check: bool = True,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        extra_env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        env = {**self.env, **(extra_env or {})}
        result = subprocess.run(
            [str(self.pulumi), *args],
            cwd=str(cwd),
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if check and result.returncode != 0:
            raise PulumiCommandFailed(result)
        return result


def make_engine(workdir: Path) -> PulumiEngine:
    return PulumiEngine(pulumi=locate.pulumi_cli(), env=engine_env(workdir), workdir=workdir)
