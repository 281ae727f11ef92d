"""`CiliumPodIPPool`: a multi-pool IPAM pool (cilium.io/v2alpha1) with the safety rules of MP-POOL-2/3/5.

Why a dynamic provider instead of a plain custom object: Kubernetes alone would accept a maskSize
change, the removal of a CIDR nodes still use, or a range that overlaps another pool; each of those
breaks pod networking. This resource refuses them in preview/update with one clear sentence.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import pulumi
from pulumi.dynamic import CheckFailure, CheckResult, CreateResult, DiffResult, ReadResult, UpdateResult

from . import _kube
from ._connection import ConfiguredProvider
from ._props import changed_keys, is_unknown, string_map_errors, user_props
from .errors import ProviderError, user_facing
from .pool_rules import (
    describe_users,
    immutable_changes,
    immutable_message,
    nodes_using,
    overlap_errors,
    removed_cidrs,
    spec_errors,
)

DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
SKIP_MASQUERADE = "ipam.cilium.io/skip-masquerade"
PREVIEW_TIMEOUT_SECONDS = 5.0  # preview's best-effort overlap check must never hang on a dead cluster
RACE_HINT = "another pool with an overlapping range was created at the same time; fix the ranges and retry"


class CiliumPodIPPoolProvider(ConfiguredProvider):
    """Creates, updates and deletes one CiliumPodIPPool, refusing unsafe changes."""

    def check(self, olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        props = user_props(news)
        old = user_props(olds)
        failures: list[CheckFailure] = []
        name = props.get("name")
        if not is_unknown(name) and not (
            isinstance(name, str) and len(name) <= 253 and DNS_SUBDOMAIN.match(name)
        ):
            failures.append(CheckFailure("name", f"name {name!r} is not a valid Kubernetes object name."))
        failures += [CheckFailure("spec", reason) for reason in spec_errors(props.get("spec"))]
        for key in ("labels", "annotations"):
            reason = string_map_errors(props.get(key), key)
            if reason:
                failures.append(CheckFailure(key, reason))
        if old.get("spec") and old.get("name") == name and not is_unknown(props.get("spec")):
            fields = immutable_changes(old["spec"], props["spec"])
            if fields:
                failures.append(CheckFailure("spec", immutable_message(str(name), fields)))
        if not failures and not is_unknown(props.get("spec")) and isinstance(name, str):
            failures += self._cluster_overlaps(props, {name, str(old.get("name", ""))})
        return CheckResult(props, failures)

    def _cluster_overlaps(self, props: Mapping[str, Any], exclude: set[str]) -> list[CheckFailure]:
        """MP-POOL-5 in preview, when the cluster is reachable; create/update re-check authoritatively."""
        try:
            with _kube.custom_objects(self.setting(props, "kubeconfig")) as api:
                pools = _kube.list_all(api, _kube.POD_IP_POOL, timeout_seconds=PREVIEW_TIMEOUT_SECONDS)
        except Exception:  # no cluster reachable from preview: create/update decide
            return []
        others = [p for p in pools if p.get("metadata", {}).get("name") not in exclude]
        return [CheckFailure("spec", r) for r in overlap_errors(str(props["name"]), props["spec"], others)]

    @user_facing
    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        old, new = user_props(olds), user_props(news)
        replaces = changed_keys(old, new, ("name",))
        if not replaces and not is_unknown(new.get("spec")):
            fields = immutable_changes(old.get("spec"), new.get("spec"))
            if fields:
                raise ProviderError(immutable_message(str(new.get("name")), fields))
        updates = changed_keys(old, new, ("spec", "labels", "annotations", "kubeconfig"))
        # a renamed pool would overlap its old self: delete first (refused while in use, MP-POOL-2)
        return DiffResult(changes=bool(replaces or updates), replaces=replaces, delete_before_replace=True)

    @user_facing
    def create(self, props: dict[str, Any]) -> CreateResult:
        props = user_props(props)
        name = str(props["name"])
        with _kube.custom_objects(self.setting(props, "kubeconfig")) as api:
            _refuse_overlaps(api, name, props["spec"])
            body = _body(props)
            try:
                live = _kube.create(api, _kube.POD_IP_POOL, body)
            except Exception as error:
                if _kube.status_of(error) != 409:
                    raise
                live = _kube.get(api, _kube.POD_IP_POOL, name) or {}
                if live.get("spec") != props["spec"]:
                    raise ProviderError(
                        f"CiliumPodIPPool {name} already exists with a different spec; import it with "
                        "`pulumi import` or choose another name."
                    ) from None
                return CreateResult(name, _outputs(props, live))
            late = overlap_errors(name, props["spec"], _kube.list_all(api, _kube.POD_IP_POOL))
            if late:  # MP-POOL-5 race: a concurrent create slipped past the check; never keep both
                _kube.delete(api, _kube.POD_IP_POOL, name)
                raise ProviderError(f"{late[0]} ({RACE_HINT}).")
        return CreateResult(name, _outputs(props, live))

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        props = user_props(props)
        with _kube.custom_objects(self.setting(props, "kubeconfig")) as api:
            live = _kube.get(api, _kube.POD_IP_POOL, id_)
        if live is None:
            return ReadResult("", {})
        metadata = live.get("metadata") or {}
        owned = {
            key: {k: v for k, v in (metadata.get(key) or {}).items() if k in (props.get(key) or {})}
            for key in ("labels", "annotations")
        }
        return ReadResult(id_, _outputs({**props, **owned, "name": id_, "spec": live.get("spec", {})}, live))

    @user_facing
    def update(self, id_: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        old, new = user_props(olds), user_props(news)
        fields = immutable_changes(old.get("spec"), new["spec"])
        if fields:
            raise ProviderError(immutable_message(id_, fields))
        with _kube.custom_objects(self.setting(new, "kubeconfig")) as api:
            gone = removed_cidrs(old.get("spec"), new["spec"])
            if gone:
                users = nodes_using(_kube.list_all(api, _kube.CILIUM_NODE), id_, gone)
                if users:
                    raise ProviderError(
                        f"CiliumPodIPPool {id_}: cannot remove {', '.join(map(str, gone))} while nodes "
                        f"use it (MP-POOL-2): {describe_users(users)}; drain those nodes first "
                        "(`cilium-ipam pools migrate`)."
                    )
            _refuse_overlaps(api, id_, new["spec"])
            live = _kube.get(api, _kube.POD_IP_POOL, id_)
            if live is None:
                raise ProviderError(
                    f"CiliumPodIPPool {id_} was deleted outside Pulumi; run `pulumi refresh`."
                )
            metadata = live["metadata"]
            for key in ("labels", "annotations"):
                metadata[key] = _kube.merged_metadata_map(
                    metadata.get(key), dict(old.get(key) or {}), dict(new.get(key) or {})
                )
            previous_spec = live.get("spec")
            live["spec"] = new["spec"]
            live = _kube.replace(api, _kube.POD_IP_POOL, live)
            late = overlap_errors(id_, new["spec"], _kube.list_all(api, _kube.POD_IP_POOL))
            if late:  # MP-POOL-5 race with a concurrent change: put the previous ranges back
                live["spec"] = previous_spec
                _kube.replace(api, _kube.POD_IP_POOL, live)
                raise ProviderError(f"{late[0]} ({RACE_HINT}).")
        return UpdateResult(_outputs(new, live))

    @user_facing
    def delete(self, id_: str, props: dict[str, Any]) -> None:
        props = user_props(props)
        with _kube.custom_objects(self.setting(props, "kubeconfig")) as api:
            users = nodes_using(_kube.list_all(api, _kube.CILIUM_NODE), id_)
            if users:
                raise ProviderError(
                    f"CiliumPodIPPool {id_} is still in use (MP-POOL-2) by {describe_users(users)}; move or "
                    "drain those nodes first (`cilium-ipam pools migrate`), then delete the pool."
                )
            _kube.delete(api, _kube.POD_IP_POOL, id_)


def _refuse_overlaps(api: Any, name: str, spec: Mapping[str, Any]) -> None:
    errors = overlap_errors(name, spec, _kube.list_all(api, _kube.POD_IP_POOL))
    if errors:
        raise ProviderError(errors[0])


def _body(props: Mapping[str, Any]) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": props["name"]}
    if props.get("labels"):
        metadata["labels"] = dict(props["labels"])
    if props.get("annotations"):
        metadata["annotations"] = dict(props["annotations"])
    kind = _kube.POD_IP_POOL
    return {
        "apiVersion": kind.api_version,
        "kind": kind.kind,
        "metadata": metadata,
        "spec": dict(props["spec"]),
    }


def _outputs(props: Mapping[str, Any], live: Mapping[str, Any]) -> dict[str, Any]:
    metadata = live.get("metadata") or {}
    return {**props, "uid": metadata.get("uid", ""), "resource_version": metadata.get("resourceVersion", "")}


def pool_spec(
    *,
    ipv4_cidrs: list[str] | None = None,
    ipv4_mask_size: int | None = None,
    ipv6_cidrs: list[str] | None = None,
    ipv6_mask_size: int | None = None,
    pod_selector: Mapping[str, Any] | None = None,
    namespace_selector: Mapping[str, Any] | None = None,
    allow_first_ip: bool = False,
    allow_last_ip: bool = False,
) -> dict[str, Any]:
    """The CRD `spec` from typed arguments (exact JSON keys of cilium.io/v2alpha1)."""
    spec: dict[str, Any] = {}
    if ipv4_cidrs is not None or ipv4_mask_size is not None:
        spec["ipv4"] = {"cidrs": list(ipv4_cidrs or []), "maskSize": ipv4_mask_size}
    if ipv6_cidrs is not None or ipv6_mask_size is not None:
        spec["ipv6"] = {"cidrs": list(ipv6_cidrs or []), "maskSize": ipv6_mask_size}
    if pod_selector is not None:
        spec["podSelector"] = dict(pod_selector)
    if namespace_selector is not None:
        spec["namespaceSelector"] = dict(namespace_selector)
    if allow_first_ip:
        spec["allowFirstIP"] = True
    if allow_last_ip:
        spec["allowLastIP"] = True
    return spec


class CiliumPodIPPool(pulumi.dynamic.Resource, module="cilium-ipam", name="CiliumPodIPPool"):
    """One CiliumPodIPPool; outputs `uid` and `resource_version`."""

    uid: pulumi.Output[str]
    resource_version: pulumi.Output[str]

    def __init__(
        self,
        resource_name: str,
        *,
        name: str | None = None,
        ipv4_cidrs: list[str] | None = None,
        ipv4_mask_size: int | None = None,
        ipv6_cidrs: list[str] | None = None,
        ipv6_mask_size: int | None = None,
        pod_selector: Mapping[str, Any] | None = None,
        namespace_selector: Mapping[str, Any] | None = None,
        allow_first_ip: bool = False,
        allow_last_ip: bool = False,
        skip_masquerade: bool = False,
        labels: Mapping[str, str] | None = None,
        annotations: Mapping[str, str] | None = None,
        kubeconfig: str | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        notes = dict(annotations or {})
        if skip_masquerade:
            notes[SKIP_MASQUERADE] = "true"  # MP-MASQ-1
        spec = pool_spec(
            ipv4_cidrs=ipv4_cidrs,
            ipv4_mask_size=ipv4_mask_size,
            ipv6_cidrs=ipv6_cidrs,
            ipv6_mask_size=ipv6_mask_size,
            pod_selector=pod_selector,
            namespace_selector=namespace_selector,
            allow_first_ip=allow_first_ip,
            allow_last_ip=allow_last_ip,
        )
        props: dict[str, Any] = {
            "name": name or resource_name,
            "spec": spec,
            "labels": dict(labels or {}),
            "annotations": notes,
            "kubeconfig": kubeconfig,
            "uid": None,
            "resource_version": None,
        }
        super().__init__(CiliumPodIPPoolProvider(), resource_name, props, opts)


__all__ = ["CiliumPodIPPool", "CiliumPodIPPoolProvider", "pool_spec"]
