"""Structured logging for the ENI engine: one event per line, `key=value`, stable key order.

The format lives in reconciler/logfmt.py, shared with the controller, so a grep for
`node=ip-10-0-1-5` or `action=create` finds every line about it from either component.
"""

from __future__ import annotations

import logging
from typing import Any

from reconciler import logfmt
from reconciler.logfmt import format_event

__all__ = ["LOGGER", "format_event", "log_event"]

LOGGER = logging.getLogger("reconciler.eni")


def log_event(event: str, level: int = logging.INFO, **fields: Any) -> None:
    """Log one ENI engine event on the `reconciler.eni` logger."""
    logfmt.log_event(LOGGER, event, level, **fields)
