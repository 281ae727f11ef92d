"""Property tests: `common_labels` is exactly "some node matches both selectors" (node-config conflicts)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from policies.rules.selectors import can_overlap, common_labels

KEYS = st.sampled_from(["zone", "role", "gpu"])
VALUES = st.sampled_from(["a", "b", "c"])


def matches(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """Kubernetes label-selector semantics, written independently of the module under test."""
    for key, value in selector.get("matchLabels", {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions", []):
        key, operator, values = expression["key"], expression["operator"], expression.get("values", [])
        present = key in labels
        if operator == "In" and not (present and labels[key] in values):
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True


expressions = st.one_of(
    st.builds(
        lambda k, o, v: {"key": k, "operator": o, "values": v},
        KEYS,
        st.sampled_from(["In", "NotIn"]),
        st.lists(VALUES, min_size=1, max_size=3, unique=True),
    ),
    st.builds(lambda k, o: {"key": k, "operator": o}, KEYS, st.sampled_from(["Exists", "DoesNotExist"])),
)
selectors = st.builds(
    lambda labels, exprs: {"matchLabels": labels, "matchExpressions": exprs},
    st.dictionaries(KEYS, VALUES, max_size=2),
    st.lists(expressions, max_size=3),
)
label_sets = st.dictionaries(KEYS, st.sampled_from(["a", "b", "c", "d"]), max_size=3)


@settings(max_examples=200, deadline=None)
@given(selectors, selectors)
def test_the_witness_really_matches_both_selectors(first: dict[str, Any], second: dict[str, Any]) -> None:
    witness = common_labels(first, second)
    if witness is not None:
        assert matches(first, witness) and matches(second, witness)
    assert can_overlap(first, second) == can_overlap(second, first)


@settings(max_examples=200, deadline=None)
@given(selectors, selectors, label_sets)
def test_no_overlap_means_no_node_matches_both(
    first: dict[str, Any], second: dict[str, Any], labels: dict[str, str]
) -> None:
    if matches(first, labels) and matches(second, labels):
        assert can_overlap(first, second)
