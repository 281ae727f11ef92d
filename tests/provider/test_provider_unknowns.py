"""Preview tolerance: every provider's check accepts unknown inputs in each form the host produces.

Found by the real-engine test: the dynamic-provider host delivers unknowns as `pulumi.output.Unknown()`
objects (even nested in lists), not only as the UNKNOWN string.
"""

from __future__ import annotations

from typing import Any

import pytest
from pulumi.output import Unknown

from provider._props import UNKNOWN, is_unknown
from provider.cni_configuration import CniConfigurationProvider
from provider.dual_stack_subnet import DualStackSubnetProvider
from provider.ec2_tags import Ec2TagsProvider
from provider.ipam_iam_policy import IpamIamPolicyProvider
from provider.node_config import CiliumNodeConfigProvider
from provider.pod_ip_pool import CiliumPodIPPoolProvider

SENTINELS = [pytest.param(UNKNOWN, id="string"), pytest.param(Unknown(), id="Unknown-object")]
NO_CLUSTER = "/nonexistent/kubeconfig"


def preview_inputs(u: Any) -> list[tuple[Any, dict[str, Any]]]:
    return [
        (DualStackSubnetProvider(), {"vpc_id": u, "cidr_block": u, "ipv6_cidr_block": u, "tags": {"k": u}}),
        (Ec2TagsProvider(), {"resource_id": u, "tags": {"team": u}}),
        (IpamIamPolicyProvider(), {"role_name": u, "policy_name": "p", "cluster_name": u, "eni_gc_tags": u}),
        (
            CiliumPodIPPoolProvider(),
            {
                "name": u,
                "spec": {"ipv4": {"cidrs": [u, "10.0.0.0/16"], "maskSize": u}},
                "kubeconfig": NO_CLUSTER,
            },
        ),
        (
            CiliumNodeConfigProvider(),
            {
                "name": "dc1",
                "namespace": u,
                "defaults": {"ipam-default-ip-pool": u},
                "node_selector": {"matchLabels": {"zone": u}},
            },
        ),
        (
            CniConfigurationProvider(),
            {
                "namespace": u,
                "eni": {"subnet-ids": [u, "subnet-1"], "first-interface-index": u},
                "ipam": {"pre-allocate": u},
            },
        ),
        (CniConfigurationProvider(), {"eni": u, "ipam": u}),
        (CiliumPodIPPoolProvider(), {"name": "p", "spec": u, "labels": u, "kubeconfig": NO_CLUSTER}),
        (
            CiliumPodIPPoolProvider(),
            {
                "name": "p",
                "spec": {"ipv4": u, "ipv6": {"cidrs": u, "maskSize": 64}},
                "kubeconfig": NO_CLUSTER,
            },
        ),
        (CiliumNodeConfigProvider(), {"name": u, "defaults": u, "node_selector": u}),
    ]


@pytest.mark.parametrize("sentinel", SENTINELS)
def test_every_check_tolerates_unknowns(sentinel: Any) -> None:
    for provider, inputs in preview_inputs(sentinel):
        failures = provider.check({}, inputs).failures
        assert failures == [], (type(provider).__name__, [(f.property, f.reason) for f in failures])


@pytest.mark.parametrize("sentinel", SENTINELS)
def test_unknown_immutable_field_is_replaced_not_refused(sentinel: Any) -> None:
    subnet = DualStackSubnetProvider().diff(
        "subnet-1",
        {"vpc_id": "vpc-1", "cidr_block": "10.0.0.0/24"},
        {"vpc_id": sentinel, "cidr_block": "10.0.0.0/24"},
    )
    assert subnet.replaces == ["vpc_id"]
    assert is_unknown([1, {"a": sentinel}]) and not is_unknown([1, {"a": "b"}])
