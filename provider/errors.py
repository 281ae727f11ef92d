"""User-caused provider errors: one sentence naming the object and the fix, never a traceback.

Why: the Python dynamic-provider host (`python -m pulumi.dynamic`) reports every exception from a
CRUD method as `traceback.format_exc()`, so the CLI would show our stack frames above the sentence.
`user_facing` lets a `ProviderError` through as just `ProviderError: <sentence>`: inside that host
process only, it sets `sys.tracebacklimit = 0` for the report (format_exc honours it) and restores
the previous limit on the next call, so unexpected bugs keep their full traceback.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")
DYNAMIC_HOST_MODULE = "pulumi.dynamic.__main__"
_UNSET = object()
_saved_limit: list[object] = []  # previous sys.tracebacklimit values, or _UNSET when it had none


class ProviderError(RuntimeError):
    """An error the user can fix (bad input, refused change, missing prerequisite)."""


def in_dynamic_provider_host() -> bool:
    """True inside the process Pulumi starts to run dynamic providers."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    return getattr(spec, "name", "") == DYNAMIC_HOST_MODULE


def _restore_limit() -> None:
    while _saved_limit:
        previous = _saved_limit.pop()
        if isinstance(previous, int) or previous is None:
            sys.tracebacklimit = previous
        else:  # _UNSET
            sys.__dict__.pop("tracebacklimit", None)


def user_facing(method: Callable[P, R]) -> Callable[P, R]:
    """Decorate a CRUD method so a ProviderError reaches the CLI as its sentence alone."""

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        _restore_limit()
        try:
            return method(*args, **kwargs)
        except ProviderError as error:
            if in_dynamic_provider_host():
                _saved_limit.append(sys.__dict__.get("tracebacklimit", _UNSET))
                sys.tracebacklimit = 0
            raise error.with_traceback(None) from None

    return wrapper
