"""Helpers for the raw property bags a dynamic provider receives.

Why: the engine hands providers plain dicts that also carry the pickled provider under `__provider`,
and during preview any value may be the SDK's UNKNOWN sentinel. Every provider strips the former and
tolerates the latter the same way, through these functions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pulumi.runtime.rpc import UNKNOWN

__all__ = ["UNKNOWN", "is_unknown", "user_props", "changed_keys", "string_map_errors", "whole_numbers"]


def is_unknown(value: Any) -> bool:
    """True when `value` (or anything nested in it) is not known yet (preview).

    The dynamic-provider host turns the engine's UNKNOWN string into `pulumi.output.Unknown()`
    objects (Check/Diff deserialize with keep_unknowns=True) and may hand over `Output` values; the
    raw string is accepted too, for callers that pass engine values through untouched.
    """
    from pulumi.output import Output, Unknown

    if isinstance(value, Unknown | Output):
        return True
    if isinstance(value, str):
        return value == UNKNOWN
    if isinstance(value, Mapping):
        return any(is_unknown(k) or is_unknown(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(is_unknown(v) for v in value)
    return False


def user_props(props: Mapping[str, Any] | None) -> dict[str, Any]:
    """The user's properties: engine-reserved keys (`__provider`, ...) removed, 24.0 read as 24."""
    return {k: whole_numbers(v) for k, v in (props or {}).items() if not k.startswith("__")}


def whole_numbers(value: Any) -> Any:
    """`value` with every integral float turned into an int, recursively.

    Why: the engine carries numbers as protobuf doubles, so a `maskSize` of 24 arrives as 24.0; every
    number these providers take is a whole number, and a non-integral one stays a float to be refused.
    """
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {k: whole_numbers(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [whole_numbers(v) for v in value]
    return value


def changed_keys(olds: Mapping[str, Any], news: Mapping[str, Any], keys: Iterable[str]) -> list[str]:
    """Which of `keys` differ between the old and new property bags (unknown counts as changed)."""
    return [k for k in keys if is_unknown(news.get(k)) or olds.get(k) != news.get(k)]


def string_map_errors(value: Any, what: str) -> str | None:
    """A reason why `value` is not a string -> string map, or None when it is one (or unknown)."""
    if value is None or is_unknown(value):
        return None
    if not isinstance(value, Mapping):
        return f"{what} must be a map of strings, got {type(value).__name__}."
    for key, item in value.items():
        if not isinstance(key, str) or not key:
            return f"{what} has an empty or non-string key {key!r}."
        if not isinstance(item, str) and not is_unknown(item):
            return f"{what}[{key!r}] must be a string, got {type(item).__name__}."
    return None
