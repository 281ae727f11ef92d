"""Controller tests run on the MemoryStore and, where it matters, on the real kube-apiserver."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import pytest

from reconciler.cluster.memory import MemoryStore
from reconciler.cluster.store import ClusterStore


@dataclass
class StoreAndNamespace:
    store: ClusterStore
    namespace: str

    def unique(self, prefix: str) -> str:
        return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture(params=["memory", pytest.param("kubernetes", marks=pytest.mark.kube)])
def any_store(request: pytest.FixtureRequest) -> StoreAndNamespace:
    if request.param == "memory":
        return StoreAndNamespace(MemoryStore(), "kube-system")
    from reconciler.cluster.kubernetes import KubernetesStore

    return StoreAndNamespace(
        KubernetesStore(request.getfixturevalue("kube")), request.getfixturevalue("kube_namespace")
    )
