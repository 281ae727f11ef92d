"""In-process ClusterStore with the API server's resourceVersion, conflict and watch semantics.

The simulator runs thousands of nodes through this store, so it stays cheap: stored objects are
never mutated (a write builds a new dict), history entries share them, and callers get copies.
Like etcd + the watch cache, one counter orders all writes; each kind keeps a bounded history and a
watch from a version older than what is retained fails with Gone (HTTP 410), which forces a relist.
"""

from __future__ import annotations

import bisect
import itertools
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar, cast

from reconciler.cluster.store import (
    AlreadyExists,
    Conflict,
    EventType,
    Gone,
    Invalid,
    JsonObj,
    Kind,
    ListResult,
    NotFound,
    WatchEvent,
    name_of,
    namespace_of,
    require_namespace,
    require_resource_version,
)

Key = tuple[str, str]
# A batch of watch events and the resourceVersion cursor after it. Named at module level because
# inside MemoryStore the name `list` is the list() method, not the builtin.
EventBatch = tuple[list[WatchEvent], int]
J = TypeVar("J")

_SERVER_META = ("uid", "creationTimestamp", "resourceVersion", "generation")


def clone(value: J) -> J:
    """Copy JSON-shaped data; several times faster than copy.deepcopy for these objects."""
    if isinstance(value, dict):
        return cast(J, {k: clone(v) for k, v in value.items()})
    if isinstance(value, list):
        return cast(J, [clone(v) for v in value])
    return value


@dataclass
class _Entry:
    rv: int
    type: EventType
    namespace: str
    obj: JsonObj


@dataclass
class _KindState:
    objects: dict[Key, JsonObj] = field(default_factory=dict)
    history: list[_Entry] = field(default_factory=list)
    history_rvs: list[int] = field(default_factory=list)
    compacted_rv: int = 0


def _parse_rv(value: str) -> int:
    try:
        return int(value)
    except ValueError as exc:
        raise Invalid(f"resourceVersion {value!r} is not a number this store issued") from exc


def _body(obj: JsonObj) -> JsonObj:
    """Everything but metadata and status: what counts as a spec change."""
    return {k: v for k, v in obj.items() if k not in ("metadata", "status")}


class MemoryStore:
    """A ClusterStore held in memory; thread-safe; watches wake on writes."""

    def __init__(self, history_limit: int = 16384) -> None:
        if history_limit < 1:
            raise ValueError("history_limit must be at least 1")
        self._history_limit = history_limit
        self._kinds: dict[Kind, _KindState] = {}
        self._counter = itertools.count(2)
        self._rv = 1  # never "0": that asks a watch for a snapshot, as on the real apiserver
        self._cond = threading.Condition()

    # -- helpers -------------------------------------------------------------------------------
    def _state(self, kind: Kind) -> _KindState:
        state = self._kinds.get(kind)
        if state is None:
            state = self._kinds[kind] = _KindState()
        return state

    def _key(self, kind: Kind, name: str, namespace: str | None) -> Key:
        require_namespace(kind, namespace, name)
        return ((namespace or "") if kind.namespaced else "", name)

    def _next_rv(self) -> int:
        self._rv = next(self._counter)
        return self._rv

    def _record(self, kind: Kind, state: _KindState, type_: EventType, key: Key, obj: JsonObj) -> None:
        state.history.append(_Entry(self._rv, type_, key[0], obj))
        state.history_rvs.append(self._rv)
        if len(state.history) > 2 * self._history_limit:
            cut = len(state.history) - self._history_limit
            state.compacted_rv = state.history_rvs[cut - 1]
            del state.history[:cut]
            del state.history_rvs[:cut]
        self._cond.notify_all()

    def _stamp(self, obj: JsonObj, rv: int) -> None:
        obj.setdefault("metadata", {})["resourceVersion"] = str(rv)

    def _missing(self, kind: Kind, key: Key) -> NotFound:
        where = f" in namespace {key[0]!r}" if key[0] else ""
        return NotFound(f"{kind.kind} {key[1]!r}{where} not found")

    # -- ClusterStore --------------------------------------------------------------------------
    def create(self, kind: Kind, obj: JsonObj) -> JsonObj:
        name = name_of(obj)
        if not name:
            raise Invalid(f"{kind.kind} needs metadata.name")
        key = self._key(kind, name, namespace_of(obj))
        new = clone(obj)
        new["apiVersion"] = kind.api_version
        new["kind"] = kind.kind
        meta = new.setdefault("metadata", {})
        if kind.has_status:
            new.pop("status", None)
        with self._cond:
            state = self._state(kind)
            if key in state.objects:
                raise AlreadyExists(f"{kind.kind} {name!r} already exists")
            rv = self._next_rv()
            meta["uid"] = str(uuid.uuid4())
            meta["creationTimestamp"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            meta["generation"] = 1
            self._stamp(new, rv)
            state.objects[key] = new
            self._record(kind, state, "ADDED", key, new)
            return clone(new)

    def get(self, kind: Kind, name: str, namespace: str | None = None) -> JsonObj:
        key = self._key(kind, name, namespace)
        with self._cond:
            obj = self._state(kind).objects.get(key)
            if obj is None:
                raise self._missing(kind, key)
            return clone(obj)

    def list(self, kind: Kind, namespace: str | None = None) -> ListResult:
        with self._cond:
            objects = self._state(kind).objects
            items = [
                clone(o) for (ns, _), o in objects.items() if namespace is None or ns == (namespace or "")
            ]
            return ListResult(items=items, resource_version=str(self._rv))

    def _replace(self, kind: Kind, obj: JsonObj, status_only: bool) -> JsonObj:
        name = name_of(obj)
        key = self._key(kind, name, namespace_of(obj))
        wanted_rv = require_resource_version(kind, obj)
        with self._cond:
            state = self._state(kind)
            current = state.objects.get(key)
            if current is None:
                raise self._missing(kind, key)
            if current["metadata"]["resourceVersion"] != wanted_rv:
                raise Conflict(
                    f"{kind.kind} {name!r} changed since resourceVersion {wanted_rv} "
                    f"(now {current['metadata']['resourceVersion']}); re-read and retry"
                )
            if status_only:
                new = dict(current)
                if "status" in obj:
                    new["status"] = clone(obj["status"])
                else:
                    new.pop("status", None)
            else:
                new = clone(obj)
                new["apiVersion"] = kind.api_version
                new["kind"] = kind.kind
                meta = new.setdefault("metadata", {})
                for k in _SERVER_META:
                    if k in current["metadata"]:
                        meta[k] = current["metadata"][k]
                if kind.has_status:
                    new.pop("status", None)
                    if "status" in current:
                        new["status"] = current["status"]
                if _body(new) != _body(current):
                    meta["generation"] = int(current["metadata"].get("generation", 1)) + 1
            if new == current:
                return clone(current)
            new["metadata"] = dict(new["metadata"])
            self._stamp(new, self._next_rv())
            state.objects[key] = new
            self._record(kind, state, "MODIFIED", key, new)
            return clone(new)

    def update(self, kind: Kind, obj: JsonObj) -> JsonObj:
        return self._replace(kind, obj, status_only=False)

    def update_status(self, kind: Kind, obj: JsonObj) -> JsonObj:
        if not kind.has_status:
            raise NotFound(f"{kind.kind} has no status subresource")
        return self._replace(kind, obj, status_only=True)

    def delete(
        self, kind: Kind, name: str, namespace: str | None = None, resource_version: str | None = None
    ) -> None:
        key = self._key(kind, name, namespace)
        with self._cond:
            state = self._state(kind)
            current = state.objects.get(key)
            if current is None:
                raise self._missing(kind, key)
            if resource_version and current["metadata"]["resourceVersion"] != resource_version:
                raise Conflict(
                    f"{kind.kind} {name!r} changed since resourceVersion {resource_version}; "
                    "re-read before deleting"
                )
            del state.objects[key]
            gone = dict(current)
            gone["metadata"] = dict(current["metadata"])
            self._stamp(gone, self._next_rv())
            self._record(kind, state, "DELETED", key, gone)

    def watch(
        self, kind: Kind, resource_version: str, namespace: str | None = None, timeout: float = 30.0
    ) -> MemoryWatch:
        return MemoryWatch(self, kind, resource_version, namespace, timeout)

    # -- used by MemoryWatch -------------------------------------------------------------------
    def _events_after(
        self, kind: Kind, after: int, namespace: str | None, wait: float, closed: Callable[[], bool]
    ) -> EventBatch:
        """Events of `kind` after `after`, waiting up to `wait` s for one; and the new cursor."""
        deadline = time.monotonic() + wait
        with self._cond:
            while True:
                state = self._state(kind)
                if after < state.compacted_rv:
                    raise Gone(
                        f"too old resource version: {after} (oldest retained for "
                        f"{kind.plural} is {state.compacted_rv + 1}); relist"
                    )
                start = bisect.bisect_right(state.history_rvs, after)
                entries = state.history[start:]
                if entries:
                    cursor = entries[-1].rv
                    events = [
                        WatchEvent(e.type, clone(e.obj))
                        for e in entries
                        if namespace is None or e.namespace == namespace
                    ]
                    if events:
                        return events, cursor
                    after = cursor
                remaining = deadline - time.monotonic()
                if remaining <= 0 or closed():
                    return [], after
                self._cond.wait(remaining)

    def _snapshot(self, kind: Kind, namespace: str | None) -> EventBatch:
        with self._cond:
            listed = self.list(kind, namespace)
            return [WatchEvent("ADDED", o) for o in listed.items], self._rv

    def _wake(self) -> None:
        with self._cond:
            self._cond.notify_all()


class MemoryWatch:
    """A watch on a MemoryStore; `timeout=0` drains what is pending and ends (for simulated time)."""

    def __init__(
        self, store: MemoryStore, kind: Kind, resource_version: str, namespace: str | None, timeout: float
    ) -> None:
        self._store = store
        self._kind = kind
        self._rv = resource_version
        self._namespace = namespace
        self._timeout = timeout
        self._closed = False

    def __iter__(self) -> Iterator[WatchEvent]:
        deadline = time.monotonic() + self._timeout
        if self._rv in ("", "0"):
            events, cursor = self._store._snapshot(self._kind, self._namespace)
            yield from events
        else:
            cursor = _parse_rv(self._rv)
        while not self._is_closed():
            remaining = max(deadline - time.monotonic(), 0.0)
            events, cursor = self._store._events_after(
                self._kind, cursor, self._namespace, remaining, self._is_closed
            )
            for event in events:
                if self._is_closed():
                    return
                yield event
            if not events and remaining <= 0:
                return

    def _is_closed(self) -> bool:
        """Whether close() was called; a call, not a field, since another thread sets it mid-loop."""
        return self._closed

    def close(self) -> None:
        self._closed = True
        self._store._wake()
