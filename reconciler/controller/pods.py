"""Pending pods per node, for surge allocation (ENI-ALLOC-2).

A pod is pending for IPAM when the scheduler bound it to a node (`spec.nodeName`) and it holds no
IP yet (`status.podIP` empty) and has not finished. Host-network pods never need a pod IP.
"""

from __future__ import annotations

from collections import Counter

from reconciler.cluster.store import JsonObj, name_of, namespace_of


def pending_node(pod: JsonObj | None) -> str | None:
    """The node this pod is waiting on an IP from, or None."""
    if not pod:
        return None
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    node = spec.get("nodeName")
    if not node or spec.get("hostNetwork"):
        return None
    if status.get("podIP") or status.get("phase") in ("Succeeded", "Failed"):
        return None
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return None
    return str(node)


class PendingPods:
    """Informer handler keeping `count(node)` current."""

    def __init__(self) -> None:
        self._by_pod: dict[tuple[str, str], str] = {}
        self._counts: Counter[str] = Counter()

    def count(self, node: str) -> int:
        return self._counts.get(node, 0)

    def counts(self) -> dict[str, int]:
        return dict(self._counts)

    def handle(self, type_: str, old: JsonObj | None, new: JsonObj | None) -> list[str]:
        """Apply one pod event; returns the nodes whose pending count changed."""
        obj = new if new is not None else old
        if obj is None:
            return []
        key = (namespace_of(obj) or "", name_of(obj))
        before = self._by_pod.get(key)
        after = None if type_ == "DELETED" else pending_node(new)
        if before == after:
            return []
        if before is not None:
            self._counts[before] -= 1
            if self._counts[before] <= 0:
                del self._counts[before]
            del self._by_pod[key]
        if after is not None:
            self._by_pod[key] = after
            self._counts[after] += 1
        return [n for n in (before, after) if n is not None]
