"""How per-node work is run: sequentially (simulator, tests) or on a bounded thread pool (operator).

`--parallel-alloc-workers` bounds how many nodes are worked on at once. The engine only needs
`map(fn, items) -> results in order`, so the simulator can plug in its own strategy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class Runner(Protocol):
    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]: ...


class SequentialRunner:
    """One node after the other; deterministic."""

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        return [fn(item) for item in items]


class ThreadPoolRunner:
    """At most `workers` nodes at once (`--parallel-alloc-workers`); results in input order."""

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise ValueError("a thread pool needs at least one worker")
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="eni-alloc")

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        return list(self._pool.map(fn, items))

    def close(self) -> None:
        self._pool.shutdown(wait=True)
