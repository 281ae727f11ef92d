"""Warning Events for per-node operator errors: accepted by the real apiserver, one per message."""

from __future__ import annotations

from reconciler.cluster.store import EVENT
from reconciler.controller.events import EventRecorder
from tests.controller.conftest import StoreAndNamespace


def test_one_warning_event_per_distinct_node_error(any_store: StoreAndNamespace) -> None:
    store, node = any_store.store, any_store.unique("node")
    recorder = EventRecorder(store)
    meta = {"metadata": {"uid": "uid-1", "resourceVersion": "7"}}
    recorder.node_error(meta, node, f"node {node}: subnet subnet-1 is full; add a subnet")
    recorder.node_error(meta, node, f"node {node}: subnet subnet-1 is full; add a subnet")
    recorder.node_error(meta, node, "")  # solved
    recorder.node_error(meta, node, f"node {node}: subnet subnet-1 is full; add a subnet")
    mine = [e for e in store.list(EVENT, "default").items if e["involvedObject"]["name"] == node]
    assert len(mine) == 2
    assert {(e["type"], e["reason"], e["involvedObject"]["kind"]) for e in mine} == {
        ("Warning", "IPAMError", "CiliumNode")
    }
