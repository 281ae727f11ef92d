"""Pulumi dynamic resources and components for Cilium's AWS ENI and multi-pool IPAM.

Importing this package has no side effects and imports nothing heavy: each name below is loaded
from its own module on first use (dynamic providers are pickled by reference to those modules).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "DualStackSubnet": "provider.dual_stack_subnet",
    "DualStackSubnetProvider": "provider.dual_stack_subnet",
    "Ec2Tags": "provider.ec2_tags",
    "Ec2TagsProvider": "provider.ec2_tags",
    "IpamIamPolicy": "provider.ipam_iam_policy",
    "IpamIamPolicyProvider": "provider.ipam_iam_policy",
    "IpamPermissionOptions": "provider.iam_actions",
    "required_ec2_actions": "provider.iam_actions",
    "policy_document": "provider.iam_actions",
    "CiliumPodIPPool": "provider.pod_ip_pool",
    "CiliumPodIPPoolProvider": "provider.pod_ip_pool",
    "pool_spec": "provider.pod_ip_pool",
    "CiliumNodeConfig": "provider.node_config",
    "CiliumNodeConfigProvider": "provider.node_config",
    "CniConfiguration": "provider.cni_configuration",
    "CniConfigurationProvider": "provider.cni_configuration",
    "EniOptions": "provider.cni_configuration",
    "IpamOptions": "provider.cni_configuration",
    "CiliumIpamReconciler": "provider.reconciler_component",
    "unmanaged_interface_snippets": "provider.host_network",
    "host_setup_script": "provider.host_network",
    "ProviderError": "provider.errors",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'provider' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return __all__
