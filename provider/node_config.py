"""`CiliumNodeConfig`: per-node-group Cilium settings such as the default pool (MP-NODE-1).

Why: a typo in `ipam-default-ip-pool` silently sends every pod of a node group to a pool that does
not exist (MP-SEL-3 falls back to `default`). The provider warns when the named pool is missing: the
warning is returned in the `warnings` output and printed to stderr, which the Pulumi CLI shows.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from typing import Any

import pulumi
from pulumi.dynamic import CheckFailure, CheckResult, CreateResult, DiffResult, ReadResult, UpdateResult

from . import _kube
from ._connection import ConfiguredProvider
from ._props import changed_keys, is_unknown, string_map_errors, user_props
from .errors import ProviderError, user_facing
from .pool_rules import selector_errors

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DEFAULT_POOL_KEY = "ipam-default-ip-pool"
DEFAULT_NAMESPACE = "kube-system"


class CiliumNodeConfigProvider(ConfiguredProvider):
    """Creates/updates one namespaced CiliumNodeConfig and reports a missing default pool."""

    def check(self, olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        props = user_props(news)
        props.setdefault("namespace", DEFAULT_NAMESPACE)
        failures: list[CheckFailure] = []
        name, namespace = props.get("name"), props.get("namespace")
        if not is_unknown(name) and not (isinstance(name, str) and DNS_SUBDOMAIN.match(name)):
            failures.append(CheckFailure("name", f"name {name!r} is not a valid Kubernetes object name."))
        if not is_unknown(namespace) and not (isinstance(namespace, str) and DNS_LABEL.match(namespace)):
            failures.append(
                CheckFailure("namespace", f"namespace {namespace!r} is not a valid namespace name.")
            )
        reason = string_map_errors(props.get("defaults"), "defaults")
        if reason:
            failures.append(CheckFailure("defaults", reason))
        elif not props.get("defaults"):
            failures.append(
                CheckFailure("defaults", f"defaults must set at least one key, e.g. {DEFAULT_POOL_KEY}.")
            )
        selector = props.get("node_selector")
        if selector is None:
            failures.append(
                CheckFailure(
                    "node_selector",
                    "node_selector is required: an absent selector "
                    "matches no node; use {} to match every node.",
                )
            )
        failures += [CheckFailure("node_selector", r) for r in selector_errors(selector, "node_selector")]
        return CheckResult(props, failures)

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        old, new = user_props(olds), user_props(news)
        replaces = changed_keys(old, new, ("name", "namespace"))
        updates = changed_keys(old, new, ("defaults", "node_selector", "labels", "kubeconfig"))
        return DiffResult(changes=bool(replaces or updates), replaces=replaces, delete_before_replace=False)

    @user_facing
    def create(self, props: dict[str, Any]) -> CreateResult:
        props = user_props(props)
        name, namespace = str(props["name"]), str(props["namespace"])
        with _kube.custom_objects(self.setting(props, "kubeconfig")) as api:
            body = _body(props)
            try:
                _kube.create(api, _kube.NODE_CONFIG, body, namespace)
            except Exception as error:
                if _kube.status_of(error) != 409:
                    raise
                live = _kube.get(api, _kube.NODE_CONFIG, name, namespace) or {}
                if live.get("spec") != body["spec"]:
                    raise ProviderError(
                        f"CiliumNodeConfig {namespace}/{name} already exists with a different spec; "
                        "import it with `pulumi import` or choose another name."
                    ) from None
            warnings = missing_pool_warnings(api, namespace, name, props.get("defaults") or {})
        return CreateResult(f"{namespace}/{name}", {**props, "warnings": warnings})

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        props = user_props(props)
        namespace, name = id_.split("/", 1)
        with _kube.custom_objects(self.setting(props, "kubeconfig")) as api:
            live = _kube.get(api, _kube.NODE_CONFIG, name, namespace)
            if live is None:
                return ReadResult("", {})
            spec = live.get("spec") or {}
            warnings = missing_pool_warnings(api, namespace, name, spec.get("defaults") or {})
        outs = {
            **props,
            "name": name,
            "namespace": namespace,
            "defaults": spec.get("defaults") or {},
            "node_selector": spec.get("nodeSelector"),
            "warnings": warnings,
        }
        return ReadResult(id_, outs)

    @user_facing
    def update(self, id_: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        old, new = user_props(olds), user_props(news)
        namespace, name = id_.split("/", 1)
        with _kube.custom_objects(self.setting(new, "kubeconfig")) as api:
            live = _kube.get(api, _kube.NODE_CONFIG, name, namespace)
            if live is None:
                raise ProviderError(
                    f"CiliumNodeConfig {id_} was deleted outside Pulumi; run `pulumi refresh`."
                )
            metadata = live["metadata"]
            metadata["labels"] = _kube.merged_metadata_map(
                metadata.get("labels"), dict(old.get("labels") or {}), dict(new.get("labels") or {})
            )
            live["spec"] = _body(new)["spec"]
            _kube.replace(api, _kube.NODE_CONFIG, live, namespace)
            warnings = missing_pool_warnings(api, namespace, name, new.get("defaults") or {})
        return UpdateResult({**new, "warnings": warnings})

    def delete(self, id_: str, props: dict[str, Any]) -> None:
        namespace, name = id_.split("/", 1)
        with _kube.custom_objects(self.setting(user_props(props), "kubeconfig")) as api:
            _kube.delete(api, _kube.NODE_CONFIG, name, namespace)


def missing_pool_warnings(api: Any, namespace: str, name: str, defaults: Mapping[str, str]) -> list[str]:
    """A warning (also printed to stderr for the Pulumi CLI) when the default pool does not exist."""
    pool = defaults.get(DEFAULT_POOL_KEY)
    if not pool or _kube.get(api, _kube.POD_IP_POOL, pool) is not None:
        return []
    warning = (
        f"warning: CiliumNodeConfig {namespace}/{name} names default pool {pool!r} "
        f"({DEFAULT_POOL_KEY}), but no CiliumPodIPPool {pool!r} exists; pods on matching nodes fall back to "
        "'default' (MP-SEL-3) until you create it."
    )
    print(warning, file=sys.stderr, flush=True)
    return [warning]


def _body(props: Mapping[str, Any]) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": props["name"], "namespace": props["namespace"]}
    if props.get("labels"):
        metadata["labels"] = dict(props["labels"])
    spec = {
        "defaults": dict(props.get("defaults") or {}),
        "nodeSelector": dict(props.get("node_selector") or {}),
    }
    kind = _kube.NODE_CONFIG
    return {"apiVersion": kind.api_version, "kind": kind.kind, "metadata": metadata, "spec": spec}


class CiliumNodeConfig(pulumi.dynamic.Resource, module="cilium-ipam", name="CiliumNodeConfig"):
    """One CiliumNodeConfig; `warnings` lists problems such as a default pool that does not exist."""

    warnings: pulumi.Output[list[str]]

    def __init__(
        self,
        resource_name: str,
        *,
        defaults: Mapping[str, pulumi.Input[str]],
        node_selector: Mapping[str, Any],
        name: str | None = None,
        namespace: str = DEFAULT_NAMESPACE,
        labels: Mapping[str, str] | None = None,
        kubeconfig: str | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        props: dict[str, Any] = {
            "name": name or resource_name,
            "namespace": namespace,
            "defaults": dict(defaults),
            "node_selector": dict(node_selector),
            "labels": dict(labels or {}),
            "kubeconfig": kubeconfig,
            "warnings": None,
        }
        super().__init__(CiliumNodeConfigProvider(), resource_name, props, opts)
