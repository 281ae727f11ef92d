"""A discrete-event loop on `SimClock`: a heap of timed callbacks, deterministic for a seed.

Why its own module: every simulated actor (agents, the operator, EC2 latency, churn, faults) only
schedules callbacks here, so a whole cluster runs on one thread with no sleeping, and two runs with
the same seed produce the same event order (ties break by scheduling order, never by object ids).
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable
from typing import Any

from reconciler.clock import SimClock

Callback = Callable[..., Any]


class EventLoop:
    """Runs callbacks in simulated-time order; `rng` is the only randomness actors may use."""

    def __init__(self, seed: int = 0, clock: SimClock | None = None) -> None:
        self.clock = clock if clock is not None else SimClock()
        self.rng = random.Random(seed)
        self._heap: list[tuple[float, int, Callback, tuple[Any, ...]]] = []
        self._seq = 0
        self._cancelled: set[int] = set()
        self.events_run = 0

    def now(self) -> float:
        return self.clock.now()

    def at(self, when: float, callback: Callback, *args: Any) -> int:
        """Schedule `callback(*args)` at absolute time `when` (never in the past); returns a handle."""
        self._seq += 1
        heapq.heappush(self._heap, (max(when, self.clock.now()), self._seq, callback, args))
        return self._seq

    def after(self, delay: float, callback: Callback, *args: Any) -> int:
        return self.at(self.clock.now() + max(delay, 0.0), callback, *args)

    def cancel(self, handle: int) -> None:
        self._cancelled.add(handle)

    def every(self, period: float, callback: Callback, *args: Any, first: float | None = None) -> None:
        """Run `callback` every `period` seconds (first at `first`, default one period from now)."""
        if period <= 0:
            raise ValueError(f"a periodic event needs a positive period, got {period}")

        def tick() -> None:
            callback(*args)
            self.after(period, tick)

        self.at(self.clock.now() + period if first is None else first, tick)

    def pending(self) -> int:
        return len(self._heap)

    def next_time(self) -> float | None:
        return self._heap[0][0] if self._heap else None

    def step(self) -> bool:
        """Run the earliest event; False when nothing is left."""
        while self._heap:
            when, seq, callback, args = heapq.heappop(self._heap)
            if seq in self._cancelled:
                self._cancelled.discard(seq)
                continue
            self.clock.advance_to(when)
            self.events_run += 1
            callback(*args)
            return True
        return False

    def run_until(self, until: float, stop: Callable[[], bool] | None = None) -> float:
        """Run events up to time `until` (or until `stop()` is true); returns the time reached."""
        while self._heap and self._heap[0][0] <= until:
            self.step()
            if stop is not None and stop():
                return self.clock.now()
        self.clock.advance_to(until)
        return self.clock.now()
