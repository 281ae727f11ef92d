"""Structured controller logs: one event per line, `event=... node=... key=value` (DESIGN.md).

The keys an operator greps for come first (node, eni, subnet, action, reason), like the ENI
engine's lines, so `grep node=ip-10-0-1-5` finds both.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

_FIRST = ("node", "eni", "subnet", "action", "reason")


def _quote(value: Any) -> str:
    text = str(value)
    if text == "" or any(c in text for c in ' "=\t\n'):
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    return text


def line(event: str, **fields: Any) -> str:
    present = {k: v for k, v in fields.items() if v is not None}
    ordered = [k for k in _FIRST if k in present] + sorted(k for k in present if k not in _FIRST)
    return " ".join([f"event={_quote(event)}"] + [f"{k}={_quote(present[k])}" for k in ordered])


def log_event(logger: logging.Logger, event: str, level: int = logging.INFO, **fields: Any) -> None:
    if logger.isEnabledFor(level):
        logger.log(level, line(event, **fields))


def configure(level: str = "info") -> None:
    """Process-wide: `time level logger message` on stderr, one line per event."""
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, level.upper(), logging.INFO),
        format="time=%(asctime)s level=%(levelname)s logger=%(name)s %(message)s",
        force=True,
    )
