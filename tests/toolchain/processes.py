"""Child processes for test servers: logs to a file, die with the test run, and explain failures."""

from __future__ import annotations

import ctypes
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path

PR_SET_PDEATHSIG = 1


class ServerFailedToStart(RuntimeError):
    """A test server exited or never became ready; the message carries its log tail."""


def free_loopback_port() -> int:
    """A TCP port that is free on 127.0.0.1 right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _die_with_parent() -> None:
    """Ask Linux to SIGTERM the child when pytest dies, so no server outlives a killed run."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:
        pass


def log_tail(log: Path, lines: int = 40) -> str:
    if not log.exists():
        return "(no log written)"
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


def start(command: Sequence[str], log: Path, cwd: Path) -> subprocess.Popen[bytes]:
    """Start `command` with stdout+stderr appended to `log`."""
    with open(log, "ab") as handle:
        return subprocess.Popen(
            list(command),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=handle,
            stderr=subprocess.STDOUT,
            preexec_fn=_die_with_parent,
        )


def stop(process: subprocess.Popen[bytes] | None, grace_seconds: float = 15.0) -> None:
    """SIGTERM, then SIGKILL after the grace period."""
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=grace_seconds)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=grace_seconds)


def wait_until(
    name: str,
    process: subprocess.Popen[bytes],
    log: Path,
    ready: Callable[[], bool],
    timeout_seconds: float,
    poll_seconds: float = 0.25,
) -> None:
    """Poll `ready()` until it is true; fail with the log tail if the process exits or time runs out.

    The pause between polls is a wait on the process itself, so an early exit is noticed at once.
    """
    deadline = time.monotonic() + timeout_seconds
    while True:
        if ready():
            return
        try:
            code = process.wait(timeout=poll_seconds)
        except subprocess.TimeoutExpired:
            code = None
        if code is not None:
            raise ServerFailedToStart(
                f"{name} exited with code {code} while starting; log tail:\n{log_tail(log)}"
            )
        if time.monotonic() > deadline:
            raise ServerFailedToStart(
                f"{name} was not ready after {timeout_seconds:.0f} s; log tail:\n{log_tail(log)}"
            )
