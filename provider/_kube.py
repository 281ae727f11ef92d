"""Small, typed access to the custom objects the providers manage, through the official client.

Why: every Kubernetes provider needs the same four verbs with "not found" and "already exists"
handled the same way; the client is opened per call and closed, never stored on the provider.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ._connection import kube_client

CILIUM_GROUP = "cilium.io"


@dataclass(frozen=True)
class CustomKind:
    """A custom resource kind: group/version/plural, and whether its objects live in a namespace."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool = False

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"


POD_IP_POOL = CustomKind(CILIUM_GROUP, "v2alpha1", "ciliumpodippools", "CiliumPodIPPool")
CILIUM_NODE = CustomKind(CILIUM_GROUP, "v2", "ciliumnodes", "CiliumNode")
NODE_CONFIG = CustomKind(CILIUM_GROUP, "v2", "ciliumnodeconfigs", "CiliumNodeConfig", namespaced=True)


def status_of(error: Exception) -> int:
    """The HTTP status of a kubernetes ApiException, or 0 for anything else."""
    return int(getattr(error, "status", 0) or 0)


@contextmanager
def custom_objects(kubeconfig: str | None) -> Iterator[Any]:
    """A CustomObjectsApi on a fresh ApiClient that is closed afterwards."""
    from kubernetes import client

    api_client = kube_client(kubeconfig)
    try:
        yield client.CustomObjectsApi(api_client)
    finally:
        api_client.close()


@contextmanager
def core_v1(kubeconfig: str | None) -> Iterator[Any]:
    """A CoreV1Api on a fresh ApiClient that is closed afterwards."""
    from kubernetes import client

    api_client = kube_client(kubeconfig)
    try:
        yield client.CoreV1Api(api_client)
    finally:
        api_client.close()


def get(api: Any, kind: CustomKind, name: str, namespace: str = "") -> dict[str, Any] | None:
    try:
        if kind.namespaced:
            return dict(
                api.get_namespaced_custom_object(kind.group, kind.version, namespace, kind.plural, name)
            )
        return dict(api.get_cluster_custom_object(kind.group, kind.version, kind.plural, name))
    except Exception as error:
        if status_of(error) == 404:
            return None
        raise


def list_all(api: Any, kind: CustomKind, timeout_seconds: float | None = None) -> list[dict[str, Any]]:
    """Every object of `kind` in the cluster (all namespaces for namespaced kinds), following pages."""
    items: list[dict[str, Any]] = []
    token: str | None = None
    while True:
        kwargs: dict[str, Any] = {"limit": 500}
        if timeout_seconds is not None:
            kwargs["_request_timeout"] = timeout_seconds
        if token:
            kwargs["_continue"] = token
        if kind.namespaced:
            page = api.list_custom_object_for_all_namespaces(kind.group, kind.version, kind.plural, **kwargs)
        else:
            page = api.list_cluster_custom_object(kind.group, kind.version, kind.plural, **kwargs)
        items.extend(page.get("items", []))
        token = (page.get("metadata") or {}).get("continue")
        if not token:
            return items


def create(api: Any, kind: CustomKind, body: dict[str, Any], namespace: str = "") -> dict[str, Any]:
    if kind.namespaced:
        return dict(
            api.create_namespaced_custom_object(kind.group, kind.version, namespace, kind.plural, body)
        )
    return dict(api.create_cluster_custom_object(kind.group, kind.version, kind.plural, body))


def replace(api: Any, kind: CustomKind, body: dict[str, Any], namespace: str = "") -> dict[str, Any]:
    name = body["metadata"]["name"]
    if kind.namespaced:
        return dict(
            api.replace_namespaced_custom_object(kind.group, kind.version, namespace, kind.plural, name, body)
        )
    return dict(api.replace_cluster_custom_object(kind.group, kind.version, kind.plural, name, body))


def delete(api: Any, kind: CustomKind, name: str, namespace: str = "") -> None:
    """Delete; an object that is already gone counts as deleted."""
    try:
        if kind.namespaced:
            api.delete_namespaced_custom_object(kind.group, kind.version, namespace, kind.plural, name)
        else:
            api.delete_cluster_custom_object(kind.group, kind.version, kind.plural, name)
    except Exception as error:
        if status_of(error) != 404:
            raise


def merged_metadata_map(
    live: dict[str, str] | None, old_owned: dict[str, str], new_owned: dict[str, str]
) -> dict[str, str]:
    """Labels/annotations after an update: others' keys kept, keys we dropped removed, ours set."""
    result = {k: v for k, v in (live or {}).items() if k not in old_owned or k in new_owned}
    result.update(new_owned)
    return result
