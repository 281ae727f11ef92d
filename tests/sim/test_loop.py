"""The event loop orders callbacks by simulated time, ties by scheduling order, and never sleeps."""

from __future__ import annotations

from reconciler.sim.loop import EventLoop


def test_events_run_in_time_order_ties_in_schedule_order() -> None:
    loop = EventLoop(seed=1)
    seen: list[tuple[float, str]] = []
    for name, when in [("c", 3.0), ("a", 1.0), ("b1", 2.0), ("b2", 2.0)]:
        loop.at(when, lambda n=name: seen.append((loop.now(), n)))
    loop.run_until(10.0)
    assert seen == [(1.0, "a"), (2.0, "b1"), (2.0, "b2"), (3.0, "c")]
    assert loop.now() == 10.0


def test_cancel_and_periodic_events() -> None:
    loop = EventLoop()
    ticks: list[float] = []
    loop.every(1.5, lambda: ticks.append(loop.now()))
    handle = loop.after(2.0, lambda: ticks.append(-1.0))
    loop.cancel(handle)
    loop.run_until(6.0)
    assert ticks == [1.5, 3.0, 4.5, 6.0]


def test_run_until_stops_early_on_predicate() -> None:
    loop = EventLoop()
    done: list[int] = []
    for i in range(5):
        loop.at(float(i), done.append, i)
    reached = loop.run_until(100.0, stop=lambda: len(done) == 3)
    assert reached == 2.0 and loop.pending() == 2


def test_same_seed_same_random_schedule() -> None:
    def trace(seed: int) -> list[float]:
        loop = EventLoop(seed=seed)
        out: list[float] = []
        for _ in range(20):
            loop.after(loop.rng.uniform(0, 10), lambda: out.append(loop.now()))
        loop.run_until(20)
        return out

    assert trace(7) == trace(7) and trace(7) != trace(8)
