"""Foundation: the real kube-apiserver + etcd fixture and the project's Cilium CRDs (issue 2).

These run against the real apiserver, so the CRD schemas (SPEC.md section 0) are enforced exactly as
a cluster would: a schema that is too loose or too strict fails here, not in production.
"""

from __future__ import annotations

import json
import ssl
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException
from toolchain import versions

from reconciler.crds import crd_names

pytestmark = pytest.mark.kube

GROUP = "cilium.io"


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def custom(kube: Any) -> client.CustomObjectsApi:
    return client.CustomObjectsApi(kube)


@pytest.fixture
def node_name(custom: client.CustomObjectsApi) -> Iterator[str]:
    """A unique CiliumNode name, deleted after the test if the test created it."""
    name = unique("node")
    yield name
    try:
        custom.delete_cluster_custom_object(GROUP, "v2", "ciliumnodes", name)
    except ApiException as error:
        if error.status != 404:
            raise


def ciliumnode(name: str, first_interface_index: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": "cilium.io/v2",
        "kind": "CiliumNode",
        "metadata": {"name": name},
        "spec": {
            "instance-id": "i-0123456789abcdef0",
            "eni": {
                "instance-type": "m5.large",
                "vpc-id": "vpc-1",
                "availability-zone": "us-east-1a",
                "node-subnet-id": "subnet-1",
                "first-interface-index": first_interface_index,
                "subnet-tags": {"cilium": "pods"},
            },
            "ipam": {
                "pre-allocate": 8,
                "pools": {"requested": [{"pool": "default", "needed": {"ipv4-addrs": 8}}]},
            },
            # Fields real Cilium agents write that this project does not model must survive (interop).
            "health": {"ipv4": "10.0.0.9"},
            "addresses": [{"type": "InternalIP", "ip": "10.0.0.10"}],
        },
    }


def pool(name: str, mask_size: int) -> dict[str, Any]:
    return {
        "apiVersion": "cilium.io/v2alpha1",
        "kind": "CiliumPodIPPool",
        "metadata": {"name": name},
        "spec": {"ipv4": {"cidrs": ["10.20.0.0/16"], "maskSize": mask_size}},
    }


def test_apiserver_serves_version_of_the_pinned_release(kube_control_plane: Any) -> None:
    """`/version` reports the pinned Kubernetes release, proving the ldflags stamp took effect."""
    pki = kube_control_plane.pki
    context = ssl.create_default_context(cafile=str(pki.ca_cert))
    context.load_cert_chain(str(pki.admin_cert), str(pki.admin_key))
    with urllib.request.urlopen(f"{kube_control_plane.url}/version", context=context, timeout=10) as response:
        version = json.load(response)
    major, minor, _ = versions.KUBERNETES.removeprefix("v").split(".")
    assert version["gitVersion"] == versions.KUBERNETES
    assert (version["major"], version["minor"]) == (major, minor)


def test_version_through_the_kubeconfig_client(kube: Any) -> None:
    """The ApiClient built from the written kubeconfig authenticates (client cert in system:masters)."""
    info = client.VersionApi(kube).get_code()
    assert info.git_version == versions.KUBERNETES


@pytest.mark.parametrize(
    "name", ["ciliumnodes.cilium.io", "ciliumpodippools.cilium.io", "ciliumnodeconfigs.cilium.io"]
)
def test_each_crd_is_installed_and_established(kube: Any, name: str) -> None:
    """Each shipped CRD (SPEC section 0) is accepted by the apiserver as a structural schema."""
    assert name in crd_names()
    crd = client.ApiextensionsV1Api(kube).read_custom_resource_definition(name)
    conditions = {c.type: c.status for c in crd.status.conditions}
    assert conditions.get("Established") == "True"
    assert conditions.get("NamesAccepted") == "True"
    assert conditions.get("NonStructuralSchema") in (None, "False")


def test_crd_scopes_versions_and_short_names(kube: Any) -> None:
    """SPEC section 0: CiliumNode v2 cluster-scoped `cn`, CiliumPodIPPool v2alpha1 cluster-scoped `cpip`,
    CiliumNodeConfig v2 namespaced."""
    extensions = client.ApiextensionsV1Api(kube)
    shape = {}
    for name in crd_names():
        spec = extensions.read_custom_resource_definition(name).spec
        shape[name] = (spec.scope, [v.name for v in spec.versions], spec.names.short_names or [])
    assert shape["ciliumnodes.cilium.io"] == ("Cluster", ["v2"], ["cn"])
    assert shape["ciliumpodippools.cilium.io"] == ("Cluster", ["v2alpha1"], ["cpip"])
    assert shape["ciliumnodeconfigs.cilium.io"][:2] == ("Namespaced", ["v2"])


def test_apiserver_rejects_pool_with_mask_size_33(custom: client.CustomObjectsApi) -> None:
    """maskSize is 1..32 for IPv4 (SPEC section 0, MP-POOL-1): 33 is rejected by the real apiserver."""
    with pytest.raises(ApiException) as rejected:
        custom.create_cluster_custom_object(GROUP, "v2alpha1", "ciliumpodippools", pool(unique("pool"), 33))
    assert rejected.value.status == 422
    assert "maskSize" in rejected.value.body


def test_apiserver_accepts_pool_with_mask_size_32_and_rejects_ipv6_mask_129(
    custom: client.CustomObjectsApi,
) -> None:
    """The IPv4 upper bound is inclusive; IPv6 maskSize is 1..128."""
    name = unique("pool")
    created = custom.create_cluster_custom_object(GROUP, "v2alpha1", "ciliumpodippools", pool(name, 32))
    try:
        assert created["spec"]["ipv4"]["maskSize"] == 32
    finally:
        custom.delete_cluster_custom_object(GROUP, "v2alpha1", "ciliumpodippools", name)
    ipv6_pool = pool(unique("pool"), 24)
    ipv6_pool["spec"]["ipv6"] = {"cidrs": ["fd00::/104"], "maskSize": 129}
    with pytest.raises(ApiException) as rejected:
        custom.create_cluster_custom_object(GROUP, "v2alpha1", "ciliumpodippools", ipv6_pool)
    assert rejected.value.status == 422


def test_apiserver_rejects_pool_with_malformed_cidr_or_no_family(custom: client.CustomObjectsApi) -> None:
    """Pool cidrs must parse as CIDRs, and a pool must declare at least one family."""
    bad_cidr = pool(unique("pool"), 24)
    bad_cidr["spec"]["ipv4"]["cidrs"] = ["10.20.0.0/33"]
    with pytest.raises(ApiException) as rejected:
        custom.create_cluster_custom_object(GROUP, "v2alpha1", "ciliumpodippools", bad_cidr)
    assert rejected.value.status == 422
    empty = {**pool(unique("pool"), 24), "spec": {"allowFirstIP": True}}
    with pytest.raises(ApiException) as rejected:
        custom.create_cluster_custom_object(GROUP, "v2alpha1", "ciliumpodippools", empty)
    assert rejected.value.status == 422
    assert "spec.ipv4 or spec.ipv6" in rejected.value.body


def test_apiserver_rejects_ciliumnode_with_negative_first_interface_index(
    custom: client.CustomObjectsApi, node_name: str
) -> None:
    """first-interface-index >= 0 (SPEC section 0, ENI-PARAM-2)."""
    with pytest.raises(ApiException) as rejected:
        custom.create_cluster_custom_object(GROUP, "v2", "ciliumnodes", ciliumnode(node_name, -1))
    assert rejected.value.status == 422
    assert "first-interface-index" in rejected.value.body


def test_ciliumnode_keeps_unmodelled_cilium_fields(custom: client.CustomObjectsApi, node_name: str) -> None:
    """Fields real Cilium agents write (spec.health, spec.addresses) are preserved, not pruned."""
    created = custom.create_cluster_custom_object(GROUP, "v2", "ciliumnodes", ciliumnode(node_name))
    assert created["spec"]["health"] == {"ipv4": "10.0.0.9"}
    assert created["spec"]["addresses"] == [{"type": "InternalIP", "ip": "10.0.0.10"}]
    assert created["spec"]["eni"]["first-interface-index"] == 1


def test_ciliumnode_status_subresource_and_stale_write_conflict(
    custom: client.CustomObjectsApi, node_name: str
) -> None:
    """Status goes through the status subresource; a stale resourceVersion is a 409 (ENI-PUB-1)."""
    created = custom.create_cluster_custom_object(GROUP, "v2", "ciliumnodes", ciliumnode(node_name))
    stale_version = created["metadata"]["resourceVersion"]
    status = {
        "eni": {
            "enis": {
                "eni-1": {
                    "id": "eni-1",
                    "ip": "10.0.1.10",
                    "number": 1,
                    "subnet": {"id": "subnet-1", "cidr": "10.0.1.0/24"},
                    "vpc": {"id": "vpc-1", "primary-cidr": "10.0.0.0/16"},
                    "addresses": ["10.0.1.11", "10.0.1.12"],
                    "tags": {"io.cilium/cilium-managed": "true"},
                }
            }
        },
        "ipam": {"operator-status": {"error": ""}, "used": {"10.0.1.11": {"owner": "kube-system/pod"}}},
    }
    body = {**created, "status": status}
    updated = custom.replace_cluster_custom_object_status(GROUP, "v2", "ciliumnodes", node_name, body)
    assert updated["status"]["eni"]["enis"]["eni-1"]["addresses"] == ["10.0.1.11", "10.0.1.12"]
    assert updated["status"]["ipam"]["used"] == {"10.0.1.11": {"owner": "kube-system/pod"}}
    assert updated["metadata"]["resourceVersion"] != stale_version

    # The main resource ignores status: writing status there does not change it.
    spec_write = {**updated, "status": {"ipam": {"operator-status": {"error": "ignored"}}}}
    after_spec_write = custom.replace_cluster_custom_object(GROUP, "v2", "ciliumnodes", node_name, spec_write)
    assert after_spec_write["status"]["ipam"]["operator-status"]["error"] == ""

    stale = {**created, "status": {"ipam": {"operator-status": {"error": "stale writer"}}}}
    stale["metadata"] = {**created["metadata"], "resourceVersion": stale_version}
    with pytest.raises(ApiException) as conflict:
        custom.replace_cluster_custom_object_status(GROUP, "v2", "ciliumnodes", node_name, stale)
    assert conflict.value.status == 409


def test_ciliumnodeconfig_is_namespaced_and_requires_defaults(
    custom: client.CustomObjectsApi, kube_namespace: str
) -> None:
    """CiliumNodeConfig lives in a namespace (MP-NODE-1); spec.defaults is required."""
    config = {
        "apiVersion": "cilium.io/v2",
        "kind": "CiliumNodeConfig",
        "metadata": {"name": "dc1"},
        "spec": {
            "defaults": {"ipam-default-ip-pool": "dc1-pool"},
            "nodeSelector": {"matchLabels": {"zone": "dc1"}},
        },
    }
    configs = (GROUP, "v2", kube_namespace, "ciliumnodeconfigs")
    created = custom.create_namespaced_custom_object(*configs, config)
    assert created["metadata"]["namespace"] == kube_namespace
    assert created["spec"]["defaults"] == {"ipam-default-ip-pool": "dc1-pool"}
    missing_defaults = {**config, "metadata": {"name": "broken"}, "spec": {"nodeSelector": {}}}
    with pytest.raises(ApiException) as rejected:
        custom.create_namespaced_custom_object(*configs, missing_defaults)
    assert rejected.value.status == 422
    assert "defaults" in rejected.value.body


@pytest.mark.parametrize(
    ("allocated", "complaint"),
    [
        ([{"cidrs": ["10.20.0.0/24"]}], "pool"),
        ([{"pool": "default", "cidrs": ["10.20.0.300/24"]}], "cidrs"),
    ],
)
def test_apiserver_rejects_allocated_pool_without_name_or_with_bad_cidr(
    custom: client.CustomObjectsApi, node_name: str, allocated: list[dict[str, Any]], complaint: str
) -> None:
    """spec.ipam.pools.allocated entries name their pool and hold real CIDRs (MP-CRD-1)."""
    node = ciliumnode(node_name)
    node["spec"]["ipam"]["pools"]["allocated"] = allocated
    with pytest.raises(ApiException) as rejected:
        custom.create_cluster_custom_object(GROUP, "v2", "ciliumnodes", node)
    assert rejected.value.status == 422
    assert complaint in rejected.value.body
