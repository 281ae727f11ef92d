"""Kubernetes Events for per-node operator errors, so `kubectl describe ciliumnode` shows them.

The sentence also lands in status.ipam.operator-status.error; the Event is for humans browsing the
cluster. One Event per distinct (node, message): a node stuck on the same problem does not flood
the namespace. Failing to record an Event is logged and never blocks IPAM work.
"""

from __future__ import annotations

import logging
import time
import uuid

from reconciler.cluster.store import EVENT, ClusterStore, JsonObj, StoreError
from reconciler.controller.logs import log_event

log = logging.getLogger("cilium_ipam.events")

COMPONENT = "cilium-ipam-operator"


class EventRecorder:
    def __init__(self, store: ClusterStore, namespace: str = "default", component: str = COMPONENT) -> None:
        self._store = store
        self._namespace = namespace
        self._component = component
        self._last: dict[str, str] = {}

    def node_error(self, node: JsonObj | None, name: str, message: str) -> None:
        """Record `message` once for this node; an empty message clears the memory (error solved)."""
        if not message:
            self._last.pop(name, None)
            return
        if self._last.get(name) == message:
            return
        self._last[name] = message
        meta = (node or {}).get("metadata") or {}
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        event = {
            "metadata": {"name": f"{name}.{uuid.uuid4().hex[:12]}", "namespace": self._namespace},
            "involvedObject": {
                "apiVersion": "cilium.io/v2",
                "kind": "CiliumNode",
                "name": name,
                "uid": meta.get("uid", ""),
                "resourceVersion": meta.get("resourceVersion", ""),
            },
            "reason": "IPAMError",
            "message": message,
            "type": "Warning",
            "source": {"component": self._component},
            "reportingComponent": self._component,
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
        }
        try:
            self._store.create(EVENT, event)
        except StoreError as exc:
            log_event(log, "event-record-failed", logging.WARNING, node=name, reason=str(exc))
