"""Time as a port: wall time in production, a simulated clock in tests, the simulator and benchmarks.

Every component that waits, rate-limits or delays (cache refresh, release delay, token buckets, GC
grace, eventual consistency) reads time through `Clock`, so tests never sleep (DESIGN.md).
"""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Seconds since an arbitrary epoch; monotonic."""
        ...


class WallClock:
    """Real monotonic time for the deployed operator."""

    def now(self) -> float:
        return time.monotonic()


class SimClock:
    """Deterministic time that only moves when told to."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError(f"a simulated clock cannot go back ({seconds} s)")
        self._now += seconds

    def advance_to(self, when: float) -> None:
        if when > self._now:
            self._now = when
