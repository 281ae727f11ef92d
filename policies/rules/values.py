"""Tolerant readers for property bags coming from the Pulumi engine.

Numbers arrive as floats (protobuf Struct), keys may be camelCase (Kubernetes JSON) or snake_case
(Python inputs), and preview values may be unknown. These helpers hide all three.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_policy.proxy import UnknownValueError

__all__ = ["UnknownValueError", "as_bool", "as_int", "as_list", "as_mapping", "pick"]

def pick(props: Any, *keys: str, default: Any = None) -> Any:
    """The first of `keys` present in `props` (a mapping), else `default`."""
    if not isinstance(props, Mapping):
        return default
    for key in keys:
        if key in props:
            value = props[key]
            if value is not None:
                return value
    return default


def as_mapping(value: Any) -> Mapping[str, Any]:
    """`value` if it is a mapping, else an empty one."""
    return value if isinstance(value, Mapping) else {}


def as_int(value: Any) -> int | None:
    """An integral number (floats such as 24.0 included), or None when `value` is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().removeprefix("-").isdecimal():  # exactly what int() takes
        return int(value)
    return None


def as_bool(value: Any, default: bool = False) -> bool:
    """A boolean from a bool or the strings true/false; anything else gives `default`."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return default


def as_list(value: Any) -> list[Any]:
    """The items of a list-like value (strings are not lists), else an empty list."""
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return [value[index] for index in range(len(value))]
    return []
