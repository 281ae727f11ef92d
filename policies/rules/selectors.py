"""Can two Kubernetes label selectors match the same node?  (Needed to flag CiliumNodeConfigs.)

A selector is a conjunction of per-key requirements, so two selectors can select a common node
exactly when the union of their requirements is satisfiable key by key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .values import as_list, as_mapping, pick


@dataclass
class KeyConstraint:
    """Everything required of one label key: allowed values (None = any), forbidden ones, presence."""

    allowed: set[str] | None = None
    forbidden: set[str] = field(default_factory=set)
    must_exist: bool = False
    must_not_exist: bool = False

    def allow_only(self, values: set[str]) -> None:
        self.allowed = values if self.allowed is None else self.allowed & values
        self.must_exist = True

    def example(self) -> str | None | bool:
        """A value meeting the constraint (None = key absent), or False when none exists."""
        if self.must_exist and self.must_not_exist:
            return False
        if self.allowed is not None:
            candidates = sorted(self.allowed - self.forbidden)
            return candidates[0] if candidates else False
        if not self.must_exist:
            return None
        fresh = "x"
        while fresh in self.forbidden:
            fresh += "x"
        return fresh


class UnsupportedSelector(ValueError):
    """A selector uses an operator this module does not understand."""


def requirements(selector: Mapping[str, Any]) -> list[tuple[str, str, set[str]]]:
    """A selector as (key, operator, values) triples; matchLabels become `In` with one value."""
    reqs = [(str(k), "In", {str(v)}) for k, v in as_mapping(pick(selector, "matchLabels")).items()]
    for expression in as_list(pick(selector, "matchExpressions")):
        expression = as_mapping(expression)
        operator = str(expression.get("operator", ""))
        if operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
            raise UnsupportedSelector(f"operator {operator!r}")
        values = {str(v) for v in as_list(expression.get("values"))}
        reqs.append((str(expression.get("key", "")), operator, values))
    return reqs


def can_overlap(first: Mapping[str, Any], second: Mapping[str, Any]) -> bool:
    """True when some label set satisfies both selectors (an empty selector matches every node)."""
    return common_labels(first, second) is not None


def common_labels(first: Mapping[str, Any], second: Mapping[str, Any]) -> dict[str, str] | None:
    """A node label set both selectors match, or None when they can never match the same node."""
    constraints: dict[str, KeyConstraint] = {}
    for key, operator, values in requirements(first) + requirements(second):
        constraint = constraints.setdefault(key, KeyConstraint())
        if operator == "In":
            constraint.allow_only(values)
        elif operator == "NotIn":
            constraint.forbidden |= values
        elif operator == "Exists":
            constraint.must_exist = True
        else:
            constraint.must_not_exist = True
    labels: dict[str, str] = {}
    for key, constraint in constraints.items():
        value = constraint.example()
        if value is False:
            return None
        if isinstance(value, str):
            labels[key] = value
    return labels
