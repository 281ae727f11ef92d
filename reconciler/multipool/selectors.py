"""Kubernetes label selectors (metav1.LabelSelector) with the standard matching semantics.

Used by CiliumPodIPPool `podSelector` / `namespaceSelector` (MP-SEL-1) and CiliumNodeConfig
`nodeSelector` (MP-NODE-1). An empty selector matches everything; whether an *absent* selector
matches nothing or everything is the caller's decision, so callers keep `None` for "absent".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


class SelectorError(ValueError):
    """A selector is malformed; the message is one sentence naming the problem and the fix."""


@dataclass(frozen=True)
class Requirement:
    """One `matchExpressions` entry."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        if self.operator == "In":
            return present and labels[self.key] in self.values
        if self.operator == "NotIn":
            return not present or labels[self.key] not in self.values
        if self.operator == "Exists":
            return present
        return not present  # DoesNotExist


@dataclass(frozen=True)
class LabelSelector:
    """`matchLabels` AND every `matchExpressions` requirement."""

    match_labels: Mapping[str, str] = field(default_factory=dict)
    match_expressions: tuple[Requirement, ...] = ()

    @classmethod
    def from_obj(cls, obj: Mapping[str, Any] | None, where: str = "selector") -> LabelSelector:
        """Parse and validate; raises SelectorError with one sentence naming `where`."""
        o = obj or {}
        labels = {str(k): str(v) for k, v in (o.get("matchLabels") or {}).items()}
        reqs: list[Requirement] = []
        for raw in o.get("matchExpressions") or ():
            key = str(raw.get("key", ""))
            op = str(raw.get("operator", ""))
            values = tuple(str(v) for v in raw.get("values") or ())
            if not key:
                raise SelectorError(f"{where} has a matchExpressions entry without a key; add `key`.")
            if op not in OPERATORS:
                raise SelectorError(
                    f"{where} uses operator {op!r} for key {key!r}; use one of {', '.join(OPERATORS)}."
                )
            if op in ("In", "NotIn") and not values:
                raise SelectorError(f"{where} uses {op} for key {key!r} without values; list at least one.")
            if op in ("Exists", "DoesNotExist") and values:
                raise SelectorError(f"{where} uses {op} for key {key!r} with values; remove the values.")
            reqs.append(Requirement(key, op, values))
        return cls(labels, tuple(reqs))

    def to_obj(self) -> dict[str, Any]:
        obj: dict[str, Any] = {}
        if self.match_labels:
            obj["matchLabels"] = dict(self.match_labels)
        if self.match_expressions:
            exprs: list[dict[str, Any]] = []
            for r in self.match_expressions:
                e: dict[str, Any] = {"key": r.key, "operator": r.operator}
                if r.values:
                    e["values"] = list(r.values)
                exprs.append(e)
            obj["matchExpressions"] = exprs
        return obj

    def matches(self, labels: Mapping[str, str]) -> bool:
        if any(labels.get(k) != v for k, v in self.match_labels.items()):
            return False
        return all(r.matches(labels) for r in self.match_expressions)
