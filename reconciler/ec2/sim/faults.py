"""Fault injection for the simulator (EC2-SIM-6): scripted errors and per-action error rates.

Faults fire before the call takes effect (`phase="before"`), or after it took effect
(`phase="after"`: the change happened but the caller sees an error, as when a response is lost) --
the latter is what makes ClientToken idempotency and retry logic testable.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass
from typing import Literal

Phase = Literal["before", "after"]


@dataclass(frozen=True)
class ScriptedFault:
    action: str | None  # None = the next call of any action
    code: str
    phase: Phase = "before"


@dataclass(frozen=True)
class ErrorRate:
    rate: float
    code: str = "InternalError"


class FaultInjector:
    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._script: deque[ScriptedFault] = deque()
        self._rates: dict[str, ErrorRate] = {}

    def script(
        self, code: str, *, action: str | None = None, times: int = 1, phase: Phase = "before"
    ) -> None:
        """Queue `times` errors with `code` for the next matching calls, in order."""
        self._script.extend(ScriptedFault(action, code, phase) for _ in range(times))

    def set_error_rate(self, action: str, rate: float, code: str = "InternalError") -> None:
        """Fail a fraction `rate` of `action` calls ("*" = every action) with `code`, before effect."""
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"an error rate is between 0 and 1, not {rate}")
        self._rates[action] = ErrorRate(rate, code)

    def clear(self) -> None:
        self._script.clear()
        self._rates.clear()

    @property
    def pending(self) -> int:
        return len(self._script)

    def draw(self, action: str, phase: Phase) -> str | None:
        """The error code to raise now for this call and phase, if any (consumes scripted faults)."""
        for fault in self._script:
            if fault.action in (None, action) and fault.phase == phase:
                self._script.remove(fault)
                return fault.code
        if phase == "before":
            rate = self._rates.get(action) or self._rates.get("*")
            if rate is not None and rate.rate > 0 and self._rng.random() < rate.rate:
                return rate.code
        return None
