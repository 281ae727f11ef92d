"""User-caused provider errors: one sentence naming the object and the fix, with no deep traceback.

Why: the Python dynamic-provider host formats every exception with `traceback.format_exc()`. Errors
a user can cause are raised as `ProviderError`, and `user_facing` re-raises them with their
traceback cut at the provider boundary so the CLI shows the sentence, not our internals.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


class ProviderError(RuntimeError):
    """An error the user can fix (bad input, refused change, missing prerequisite)."""


def user_facing(method: Callable[P, R]) -> Callable[P, R]:
    """Decorate a CRUD method so a ProviderError reaches the engine without our stack frames."""

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(*args, **kwargs)
        except ProviderError as error:
            raise error.with_traceback(None) from None

    return wrapper
