"""Simulated parallel workers: each node's latency lands on its own worker's timeline."""

from __future__ import annotations

from reconciler.clock import SimClock
from reconciler.sim.parallel import VirtualWorkers, WorkerClock


def test_workers_overlap_and_map_ends_with_the_slowest_worker() -> None:
    clock = WorkerClock(SimClock(10.0))
    pool = VirtualWorkers(clock, workers=2)
    seen: list[tuple[str, float]] = []

    def work(item: tuple[str, float]) -> str:
        seen.append((item[0], clock.now()))
        clock.sleep(item[1])
        return item[0]

    out = pool.map(work, [("a", 3.0), ("b", 1.0), ("c", 1.0), ("d", 5.0)])
    assert out == ["a", "b", "c", "d"]
    # a and b start together; c takes b's worker at 11; d takes c's worker at 12 (a is busy to 13)
    assert seen == [("a", 10.0), ("b", 10.0), ("c", 11.0), ("d", 12.0)]
    assert pool.finished_at == [13.0, 11.0, 12.0, 17.0] and pool.last_end == 17.0
    assert clock.now() == 10.0  # the base clock is untouched; the caller schedules the end


def test_sleep_outside_a_map_moves_the_base_clock() -> None:
    base = SimClock()
    clock = WorkerClock(base)
    clock.sleep(2.5)
    assert base.now() == 2.5


def test_a_worker_that_maps_waits_for_the_pool() -> None:
    clock = WorkerClock(SimClock())
    pool = VirtualWorkers(clock, workers=4)
    clock.enter(1.0)
    clock.sleep(0.5)  # the operator loop's own work, e.g. a cache refresh
    pool.map(lambda d: clock.sleep(d), [2.0, 3.0])
    assert clock.leave() == 4.5
