"""Parallel operator workers in simulated time, without threads.

The engine does per-node work through `Runner.map(fn, nodes)` (reconciler.eni.runner) with
synchronous EC2 calls. Real Cilium runs up to `--parallel-alloc-workers` nodes at once, each worker
living through its own calls' latencies and rate-limiter waits. `VirtualWorkers` reproduces that
deterministically: it runs nodes one after the other, but each on a worker with its own timeline;
`WorkerClock` is the clock the engine, its rate limiter and the simulated EC2 read, and it tells the
time of the worker that is running. `sleep` (EC2 latency, client limiter waits) moves only that
worker. A map returns when its last worker is done, as the real pool does.

Approximation: token buckets only refill forward, so two workers' overlapping timelines share tokens
as if their calls were interleaved in issue order; the total calls admitted per unit of time is
exact, the interleaving is not.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from typing import TypeVar

from reconciler.clock import SimClock

T = TypeVar("T")
R = TypeVar("R")


class WorkerClock:
    """`now()` = the base clock while no map runs, else the running worker's own time."""

    def __init__(self, base: SimClock) -> None:
        self.base = base
        self._worker_time: float | None = None

    def now(self) -> float:
        return self.base.now() if self._worker_time is None else self._worker_time

    def sleep(self, seconds: float) -> None:
        """Live through `seconds`: only the running worker's timeline moves (outside a map: the base)."""
        if seconds <= 0:
            return
        if self._worker_time is None:
            self.base.advance(seconds)
        else:
            self._worker_time += seconds

    def enter(self, at: float) -> None:
        self._worker_time = at

    def leave(self) -> float:
        assert self._worker_time is not None
        t, self._worker_time = self._worker_time, None
        return t


class VirtualWorkers:
    """A `Runner` with `workers` simulated workers; records when each item finished."""

    def __init__(self, clock: WorkerClock, workers: int) -> None:
        if workers < 1:
            raise ValueError("--parallel-alloc-workers must be >= 1")
        self.clock = clock
        self.workers = workers
        self.last_end = clock.base.now()
        self.finished_at: list[float] = []
        self.on_item_done: Callable[[object, float], None] | None = None

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        start = self.clock.now()
        free = [start] * min(self.workers, max(len(items), 1))
        heapq.heapify(free)
        results: list[R] = []
        self.finished_at = []
        end = start
        for item in items:
            at = heapq.heappop(free)
            self.clock.enter(at)
            try:
                results.append(fn(item))
            finally:
                done = self.clock.leave()
            heapq.heappush(free, done)
            self.finished_at.append(done)
            end = max(end, done)
            if self.on_item_done is not None:
                self.on_item_done(item, done)
        self.last_end = end
        return results
