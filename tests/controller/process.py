"""Run `cilium-ipam operator` as a real subprocess and wait on the real apiserver, never on sleeps.

`eventually(check)` re-evaluates `check` after every watch round on CiliumNodes and Leases (a round
ends early on any event, else after one second): polling the apiserver with a deadline.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from reconciler.cluster.store import CILIUM_NODE, LEASE, ClusterStore

T = TypeVar("T")
CLI = Path(sys.executable).parent / "cilium-ipam"


@dataclass
class OperatorProc:
    name: str
    args: list[str]
    workdir: Path
    metrics_port: int
    health_port: int
    proc: subprocess.Popen[bytes] | None = None
    log_path: Path = field(init=False)

    def __post_init__(self) -> None:
        self.log_path = self.workdir / f"{self.name}.log"

    def start(self) -> OperatorProc:
        log = open(self.log_path, "wb")  # noqa: SIM115 - closed with the process
        self.proc = subprocess.Popen(
            [str(CLI), "operator", *self.args], stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ)
        )
        return self

    def logs(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def signal(self, sig: int) -> None:
        assert self.proc is not None
        self.proc.send_signal(sig)

    def wait(self, timeout: float) -> int:
        assert self.proc is not None
        return self.proc.wait(timeout=timeout)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)

    def get(self, port: int, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as resp:
                return resp.status, resp.read().decode()
        except urllib.error.HTTPError as err:
            return err.code, err.read().decode()
        except (urllib.error.URLError, ConnectionError):
            return 0, ""


def eventually(
    store: ClusterStore, check: Callable[[], T | None], timeout: float, what: str, namespace: str,
    logs: Callable[[], str] = lambda: "",
) -> T:
    """The first truthy `check()`, re-checked after each apiserver watch round, within `timeout` s."""
    deadline = time.monotonic() + timeout
    rv_nodes = store.list(CILIUM_NODE).resource_version
    rv_leases = store.list(LEASE, namespace).resource_version
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}\n--- operator logs ---\n"
                                 f"{logs()[-6000:]}")
        for kind, rv, ns in ((CILIUM_NODE, rv_nodes, None), (LEASE, rv_leases, namespace)):
            stream = store.watch(kind, rv, ns, timeout=1)
            try:
                for event in stream:
                    if kind is CILIUM_NODE:
                        rv_nodes = event.resource_version or rv_nodes
                    else:
                        rv_leases = event.resource_version or rv_leases
                    break
            finally:
                stream.close()
