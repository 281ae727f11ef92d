"""Informers (list + watch, resume, 410 -> relist) and the pending-pod index (ENI-ALLOC-2 surge)."""

from __future__ import annotations

from typing import Any

import pytest

from reconciler.cluster.memory import MemoryStore
from reconciler.cluster.store import CILIUM_NODE, POD
from reconciler.controller.informer import Informer
from reconciler.controller.pods import PendingPods
from tests.controller.conftest import StoreAndNamespace


def cn(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"ipam": {"pre-allocate": 8}}}


def pod(name: str, node: str | None, ip: str | None = None) -> dict[str, Any]:
    obj: dict[str, Any] = {"metadata": {"name": name, "namespace": "default"}, "spec": {"containers": []}}
    if node:
        obj["spec"]["nodeName"] = node
    if ip:
        obj["status"] = {"podIP": ip}
    return obj


def test_informer_lists_then_follows_the_watch() -> None:
    store = MemoryStore()
    store.create(CILIUM_NODE, cn("a"))
    seen: list[tuple[str, str]] = []
    informer = Informer(store, CILIUM_NODE)
    informer.add_handler(lambda t, old, new: seen.append((t, (new or old or {})["metadata"]["name"])))
    informer.poll(0)
    b = store.create(CILIUM_NODE, cn("b"))
    b["spec"]["ipam"]["pre-allocate"] = 2
    store.update(CILIUM_NODE, b)
    store.delete(CILIUM_NODE, "a")
    assert informer.poll(0) == 3
    assert seen == [("ADDED", "a"), ("ADDED", "b"), ("MODIFIED", "b"), ("DELETED", "a")]
    assert set(informer.cache) == {("", "b")}
    assert informer.get("b")["spec"]["ipam"]["pre-allocate"] == 2  # type: ignore[index]


def test_an_expired_watch_relists_and_reports_what_changed_meanwhile() -> None:
    store = MemoryStore(history_limit=4)
    for name in "abc":
        store.create(CILIUM_NODE, cn(name))
    informer = Informer(store, CILIUM_NODE)
    informer.poll(0)
    seen: list[tuple[str, str]] = []
    informer.add_handler(lambda t, old, new: seen.append((t, (new or old or {})["metadata"]["name"])))
    store.delete(CILIUM_NODE, "a")
    obj = store.get(CILIUM_NODE, "b")
    for n in range(20):  # push our resourceVersion out of the store's history
        obj["spec"]["ipam"]["pre-allocate"] = n
        obj = store.update(CILIUM_NODE, obj)
    store.create(CILIUM_NODE, cn("d"))
    informer.poll(0)
    assert informer.relists == 1
    assert sorted(seen) == [("ADDED", "d"), ("DELETED", "a"), ("MODIFIED", "b")]
    assert informer.get("b")["spec"]["ipam"]["pre-allocate"] == 19  # type: ignore[index]
    store.create(CILIUM_NODE, cn("e"))
    informer.poll(0)  # and the watch resumes normally from the relisted version
    assert seen[-1] == ("ADDED", "e") and informer.relists == 1


def test_pending_pods_are_bound_pods_without_an_ip_ENI_ALLOC_2() -> None:
    store = MemoryStore()
    pending = PendingPods()
    changed: list[str] = []
    informer = Informer(store, POD)
    informer.add_handler(lambda t, old, new: changed.extend(pending.handle(t, old, new)))
    store.create(POD, pod("unscheduled", None))
    store.create(POD, pod("p1", "node-a"))
    p2 = store.create(POD, pod("p2", "node-a"))
    store.create(POD, pod("p3", "node-b"))
    informer.poll(0)
    assert (pending.count("node-a"), pending.count("node-b")) == (2, 1)
    p2["status"] = {"podIP": "10.0.0.7"}
    store.update_status(POD, p2)
    store.delete(POD, "p3", "default")
    informer.poll(0)
    assert (pending.count("node-a"), pending.count("node-b"), pending.count("x")) == (1, 0, 0)
    assert changed == ["node-a", "node-a", "node-b", "node-a", "node-b"]


def test_node_triggers_coalesce_bursts_within_the_minimum_interval() -> None:
    from reconciler.clock import SimClock
    from reconciler.controller.triggers import NodeTriggers

    clock = SimClock()
    triggers = NodeTriggers(clock, 0.010)
    triggers.fire("a")
    triggers.fire("a")
    triggers.fire("b")
    assert triggers.due() == ["a", "b"]
    triggers.fire("a")
    clock.advance(0.004)
    triggers.fire("a")
    assert triggers.due() == [] and triggers.next_due_in() == pytest.approx(0.006)
    clock.advance(0.006)
    assert triggers.due() == ["a"] and triggers.next_due_in() is None


def test_an_informer_recovers_from_410_by_relisting_on_both_stores(any_store: StoreAndNamespace) -> None:
    """The real apiserver's 410 for a too-old resourceVersion takes the same relist path."""
    memory = isinstance(any_store.store, MemoryStore)
    store = MemoryStore(history_limit=4) if memory else any_store.store
    name = any_store.unique("cn")
    informer = Informer(store, CILIUM_NODE)
    wait = 0 if memory else 1  # the real watch needs at least a one-second round
    informer.poll(wait)
    store.create(CILIUM_NODE, cn(name))
    if memory:  # push the informer's version out of the bounded history
        obj = store.get(CILIUM_NODE, name)
        for n in range(10):
            obj["spec"]["ipam"]["pre-allocate"] = n
            obj = store.update(CILIUM_NODE, obj)
    else:
        informer.resource_version = "1"  # long compacted out of the apiserver's watch cache
    seen: list[str] = []
    informer.add_handler(lambda t, old, new: seen.append((new or old or {})["metadata"]["name"]))
    informer.poll(wait)
    assert informer.relists == 1
    assert name in seen and informer.get(name) is not None
