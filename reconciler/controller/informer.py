"""Informer: a local cache of one kind kept current by list + watch, like client-go's reflector.

`sync()` lists and replaces the cache; `poll(timeout)` runs one watch round from the last seen
resourceVersion and applies its events. A watch that fails with Gone (410: our version fell out of
the server's history) relists, and the difference between the old and the new cache is delivered
as ADDED / MODIFIED / DELETED, so handlers never miss a deletion that happened while we were away.
`poll(0)` on a MemoryStore drains pending events without waiting: that is how simulated time
drives the controller.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator

from reconciler.cluster.store import (
    ClusterStore,
    Gone,
    JsonObj,
    Kind,
    WatchStream,
    name_of,
    namespace_of,
    resource_version_of,
)
from reconciler.controller.logs import log_event

log = logging.getLogger("cilium_ipam.informer")

Key = tuple[str, str]
Handler = Callable[[str, JsonObj | None, JsonObj | None], None]
"""(event type, old object or None, new object or None); DELETED passes the last known object as old."""


def key_of(obj: JsonObj) -> Key:
    return (namespace_of(obj) or "", name_of(obj))


class Informer:
    def __init__(self, store: ClusterStore, kind: Kind, namespace: str | None = None) -> None:
        self.store = store
        self.kind = kind
        self.namespace = namespace
        self.cache: dict[Key, JsonObj] = {}
        self.resource_version = ""
        self.synced = False
        self.relists = 0
        self._handlers: list[Handler] = []
        self._stream: WatchStream | None = None

    def add_handler(self, handler: Handler) -> None:
        self._handlers.append(handler)

    def get(self, name: str, namespace: str | None = None) -> JsonObj | None:
        return self.cache.get((namespace or "", name))

    def objects(self) -> Iterator[JsonObj]:
        return iter(list(self.cache.values()))

    def _emit(self, type_: str, old: JsonObj | None, new: JsonObj | None) -> None:
        for handler in self._handlers:
            handler(type_, old, new)

    def sync(self) -> None:
        """List, replace the cache, and tell handlers what changed since the last view."""
        listed = self.store.list(self.kind, self.namespace)
        fresh = {key_of(o): o for o in listed.items}
        old_cache, self.cache = self.cache, fresh
        self.resource_version = listed.resource_version
        self.synced = True
        for key, obj in fresh.items():
            before = old_cache.get(key)
            if before is None:
                self._emit("ADDED", None, obj)
            elif resource_version_of(before) != resource_version_of(obj):
                self._emit("MODIFIED", before, obj)
        for key, obj in old_cache.items():
            if key not in fresh:
                self._emit("DELETED", obj, None)

    def poll(self, timeout: float) -> int:
        """One watch round; returns how many object events were applied."""
        if not self.synced:
            self.sync()
        applied = 0
        stream = self.store.watch(self.kind, self.resource_version, self.namespace, timeout=timeout)
        self._stream = stream
        try:
            for event in stream:
                if event.resource_version:
                    self.resource_version = event.resource_version
                if event.type == "BOOKMARK":
                    continue
                key = key_of(event.object)
                old = self.cache.get(key)
                if event.type == "DELETED":
                    self.cache.pop(key, None)
                    self._emit("DELETED", old or event.object, None)
                else:
                    self.cache[key] = event.object
                    self._emit("MODIFIED" if old is not None else "ADDED", old, event.object)
                applied += 1
        except Gone as exc:
            self.relists += 1
            log_event(log, "watch-expired", logging.INFO, kind=self.kind.plural, reason=str(exc))
            self.sync()
        finally:
            self._stream = None
            stream.close()
        return applied

    def stop(self) -> None:
        """End a blocking `poll` early (graceful shutdown)."""
        stream = self._stream
        if stream is not None:
            stream.close()
