"""One `key=value` line per event, shared by the controller and the ENI engine (DESIGN.md logging).

Why one module: operators grep both components' lines the same way (`grep node=ip-10-0-1-5`), so the
key order and the quoting must not drift apart. The keys an operator greps for come first (node, eni,
subnet, action, reason), the rest follow sorted; fields whose value is None are left out.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

FIRST_KEYS = ("node", "eni", "subnet", "action", "reason")


def quote(value: Any) -> str:
    """The value as one token: quoted (with \\, " and newlines escaped) when empty or it has spaces or =."""
    text = str(value)
    if text == "" or any(c in text for c in ' "=\t\n'):
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    return text


def format_event(event: str, fields: Mapping[str, Any]) -> str:
    """`event=<event>` then the non-None fields, the well-known keys first."""
    present = {k: v for k, v in fields.items() if v is not None}
    ordered = [k for k in FIRST_KEYS if k in present] + sorted(k for k in present if k not in FIRST_KEYS)
    return " ".join([f"event={quote(event)}"] + [f"{k}={quote(present[k])}" for k in ordered])


def log_event(logger: logging.Logger, event: str, level: int = logging.INFO, **fields: Any) -> None:
    """Log one event line on `logger`, building it only when the level is enabled."""
    if logger.isEnabledFor(level):
        logger.log(level, format_event(event, fields))
