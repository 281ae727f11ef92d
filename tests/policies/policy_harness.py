"""Call the pack's policies the way the engine does: proxied props, float numbers, collected violations.

(No __init__.py in this directory on purpose: a package named `policies` would shadow the real one.)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pulumi_policy import (
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    StackValidationArgs,
)
from pulumi_policy.proxy import unknown_checking_proxy

from policies.rules.pack import POLICY_BY_NAME
from policies.rules.views import OUR_DYNAMIC_PREFIX

OUR_POOL_TYPE = OUR_DYNAMIC_PREFIX + "CiliumPodIPPool"

RAW_POOL_TYPE = "kubernetes:cilium.io/v2alpha1:CiliumPodIPPool"
RAW_NODE_CONFIG_TYPE = "kubernetes:cilium.io/v2:CiliumNodeConfig"


def engine_props(props: Mapping[str, Any]) -> Any:
    """Props as the engine hands them over: JSON numbers become floats, wrapped in the unknown proxy."""

    def floats(value: Any) -> Any:
        if isinstance(value, bool):
            return value
        if isinstance(value, int):
            return float(value)
        if isinstance(value, dict):
            return {k: floats(v) for k, v in value.items()}
        if isinstance(value, list):
            return [floats(v) for v in value]
        return value

    return unknown_checking_proxy(floats(json.loads(json.dumps(props))))


def options() -> PolicyResourceOptions:
    return PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [])


def urn_of(resource_type: str, name: str) -> str:
    return f"urn:pulumi:test::cilium-ipam::{resource_type}::{name}"


def validate_resource(
    policy: str,
    resource_type: str,
    props: Mapping[str, Any],
    config: Mapping[str, Any] | None = None,
    name: str = "res",
) -> list[str]:
    """The violation messages `policy` reports for one resource."""
    args = ResourceValidationArgs(
        resource_type, engine_props(props), urn_of(resource_type, name), name, options(), None, config
    )
    messages: list[str] = []
    POLICY_BY_NAME[policy].validate(args, lambda message, _urn=None: messages.append(message))
    return messages


def stack_resource(resource_type: str, props: Mapping[str, Any], name: str) -> PolicyResource:
    return PolicyResource(
        resource_type, engine_props(props), urn_of(resource_type, name), name, options(), None, None, [], {}
    )


def validate_stack(
    policy: str, resources: list[PolicyResource], config: Mapping[str, Any] | None = None
) -> list[tuple[str, str | None]]:
    """The (message, urn) violations `policy` reports for a stack."""
    violations: list[tuple[str, str | None]] = []
    args = StackValidationArgs(resources, config)
    POLICY_BY_NAME[policy].validate(args, lambda message, urn=None: violations.append((message, urn)))
    return violations


def raw_pool(
    name: str, ipv4: dict[str, Any] | None = None, ipv6: dict[str, Any] | None = None, **extra: Any
) -> PolicyResource:
    """A pulumi-kubernetes CiliumPodIPPool custom resource as the stack policies see it."""
    spec: dict[str, Any] = dict(extra)
    if ipv4 is not None:
        spec["ipv4"] = ipv4
    if ipv6 is not None:
        spec["ipv6"] = ipv6
    props = {
        "apiVersion": "cilium.io/v2alpha1",
        "kind": "CiliumPodIPPool",
        "metadata": {"name": name},
        "spec": spec,
    }
    return stack_resource(RAW_POOL_TYPE, props, name)


def dynamic_pool(
    name: str, ipv4: dict[str, Any] | None = None, ipv6: dict[str, Any] | None = None
) -> PolicyResource:
    """Our dynamic CiliumPodIPPool resource, with the props provider.pod_ip_pool sends."""
    spec: dict[str, Any] = {}
    if ipv4 is not None:
        spec["ipv4"] = ipv4
    if ipv6 is not None:
        spec["ipv6"] = ipv6
    props: dict[str, Any] = {"name": name, "spec": spec, "labels": {}, "__provider": "pickled"}
    return stack_resource(OUR_POOL_TYPE, props, name)


def node_config(
    name: str,
    pool: str | None,
    selector: dict[str, Any] | None,
    namespace: str = "kube-system",
    **defaults: str,
) -> PolicyResource:
    """A raw CiliumNodeConfig custom resource with `ipam-default-ip-pool` (and any other defaults)."""
    all_defaults = dict(defaults)
    if pool is not None:
        all_defaults["ipam-default-ip-pool"] = pool
    spec: dict[str, Any] = {"defaults": all_defaults}
    if selector is not None:
        spec["nodeSelector"] = selector
    props = {
        "apiVersion": "cilium.io/v2",
        "kind": "CiliumNodeConfig",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }
    return stack_resource(RAW_NODE_CONFIG_TYPE, props, name)
