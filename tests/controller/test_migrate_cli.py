"""`cilium-ipam pools migrate` (MP-MIG-1) wired to the cluster: plan printed, step 1 only on request."""

from __future__ import annotations

import pytest

from reconciler.cli import build_parser
from reconciler.cluster.memory import MemoryStore
from reconciler.cluster.store import CILIUM_NODE, CILIUM_POD_IP_POOL, NODE
from reconciler.controller.migrate_cli import run_migrate


def cluster() -> MemoryStore:
    store = MemoryStore()
    store.create(
        CILIUM_POD_IP_POOL,
        {"metadata": {"name": "blue"}, "spec": {"ipv4": {"cidrs": ["10.20.0.0/16"], "maskSize": 24}}},
    )
    store.create(NODE, {"metadata": {"name": "n1", "labels": {"topology.kubernetes.io/zone": "dc1"}}})
    store.create(
        CILIUM_NODE,
        {"metadata": {"name": "n1"},
         "spec": {"ipam": {"pools": {"allocated": [{"pool": "blue", "cidrs": ["10.20.0.0/24"]}]}}}},
    )
    return store


def migrate(store: MemoryStore, *argv: str) -> int:
    return run_migrate(build_parser().parse_args(["pools", "migrate", "--pool", "blue", *argv]), store)


def test_the_plan_names_the_group_and_the_block_that_leaves_and_changes_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    store = cluster()
    assert migrate(store, "--ipv4-cidrs", "10.30.0.0/16") == 0
    out = capsys.readouterr().out
    assert "DRY RUN" in out and "10.20.0.0/16" in out and "dc1" in out and "n1" in out
    assert store.get(CILIUM_POD_IP_POOL, "blue")["spec"]["ipv4"]["cidrs"] == ["10.20.0.0/16"]


def test_update_pool_performs_step_one_only(capsys: pytest.CaptureFixture[str]) -> None:
    store = cluster()
    assert migrate(store, "--ipv4-cidrs", "10.30.0.0/16", "--update-pool") == 0
    assert store.get(CILIUM_POD_IP_POOL, "blue")["spec"]["ipv4"]["cidrs"] == ["10.30.0.0/16"]
    assert store.get(CILIUM_NODE, "n1")["spec"]["ipam"]["pools"]["allocated"][0]["cidrs"] == ["10.20.0.0/24"]
    assert "step 1 done" in capsys.readouterr().out


def test_a_refused_plan_exits_2_and_writes_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    store = cluster()
    store.create(
        CILIUM_POD_IP_POOL,
        {"metadata": {"name": "red"}, "spec": {"ipv4": {"cidrs": ["10.30.0.0/16"], "maskSize": 24}}},
    )
    assert migrate(store, "--ipv4-cidrs", "10.30.0.0/17", "--update-pool") == 2
    assert "REFUSED" in capsys.readouterr().out
    assert store.get(CILIUM_POD_IP_POOL, "blue")["spec"]["ipv4"]["cidrs"] == ["10.20.0.0/16"]


def test_a_missing_pool_is_one_sentence(capsys: pytest.CaptureFixture[str]) -> None:
    store = MemoryStore()
    assert migrate(store, "--ipv4-cidrs", "10.30.0.0/16") == 2
    assert capsys.readouterr().err.strip() == "cilium-ipam pools migrate: CiliumPodIPPool blue does not exist"
