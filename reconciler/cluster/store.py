"""The ClusterStore port: the few Kubernetes operations the operator needs, with typed errors.

Objects are plain JSON dicts with the exact keys the API server uses, so the same code path works
against the real API (`KubernetesStore`) and the in-process `MemoryStore` the simulator uses. Every
write that replaces an object carries `metadata.resourceVersion` (optimistic concurrency): the store
refuses an update without one, so nobody can blindly overwrite fields another writer owns.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal, Protocol

JsonObj = dict[str, Any]
EventType = Literal["ADDED", "MODIFIED", "DELETED", "BOOKMARK"]
"""BOOKMARK carries only a newer resourceVersion to resume from; it changes no object."""


@dataclass(frozen=True)
class Kind:
    """Where a resource lives in the API and whether it has a status subresource."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    has_status: bool

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


CILIUM_NODE = Kind("cilium.io", "v2", "ciliumnodes", "CiliumNode", namespaced=False, has_status=True)
CILIUM_POD_IP_POOL = Kind(
    "cilium.io", "v2alpha1", "ciliumpodippools", "CiliumPodIPPool", namespaced=False, has_status=False
)
CILIUM_NODE_CONFIG = Kind(
    "cilium.io", "v2", "ciliumnodeconfigs", "CiliumNodeConfig", namespaced=True, has_status=False
)
NODE = Kind("", "v1", "nodes", "Node", namespaced=False, has_status=True)
POD = Kind("", "v1", "pods", "Pod", namespaced=True, has_status=True)
EVENT = Kind("", "v1", "events", "Event", namespaced=True, has_status=False)
LEASE = Kind("coordination.k8s.io", "v1", "leases", "Lease", namespaced=True, has_status=False)

ALL_KINDS: tuple[Kind, ...] = (CILIUM_NODE, CILIUM_POD_IP_POOL, CILIUM_NODE_CONFIG, NODE, POD, EVENT, LEASE)


class StoreError(Exception):
    """Base of every error a ClusterStore raises; `str()` is one sentence for logs."""


class NotFound(StoreError):
    """The object does not exist (HTTP 404)."""


class AlreadyExists(StoreError):
    """Create of a name that is taken (HTTP 409, reason AlreadyExists)."""


class Conflict(StoreError):
    """The resourceVersion we wrote against is stale (HTTP 409): re-read, re-plan, retry."""


class Gone(StoreError):
    """Watch from a resourceVersion older than the retained history (HTTP 410): relist."""


class Invalid(StoreError):
    """The server rejected the object (HTTP 422) or the caller broke the store contract."""


@dataclass(frozen=True)
class WatchEvent:
    type: EventType
    object: JsonObj

    @property
    def resource_version(self) -> str:
        return str(self.object.get("metadata", {}).get("resourceVersion", ""))


@dataclass(frozen=True)
class ListResult:
    items: list[JsonObj]
    resource_version: str


class WatchStream(Protocol):
    """Events after a resourceVersion, ending at the timeout; `close()` ends it early (shutdown)."""

    def __iter__(self) -> Iterator[WatchEvent]: ...

    def close(self) -> None: ...


class ClusterStore(Protocol):
    def create(self, kind: Kind, obj: JsonObj) -> JsonObj: ...

    def get(self, kind: Kind, name: str, namespace: str | None = None) -> JsonObj: ...

    def list(self, kind: Kind, namespace: str | None = None) -> ListResult: ...

    def watch(
        self, kind: Kind, resource_version: str, namespace: str | None = None, timeout: float = 30.0
    ) -> WatchStream:
        """Events strictly after `resource_version`; raises (while iterating) Gone if it is too old."""
        ...

    def update(self, kind: Kind, obj: JsonObj) -> JsonObj:
        """Replace metadata + spec (status is ignored when the kind has a status subresource)."""
        ...

    def update_status(self, kind: Kind, obj: JsonObj) -> JsonObj:
        """Replace only the status subresource; spec and metadata changes are ignored."""
        ...

    def delete(
        self, kind: Kind, name: str, namespace: str | None = None, resource_version: str | None = None
    ) -> None: ...


def name_of(obj: JsonObj) -> str:
    return str(obj.get("metadata", {}).get("name", ""))


def namespace_of(obj: JsonObj) -> str | None:
    ns = obj.get("metadata", {}).get("namespace")
    return str(ns) if ns else None


def resource_version_of(obj: JsonObj) -> str:
    return str(obj.get("metadata", {}).get("resourceVersion", "") or "")


def require_resource_version(kind: Kind, obj: JsonObj) -> str:
    """Updates without a resourceVersion would be blind overwrites: refuse them up front."""
    rv = resource_version_of(obj)
    if not rv:
        raise Invalid(
            f"update of {kind.kind} {name_of(obj)!r} has no metadata.resourceVersion; "
            "read the object first and write back the version you read"
        )
    return rv


def require_namespace(kind: Kind, namespace: str | None, name: str) -> None:
    if kind.namespaced and not namespace:
        raise Invalid(f"{kind.kind} {name!r} is namespaced; give its namespace")
