"""Parallel operator workers in simulated time, deterministic and exactly interleaved.

The engine does per-node work through `Runner.map(fn, nodes)` (reconciler.eni.runner) with
synchronous EC2 calls. Real Cilium runs up to `--parallel-alloc-workers` nodes at once; each worker
lives through its own calls' latencies and rate-limiter waits while the others proceed.

`VirtualWorkers.map` runs each worker on a real thread, but in lock-step: exactly one thread runs at
a time, and whenever the running one sleeps (`WorkerClock.sleep`: EC2 latency, client limiter wait)
control passes to the worker with the earliest simulated time (ties: lowest worker number). So the
calls reach EC2's token buckets in true time order, runs are reproducible, and nothing sleeps for
real. `WorkerClock.now()` tells the running worker's time. The map returns when the last worker is
done; a caller that is itself on the worker clock (the operator loop) resumes at that time.
"""

from __future__ import annotations

import heapq
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from reconciler.clock import SimClock

T = TypeVar("T")
R = TypeVar("R")

DEADLOCK_S = 60.0  # wall seconds without a yield: a worker blocked on a real lock


class OperatorKilled(BaseException):
    """The simulated operator process died (chaos): raised from inside whatever it was doing.

    A BaseException so the engine's own error handling cannot swallow it, just as code cannot
    catch SIGKILL; effects applied before the kill time stay, nothing after it happens.
    """


class WorkerClock:
    """`now()` = the base clock, or the running worker's own time while a worker runs.

    `deadline`: when set, any sleep that would pass it raises `OperatorKilled` (chaos restarts).
    """

    def __init__(self, base: SimClock) -> None:
        self.base = base
        self._worker_time: float | None = None
        self._local = threading.local()
        self.deadline: float | None = None

    def now(self) -> float:
        return self.base.now() if self._worker_time is None else self._worker_time

    @property
    def worker_time(self) -> float | None:
        return self._worker_time

    def sleep(self, seconds: float) -> None:
        """Live through `seconds`: only the running worker's timeline moves (outside: the base)."""
        if seconds <= 0:
            return
        if self.deadline is not None and self.now() + seconds > self.deadline:
            raise OperatorKilled(f"operator killed at t={self.deadline:.1f}s")
        switch: Callable[[float], None] | None = getattr(self._local, "switch", None)
        if switch is not None:
            switch(seconds)
        elif self._worker_time is None:
            self.base.advance(seconds)
        else:
            self._worker_time += seconds

    def enter(self, at: float) -> None:
        self._worker_time = at

    def leave(self) -> float:
        assert self._worker_time is not None
        t, self._worker_time = self._worker_time, None
        return t


class _Worker:
    def __init__(self, number: int) -> None:
        self.number = number
        self.go = threading.Event()
        self.time = 0.0
        self.done = False


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
        """Run `fn` over `items` on the workers; results in input order."""
        outer = self.clock.worker_time
        start = self.clock.now()
        self.finished_at = [start] * len(items)
        if not items:
            return []
        results: list[Any] = [None] * len(items)
        errors: list[BaseException] = []
        next_item = [0]
        ready: list[tuple[float, int]] = []
        yielded = threading.Event()
        crew = [_Worker(i) for i in range(min(self.workers, len(items)))]
        clock = self.clock

        def park(worker: _Worker) -> None:
            heapq.heappush(ready, (worker.time, worker.number))
            yielded.set()
            worker.go.wait()
            worker.go.clear()

        def body(worker: _Worker) -> None:
            def switch(seconds: float) -> None:
                worker.time += seconds
                park(worker)

            clock._local.switch = switch
            worker.go.wait()
            worker.go.clear()
            try:
                while next_item[0] < len(items) and not errors:
                    i = next_item[0]
                    next_item[0] += 1
                    try:
                        results[i] = fn(items[i])
                    except BaseException as err:  # surfaced to the caller of map
                        errors.append(err)
                    self.finished_at[i] = worker.time
                    if self.on_item_done is not None:
                        self.on_item_done(items[i], worker.time)
            finally:
                worker.done = True
                yielded.set()

        threads = [threading.Thread(target=body, args=(w,), daemon=True) for w in crew]
        for w, th in zip(crew, threads, strict=True):
            w.time = start
            heapq.heappush(ready, (start, w.number))
            th.start()
        try:
            while ready:
                t, number = heapq.heappop(ready)
                worker = crew[number]
                clock.enter(t)
                yielded.clear()
                worker.go.set()
                if not yielded.wait(DEADLOCK_S):
                    raise RuntimeError(
                        "a simulated operator worker blocked on a real lock while another held it; "
                        "the engine must not hold a lock across an EC2 call"
                    )
        finally:
            clock.leave()
            for th in threads:
                th.join(timeout=1.0)
        killed = [e for e in errors if isinstance(e, OperatorKilled)]
        if killed or errors:
            if outer is not None:
                clock.enter(max(self.finished_at))
            raise (killed or errors)[0]
        end = max(self.finished_at)
        self.last_end = end
        if outer is not None:
            clock.enter(end)
        return results
