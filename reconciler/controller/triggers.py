"""Per-node triggers with a minimum interval (Cilium: 10 ms), and a fixed-interval schedule.

A burst of events for one node (agent writes, our own status write echoing back, pod churn)
coalesces into one pass over that node, while a quiet node is handled at once.
"""

from __future__ import annotations

import threading

from reconciler.clock import Clock

NODE_TRIGGER_MIN_INTERVAL = 0.010
SCAN_INTERVAL = 60.0


class NodeTriggers:
    def __init__(self, clock: Clock, min_interval: float = NODE_TRIGGER_MIN_INTERVAL) -> None:
        self._clock = clock
        self._min_interval = min_interval
        self._fired: set[str] = set()
        self._last_run: dict[str, float] = {}
        self._lock = threading.Lock()

    def fire(self, name: str) -> None:
        with self._lock:
            self._fired.add(name)

    def pending(self) -> int:
        with self._lock:
            return len(self._fired)

    def due(self) -> list[str]:
        """Fired names whose last run is at least `min_interval` ago; they count as run now."""
        now = self._clock.now()
        with self._lock:
            ready = sorted(
                n for n in self._fired if now - self._last_run.get(n, float("-inf")) >= self._min_interval
            )
            for name in ready:
                self._fired.discard(name)
                self._last_run[name] = now
            return ready

    def next_due_in(self) -> float | None:
        """Seconds until the earliest fired name may run (0 = now), None when nothing fired."""
        now = self._clock.now()
        with self._lock:
            if not self._fired:
                return None
            return max(
                0.0,
                min(self._last_run.get(n, float("-inf")) + self._min_interval - now for n in self._fired),
            )

    def forget(self, name: str) -> None:
        with self._lock:
            self._fired.discard(name)
            self._last_run.pop(name, None)

    def clear(self) -> None:
        with self._lock:
            self._fired.clear()


class Every:
    """Due at start, then every `interval` seconds of the clock."""

    def __init__(self, clock: Clock, interval: float) -> None:
        self._clock = clock
        self.interval = interval
        self._next: float | None = None

    def due(self) -> bool:
        now = self._clock.now()
        if self._next is None or now >= self._next:
            self._next = now + self.interval
            return True
        return False

    def reset(self) -> None:
        self._next = None
