"""EC2 describe filters for the simulator: OR within a name, AND across names, `*`/`?` wildcards.

Each resource exposes its filterable attributes as `{name: [values]}`; `tag:<key>` and `tag-key`
come from its tags. A filter name the action does not support is rejected with InvalidParameterValue
(as EC2 does), so a typo in the operator fails loudly in tests instead of matching everything.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fnmatch import fnmatchcase

from reconciler.ec2.api import SUPPORTED_FILTERS, Filters, InvalidParameter

Attributes = Mapping[str, Sequence[str]]


def check_filters(action: str, filters: Filters | None) -> None:
    allowed = SUPPORTED_FILTERS.get(action, frozenset())
    for name in filters or {}:
        if name in allowed or (name.startswith("tag:") and "tag:*" in allowed):
            continue
        raise InvalidParameter(
            f"The filter '{name}' is invalid for {action}; use one of {sorted(allowed)}.",
            code="InvalidParameterValue",
            action=action,
        )


def _any_match(patterns: Iterable[str], values: Iterable[str]) -> bool:
    values = list(values)
    return any(fnmatchcase(value, pattern) for pattern in patterns for value in values)


def matches(filters: Filters | None, attributes: Attributes, tags: Mapping[str, str]) -> bool:
    for name, patterns in (filters or {}).items():
        if name.startswith("tag:"):
            key = name[4:]
            values: Sequence[str] = [tags[key]] if key in tags else []
        elif name == "tag-key":
            values = list(tags)
        else:
            values = attributes.get(name, ())
        if not _any_match(patterns, values):
            return False
    return True
