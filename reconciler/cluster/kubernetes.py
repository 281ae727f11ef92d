"""ClusterStore over a real Kubernetes API server, with the official `kubernetes` client (>= 37).

Requests go through the client's `ApiClient` (auth, TLS, kubeconfig) with JSON dicts in and out,
and watches through `kubernetes.watch.Watch`. We do not use the typed `CoreV1Api` models: since
client 37 they validate bodies with pydantic and reject fields they do not know, which would make a
newer API server's objects unwritable -- and a store must round-trip objects byte for byte.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, cast

import urllib3
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes import watch as k8s_watch
from kubernetes.client.exceptions import ApiException

from reconciler.cluster.store import (
    AlreadyExists,
    Conflict,
    Gone,
    Invalid,
    JsonObj,
    Kind,
    ListResult,
    NotFound,
    StoreError,
    WatchEvent,
    name_of,
    namespace_of,
    require_namespace,
    require_resource_version,
)

_JSON_HEADERS = {"Accept": "application/json", "Content-Type": "application/json"}
_AUTH = ["BearerToken"]


def error_from(exc: ApiException, what: str) -> StoreError:
    """Map an HTTP failure to the store's typed errors, keeping the server's one-line message."""
    return error_for(int(exc.status or 0), getattr(exc, "body", None), exc.reason or "", what)


def error_for(code: int, body: str | bytes | None, fallback: str, what: str) -> StoreError:
    message = fallback
    reason = ""
    if body:
        try:
            status = json.loads(body)
            message = status.get("message", message)
            reason = status.get("reason", "")
        except (ValueError, AttributeError):
            pass
    text = f"{what}: {message}".strip()
    if code == 404:
        return NotFound(text)
    if code == 409:
        return AlreadyExists(text) if reason == "AlreadyExists" else Conflict(text)
    if code == 410:
        return Gone(text)
    if code in (400, 422):
        return Invalid(text)
    return StoreError(f"{text} (HTTP {code})")


class KubernetesStore:
    """A ClusterStore on a kube-apiserver; thread-safe as far as the underlying ApiClient is."""

    def __init__(self, api_client: k8s.ApiClient, request_timeout: float = 30.0) -> None:
        self._api = api_client
        self._timeout = request_timeout

    @classmethod
    def from_kubeconfig(cls, path: str | None = None) -> KubernetesStore:
        """From a kubeconfig file, else the in-cluster service account."""
        if path:
            return cls(k8s_config.new_client_from_config(config_file=path))
        k8s_config.load_incluster_config()
        return cls(k8s.ApiClient())

    # -- paths ---------------------------------------------------------------------------------
    @staticmethod
    def _collection(kind: Kind, namespace: str | None) -> str:
        base = f"/apis/{kind.group}/{kind.version}" if kind.group else f"/api/{kind.version}"
        if kind.namespaced and namespace:
            return f"{base}/namespaces/{namespace}/{kind.plural}"
        return f"{base}/{kind.plural}"

    def _item(self, kind: Kind, name: str, namespace: str | None) -> str:
        require_namespace(kind, namespace, name)
        return f"{self._collection(kind, namespace)}/{name}"

    # -- HTTP ----------------------------------------------------------------------------------
    def _send(
        self,
        method: str,
        path: str,
        what: str,
        body: Any = None,
        query: list[tuple[str, Any]] | None = None,
        timeout: Any = None,
    ) -> Any:
        """The client's response to a request that got a 2xx; any other status raises a StoreError."""
        params = self._api.param_serialize(
            method,
            path,
            query_params=query or [],
            header_params=dict(_JSON_HEADERS),
            body=body,
            auth_settings=_AUTH,
        )
        try:
            response = self._api.call_api(*params, _request_timeout=timeout or self._timeout)
        except ApiException as exc:
            raise error_from(exc, what) from exc
        if not 200 <= response.status <= 299:
            raise error_for(response.status, response.read(), str(response.reason or ""), what)
        return response

    def _request(
        self, method: str, path: str, what: str, body: Any = None, query: list[tuple[str, Any]] | None = None
    ) -> JsonObj:
        """The JSON object the API server answered with (an I/O edge: its shape is the API's)."""
        response = self._send(method, path, what, body=body, query=query)
        return cast(JsonObj, json.loads(response.read() or b"{}"))

    # -- ClusterStore --------------------------------------------------------------------------
    def create(self, kind: Kind, obj: JsonObj) -> JsonObj:
        body = {**obj, "apiVersion": kind.api_version, "kind": kind.kind}
        ns = namespace_of(obj)
        require_namespace(kind, ns, name_of(obj))
        return self._request(
            "POST", self._collection(kind, ns), f"create {kind.kind} {name_of(obj)!r}", body=body
        )

    def get(self, kind: Kind, name: str, namespace: str | None = None) -> JsonObj:
        return self._request(
            "GET", self._item(kind, name, namespace), f"get {kind.kind} {name!r}"
        )

    def list(self, kind: Kind, namespace: str | None = None) -> ListResult:
        out = self._request("GET", self._collection(kind, namespace), f"list {kind.plural}")
        items = out.get("items") or []
        for item in items:  # list items come without apiVersion/kind; make them self-describing
            item.setdefault("apiVersion", kind.api_version)
            item.setdefault("kind", kind.kind)
        return ListResult(items=items, resource_version=str(out["metadata"]["resourceVersion"]))

    def update(self, kind: Kind, obj: JsonObj) -> JsonObj:
        require_resource_version(kind, obj)
        name = name_of(obj)
        body = {**obj, "apiVersion": kind.api_version, "kind": kind.kind}
        return self._request(
            "PUT", self._item(kind, name, namespace_of(obj)), f"update {kind.kind} {name!r}", body=body
        )

    def update_status(self, kind: Kind, obj: JsonObj) -> JsonObj:
        require_resource_version(kind, obj)
        if not kind.has_status:
            raise NotFound(f"{kind.kind} has no status subresource")
        name = name_of(obj)
        body = {**obj, "apiVersion": kind.api_version, "kind": kind.kind}
        path = self._item(kind, name, namespace_of(obj)) + "/status"
        return self._request(
            "PUT", path, f"update status of {kind.kind} {name!r}", body=body
        )

    def delete(
        self, kind: Kind, name: str, namespace: str | None = None, resource_version: str | None = None
    ) -> None:
        body: JsonObj = {"apiVersion": "v1", "kind": "DeleteOptions"}
        if resource_version:
            body["preconditions"] = {"resourceVersion": resource_version}
        self._request("DELETE", self._item(kind, name, namespace), f"delete {kind.kind} {name!r}", body=body)

    def watch(
        self, kind: Kind, resource_version: str, namespace: str | None = None, timeout: float = 30.0
    ) -> KubernetesWatch:
        return KubernetesWatch(self, kind, resource_version, namespace, timeout)

    def _open_watch(self, kind: Kind, namespace: str | None, **kwargs: Any) -> Any:
        """The list function `kubernetes.watch.Watch` drives: GET ...?watch=true, streamed."""
        query: list[tuple[str, Any]] = [("watch", "true"), ("allowWatchBookmarks", "true")]
        if kwargs.get("resource_version"):
            query.append(("resourceVersion", kwargs["resource_version"]))
        seconds = int(kwargs.get("timeout_seconds") or 30)
        query.append(("timeoutSeconds", seconds))
        return self._send(
            "GET",
            self._collection(kind, namespace),
            f"watch {kind.plural}",
            query=query,
            timeout=(10.0, seconds + 15.0),
        ).response


class KubernetesWatch:
    """One watch request; bookmarks are passed on so a quiet watch can resume without a 410."""

    def __init__(
        self, store: KubernetesStore, kind: Kind, resource_version: str, namespace: str | None, timeout: float
    ) -> None:
        self._store = store
        self._kind = kind
        self._rv = resource_version
        self._namespace = namespace
        self._seconds = max(1, int(round(timeout)))
        self._watch = k8s_watch.Watch(return_type=object)

    def __iter__(self) -> Iterator[WatchEvent]:
        def list_fn(**kwargs: Any) -> Any:
            return self._store._open_watch(self._kind, self._namespace, **kwargs)

        # deserialize=False would be cheaper, but client 37 then crashes on ERROR events (KeyError
        # 'raw_object'), which is exactly how a 410 arrives; return_type=object keeps plain dicts.
        kwargs: dict[str, Any] = {"timeout_seconds": self._seconds}
        if self._rv:
            kwargs["resource_version"] = self._rv
        try:
            for event in self._watch.stream(list_fn, **kwargs):
                kind = event.get("type")
                obj = event.get("raw_object") or {}
                if kind in ("ADDED", "MODIFIED", "DELETED", "BOOKMARK"):
                    obj.setdefault("apiVersion", self._kind.api_version)
                    obj.setdefault("kind", self._kind.kind)
                    yield WatchEvent(kind, obj)
        except ApiException as exc:
            raise error_from(exc, f"watch {self._kind.plural} from {self._rv or 'now'}") from exc
        except (OSError, ValueError, urllib3.exceptions.HTTPError) as exc:
            # close() shuts the socket down under the reader; anything else is a broken stream
            if not self._watch._stop:
                raise StoreError(f"watch {self._kind.plural} broke: {exc}") from exc

    def close(self) -> None:
        self._watch.stop()

