"""The ClusterStore contract runs on both adapters: the real kube-apiserver and the MemoryStore."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from reconciler.cluster.memory import MemoryStore
from reconciler.cluster.store import ClusterStore

MEMORY_HISTORY = 8
"""Small on purpose so the contract's 410 test can outrun the retained history."""


@dataclass
class StoreUnderTest:
    store: ClusterStore
    namespace: str
    unique: Callable[[str], str]


def _unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


STORES = ["memory", pytest.param("kubernetes", marks=pytest.mark.kube)]


@pytest.fixture(params=STORES)
def subject(request: pytest.FixtureRequest) -> StoreUnderTest:
    if request.param == "memory":
        return StoreUnderTest(MemoryStore(history_limit=MEMORY_HISTORY), "contract", _unique)
    from reconciler.cluster.kubernetes import KubernetesStore

    api = request.getfixturevalue("kube")
    namespace = request.getfixturevalue("kube_namespace")
    return StoreUnderTest(KubernetesStore(api), namespace, _unique)
