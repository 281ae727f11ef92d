"""Structured logging for the ENI engine: one event per line, `key=value`, stable key order.

Keys the operator cares about come first (event, node, eni, subnet, action, reason) so a grep for
`node=ip-10-0-1-5` or `action=create` finds every line about it.
"""

from __future__ import annotations

import logging
from typing import Any

LOGGER = logging.getLogger("reconciler.eni")
_FIRST = ("node", "eni", "subnet", "action", "reason")


def _quote(value: Any) -> str:
    text = str(value)
    if text == "" or any(c in text for c in ' "=\t\n'):
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    return text


def format_event(event: str, fields: dict[str, Any]) -> str:
    ordered = [k for k in _FIRST if k in fields] + sorted(k for k in fields if k not in _FIRST)
    parts = [f"event={_quote(event)}"] + [
        f"{k}={_quote(fields[k])}" for k in ordered if fields[k] is not None
    ]
    return " ".join(parts)


def log_event(event: str, level: int = logging.INFO, **fields: Any) -> None:
    if LOGGER.isEnabledFor(level):
        LOGGER.log(level, format_event(event, fields))
