"""Conflict-safe CiliumNode writes: nobody's update is lost (ENI-PUB-1, MP-CRD-1 field ownership)."""

from __future__ import annotations

import threading

import pytest

from reconciler.cluster.memory import MemoryStore
from reconciler.cluster.store import CILIUM_NODE, ClusterStore, Conflict
from reconciler.controller.writes import (
    add_allocated,
    compose,
    set_eni_status,
    set_operator_error,
    write_with_retry,
)
from reconciler.model import CiliumNode, EniStatus
from tests.controller.conftest import StoreAndNamespace

WRITES = 25


def agent_adds_request(store: ClusterStore, name: str, pool: str) -> None:
    """What an agent does: read-modify-write of spec.ipam.pools.requested, retrying on 409."""
    while True:
        obj = store.get(CILIUM_NODE, name)
        pools = obj["spec"].setdefault("ipam", {}).setdefault("pools", {})
        pools.setdefault("requested", []).append({"pool": pool, "needed": {"ipv4-addrs": 1}})
        try:
            store.update(CILIUM_NODE, obj)
            return
        except Conflict:
            continue


def race(store: ClusterStore, name: str) -> int:
    conflicts = 0

    def count() -> None:
        nonlocal conflicts
        conflicts += 1

    def agent() -> None:
        for i in range(WRITES):
            agent_adds_request(store, name, f"pool-{i}")

    def operator() -> None:
        for i in range(WRITES):
            write_with_retry(store, name, add_allocated("default", [f"10.0.{i}.0/24"]), status=False,
                             attempts=100, on_conflict=count)
            write_with_retry(store, name, set_operator_error(f"error {i}"), status=True, attempts=100,
                             on_conflict=count)

    threads = [threading.Thread(target=agent), threading.Thread(target=operator)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return conflicts


def test_an_agent_and_the_operator_writing_the_same_node_lose_nothing_MP_CRD_1(
    any_store: StoreAndNamespace,
) -> None:
    store, name = any_store.store, any_store.unique("n")
    store.create(CILIUM_NODE, {"metadata": {"name": name}, "spec": {"ipam": {"pre-allocate": 8}}})
    conflicts = race(store, name)
    final = store.get(CILIUM_NODE, name)
    node = CiliumNode.from_obj(final)
    assert {r.pool for r in node.ipam.requested} == {f"pool-{i}" for i in range(WRITES)}
    assert set(node.ipam.cidrs_of("default")) == {f"10.0.{i}.0/24" for i in range(WRITES)}
    assert node.operator_error == f"error {WRITES - 1}"
    assert conflicts >= 0  # the race usually produces 409s; correctness must not depend on it


def test_a_status_write_keeps_unknown_fields_and_skips_when_nothing_changed_ENI_PUB_1() -> None:
    store = MemoryStore()
    created = store.create(
        CILIUM_NODE, {"metadata": {"name": "n1"}, "spec": {"future-field": {"x": 1}, "ipam": {}}}
    )
    created["status"] = {"future-status": True}
    store.update_status(CILIUM_NODE, created)
    enis = {"eni-1": EniStatus(id="eni-1", addresses=("10.0.0.5",), number=1)}
    first = write_with_retry(store, "n1", set_eni_status(enis), status=True)
    assert first is not None
    second = write_with_retry(store, "n1", set_eni_status(enis), status=True)
    assert second is not None
    assert second["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]  # no write
    final = store.get(CILIUM_NODE, "n1")
    assert final["spec"]["future-field"] == {"x": 1}
    assert final["status"]["future-status"] is True
    assert final["status"]["eni"]["enis"]["eni-1"]["addresses"] == ["10.0.0.5"]


def test_writes_to_a_deleted_node_are_dropped_not_retried_forever() -> None:
    store = MemoryStore()
    assert write_with_retry(store, "gone", set_operator_error("x"), status=True) is None


@pytest.mark.parametrize("error", ["", "subnet subnet-1 has no free addresses; add a subnet"])
def test_composed_status_mutations_write_once(error: str) -> None:
    store = MemoryStore()
    created = store.create(CILIUM_NODE, {"metadata": {"name": "n1"}, "spec": {}})
    enis = {"eni-1": EniStatus(id="eni-1", addresses=("10.0.0.5",))}
    out = write_with_retry(store, "n1", compose(set_eni_status(enis), set_operator_error(error)), status=True)
    assert out is not None
    assert int(out["metadata"]["resourceVersion"]) == int(created["metadata"]["resourceVersion"]) + 1
    assert CiliumNode.from_obj(out).operator_error == error
    assert list(CiliumNode.from_obj(out).enis) == ["eni-1"]
