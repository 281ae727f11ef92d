"""`CniConfiguration`: the `cni-configuration` ConfigMap (key `cni-config`) of ENI-ARCH-2.

Why typed: the agent copies the `eni` and `ipam` sections of this JSON into every new CiliumNode and
they win over Helm values; a misspelt key is silently ignored by Cilium. Building the JSON from
typed options and checking every key keeps the ConfigMap exactly what the platform team meant.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
from pulumi.dynamic import CheckFailure, CheckResult, CreateResult, DiffResult, ReadResult, UpdateResult

from . import _kube
from ._connection import ConfiguredProvider
from ._props import changed_keys, is_unknown, user_props
from .errors import ProviderError, user_facing

CONFIGMAP_NAME = "cni-configuration"
CONFIGMAP_KEY = "cni-config"
DEFAULT_NAMESPACE = "kube-system"
DEFAULT_CNI_VERSION = "0.3.1"
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")

# Allowed keys of each section and the JSON type each must have (ENI-PARAM-*, SPEC section 0).
ENI_KEYS: dict[str, str] = {
    "first-interface-index": "int",
    "subnet-ids": "list",
    "subnet-tags": "map",
    "security-groups": "list",
    "security-group-tags": "map",
    "exclude-interface-tags": "map",
    "use-primary-address": "bool",
    "disable-prefix-delegation": "bool",
    "delete-on-termination": "bool",
}
IPAM_KEYS: dict[str, str] = {
    "min-allocate": "int",
    "max-allocate": "int",
    "pre-allocate": "int",
    "max-above-watermark": "int",
    "static-ip-tags": "map",
}
ID_PREFIX = {"subnet-ids": "subnet-", "security-groups": "sg-"}


@dataclass(frozen=True)
class EniOptions:
    """The `eni` section (ENI-PARAM-2..8); None / empty means "not set, use Helm or the default"."""

    first_interface_index: int | None = None
    subnet_ids: Sequence[str] = ()
    subnet_tags: Mapping[str, str] = field(default_factory=dict)
    security_groups: Sequence[str] = ()
    security_group_tags: Mapping[str, str] = field(default_factory=dict)
    exclude_interface_tags: Mapping[str, str] = field(default_factory=dict)
    use_primary_address: bool | None = None
    disable_prefix_delegation: bool | None = None
    delete_on_termination: bool | None = None

    def to_cni(self) -> dict[str, Any]:
        return _set_fields(self)


@dataclass(frozen=True)
class IpamOptions:
    """The `ipam` section (ENI-PARAM-1, ENI-PARAM-9)."""

    min_allocate: int | None = None
    max_allocate: int | None = None
    pre_allocate: int | None = None
    max_above_watermark: int | None = None
    static_ip_tags: Mapping[str, str] = field(default_factory=dict)

    def to_cni(self) -> dict[str, Any]:
        return _set_fields(self)


def _set_fields(options: object) -> dict[str, Any]:
    section: dict[str, Any] = {}
    for name, value in vars(options).items():
        if value is None or (isinstance(value, Sequence | Mapping) and not value):
            continue
        if isinstance(value, Mapping):
            value = dict(value)
        elif isinstance(value, Sequence) and not isinstance(value, str):
            value = list(value)
        section[name.replace("_", "-")] = value
    return section


def cni_config_document(eni: Mapping[str, Any], ipam: Mapping[str, Any], cni_version: str) -> str:
    """The exact `cni-config` JSON text (stable key order so diffs are meaningful)."""
    plugin: dict[str, Any] = {"cniVersion": cni_version, "type": "cilium-cni"}
    if eni:
        plugin["eni"] = dict(eni)
    if ipam:
        plugin["ipam"] = dict(ipam)
    document = {"cniVersion": cni_version, "name": "cilium", "plugins": [plugin]}
    return json.dumps(document, indent=2, sort_keys=True)


def section_errors(section: Any, allowed: Mapping[str, str], what: str) -> list[str]:
    """Why a section is invalid: unknown keys (typos), wrong types, negative counts, malformed ids."""
    if section is None or is_unknown(section):
        return []
    if not isinstance(section, Mapping):
        return [f"{what} must be a map of Cilium {what} parameters."]
    errors = []
    for key, value in section.items():
        if key not in allowed:
            hint = ", ".join(sorted(allowed))
            errors.append(f"{what} key {key!r} is not a Cilium {what} parameter; use one of: {hint}.")
            continue
        if is_unknown(value):
            continue
        errors += _value_errors(key, value, allowed[key], what)
    return errors


def _value_errors(key: str, value: Any, kind: str, what: str) -> list[str]:
    label = f"{what}.{key}"
    if kind == "int":
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            return [f"{label} must be a whole number >= 0, got {value!r}."]
    elif kind == "bool":
        if not isinstance(value, bool):
            return [f"{label} must be true or false, got {value!r}."]
    elif kind == "list":
        prefix = ID_PREFIX.get(key, "")
        if not isinstance(value, list) or not all(isinstance(v, str) and v.startswith(prefix) for v in value):
            return [f"{label} must be a list of ids starting with {prefix!r}."]
    elif kind == "map":
        if not isinstance(value, Mapping) or not all(isinstance(v, str) for v in value.values()):
            return [f"{label} must be a map of strings."]
    return []


class CniConfigurationProvider(ConfiguredProvider):
    """Owns the ConfigMap; updates patch only its `cni-config` key, so keys others added survive."""

    def check(self, olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        props = user_props(news)
        props.setdefault("name", CONFIGMAP_NAME)
        props.setdefault("namespace", DEFAULT_NAMESPACE)
        props.setdefault("cni_version", DEFAULT_CNI_VERSION)
        failures: list[CheckFailure] = []
        for key in ("name", "namespace"):
            value = props[key]
            if not is_unknown(value) and not (isinstance(value, str) and DNS_LABEL.match(value)):
                failures.append(CheckFailure(key, f"{key} {value!r} is not a valid Kubernetes name."))
        failures += [CheckFailure("eni", r) for r in section_errors(props.get("eni"), ENI_KEYS, "eni")]
        failures += [CheckFailure("ipam", r) for r in section_errors(props.get("ipam"), IPAM_KEYS, "ipam")]
        ipam = props.get("ipam")
        ipam = ipam if isinstance(ipam, Mapping) else {}
        low, high = ipam.get("min-allocate"), ipam.get("max-allocate")
        if isinstance(low, int) and isinstance(high, int) and high and low > high:
            failures.append(
                CheckFailure("ipam", f"ipam.min-allocate {low} exceeds ipam.max-allocate {high}.")
            )
        return CheckResult(props, failures)

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        old, new = user_props(olds), user_props(news)
        replaces = changed_keys(old, new, ("name", "namespace"))
        updates = changed_keys(old, new, ("eni", "ipam", "cni_version", "kubeconfig"))
        return DiffResult(changes=bool(replaces or updates), replaces=replaces, delete_before_replace=False)

    @user_facing
    def create(self, props: dict[str, Any]) -> CreateResult:
        from kubernetes import client

        props = user_props(props)
        name, namespace = str(props["name"]), str(props["namespace"])
        text = _document(props)
        with _kube.core_v1(self.setting(props, "kubeconfig")) as core:
            body = client.V1ConfigMap(
                metadata=client.V1ObjectMeta(name=name, namespace=namespace), data={CONFIGMAP_KEY: text}
            )
            try:
                core.create_namespaced_config_map(namespace, body)
            except Exception as error:
                if _kube.status_of(error) != 409:
                    raise
                live = core.read_namespaced_config_map(name, namespace)
                if (live.data or {}).get(CONFIGMAP_KEY) != text:
                    raise ProviderError(
                        f"ConfigMap {namespace}/{name} already exists with a different {CONFIGMAP_KEY}; "
                        "import it with `pulumi import` or delete it first."
                    ) from None
        return CreateResult(f"{namespace}/{name}", {**props, "cni_config": text})

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        props = user_props(props)
        namespace, name = id_.split("/", 1)
        with _kube.core_v1(self.setting(props, "kubeconfig")) as core:
            try:
                live = core.read_namespaced_config_map(name, namespace)
            except Exception as error:
                if _kube.status_of(error) == 404:
                    return ReadResult("", {})
                raise
        return ReadResult(id_, {**props, "cni_config": (live.data or {}).get(CONFIGMAP_KEY, "")})

    @user_facing
    def update(self, id_: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        new = user_props(news)
        namespace, name = id_.split("/", 1)
        text = _document(new)
        with _kube.core_v1(self.setting(new, "kubeconfig")) as core:
            try:
                core.patch_namespaced_config_map(name, namespace, {"data": {CONFIGMAP_KEY: text}})
            except Exception as error:
                if _kube.status_of(error) == 404:
                    raise ProviderError(
                        f"ConfigMap {id_} was deleted outside Pulumi; run `pulumi refresh`."
                    ) from None
                raise
        return UpdateResult({**new, "cni_config": text})

    def delete(self, id_: str, props: dict[str, Any]) -> None:
        namespace, name = id_.split("/", 1)
        with _kube.core_v1(self.setting(user_props(props), "kubeconfig")) as core:
            try:
                core.delete_namespaced_config_map(name, namespace)
            except Exception as error:
                if _kube.status_of(error) != 404:
                    raise


def _document(props: Mapping[str, Any]) -> str:
    return cni_config_document(props.get("eni") or {}, props.get("ipam") or {}, str(props["cni_version"]))


class CniConfiguration(pulumi.dynamic.Resource, module="cilium-ipam", name="CniConfiguration"):
    """The custom CNI ConfigMap; use with Helm `cni.customConf=true`, `cni.configMap=<name>`."""

    cni_config: pulumi.Output[str]

    def __init__(
        self,
        resource_name: str,
        *,
        eni: EniOptions | None = None,
        ipam: IpamOptions | None = None,
        name: str = CONFIGMAP_NAME,
        namespace: str = DEFAULT_NAMESPACE,
        cni_version: str = DEFAULT_CNI_VERSION,
        kubeconfig: str | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        props: dict[str, Any] = {
            "name": name,
            "namespace": namespace,
            "eni": (eni or EniOptions()).to_cni(),
            "ipam": (ipam or IpamOptions()).to_cni(),
            "cni_version": cni_version,
            "kubeconfig": kubeconfig,
            "cni_config": None,
        }
        super().__init__(CniConfigurationProvider(), resource_name, props, opts)
