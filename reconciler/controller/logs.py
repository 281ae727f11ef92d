"""Structured controller logs: one event per line, `event=... node=... key=value` (DESIGN.md).

The line format lives in reconciler/logfmt.py, shared with the ENI engine, so
`grep node=ip-10-0-1-5` finds both; `log_event(logger, event, level, **fields)` is re-exported here.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from reconciler.logfmt import format_event, log_event

__all__ = ["configure", "line", "log_event"]


def line(event: str, **fields: Any) -> str:
    """One controller event as a `key=value` line (the format shared with the ENI engine)."""
    return format_event(event, fields)


def configure(level: str = "info") -> None:
    """Process-wide: `time level logger message` on stderr, one line per event."""
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, level.upper(), logging.INFO),
        format="time=%(asctime)s level=%(levelname)s logger=%(name)s %(message)s",
        force=True,
    )
