"""CiliumPodIPPool, CiliumNodeConfig and CniConfiguration against the real kube-apiserver.

Covers MP-POOL-2 (in-use CIDR removal / pool deletion refused, naming nodes), MP-POOL-3 (immutable
fields), MP-POOL-5 (overlap with another pool refused, naming both), MP-NODE-1 (missing default pool
warning) and ENI-ARCH-2 (cni-configuration ConfigMap), plus idempotent re-create / delete.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from provider.cni_configuration import CniConfigurationProvider, EniOptions, IpamOptions
from provider.errors import ProviderError
from provider.node_config import CiliumNodeConfigProvider
from provider.pod_ip_pool import CiliumPodIPPoolProvider, pool_spec

pytestmark = pytest.mark.kube


@pytest.fixture()
def unique() -> str:
    return uuid.uuid4().hex[:8]


@pytest.fixture()
def octet(unique: str) -> int:
    """A second octet inside 100.64.0.0/10 unlikely to collide with other tests' pools."""
    return 64 + int(unique, 16) % 64


@pytest.fixture()
def custom(kube: Any) -> Any:
    from kubernetes import client

    return client.CustomObjectsApi(kube)


@pytest.fixture()
def cleanup(custom: Any) -> Iterator[list[tuple[str, str]]]:
    """Cluster-scoped objects (plural, name) to delete after the test, whatever happened."""
    created: list[tuple[str, str]] = []
    yield created
    for plural, name in created:
        version = "v2alpha1" if plural == "ciliumpodippools" else "v2"
        try:
            custom.delete_cluster_custom_object("cilium.io", version, plural, name)
        except Exception as error:
            if getattr(error, "status", 0) != 404:
                raise


def make_node(custom: Any, name: str, pool: str, cidrs: list[str]) -> None:
    body = {
        "apiVersion": "cilium.io/v2",
        "kind": "CiliumNode",
        "metadata": {"name": name},
        "spec": {"ipam": {"pools": {"allocated": [{"pool": pool, "cidrs": cidrs}]}}},
    }
    custom.create_cluster_custom_object("cilium.io", "v2", "ciliumnodes", body)


def pool_props(name: str, kubeconfig: str, cidrs: list[str], mask: int = 24, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "spec": pool_spec(ipv4_cidrs=cidrs, ipv4_mask_size=mask),
        "labels": {"team": "net"},
        "annotations": {},
        "kubeconfig": kubeconfig,
        "__provider": "opaque",
        **extra,
    }


def live_pool(custom: Any, name: str) -> dict[str, Any]:
    return dict(custom.get_cluster_custom_object("cilium.io", "v2alpha1", "ciliumpodippools", name))


def test_pool_crud_is_idempotent_and_leaves_nothing(
    custom: Any, kubeconfig: str, unique: str, octet: int, cleanup: list[tuple[str, str]]
) -> None:
    provider = CiliumPodIPPoolProvider()
    name = f"pool-{unique}"
    cleanup.append(("ciliumpodippools", name))
    checked = provider.check({}, pool_props(name, kubeconfig, [f"100.{octet}.0.0/20"]))
    assert checked.failures == []
    created = provider.create(checked.inputs)
    assert created.id == name
    assert live_pool(custom, name)["spec"] == {"ipv4": {"cidrs": [f"100.{octet}.0.0/20"], "maskSize": 24}}
    assert provider.create(checked.inputs).id == name  # re-create of the same inputs adopts

    grown = {
        **checked.inputs,
        "spec": pool_spec(ipv4_cidrs=[f"100.{octet}.0.0/20", f"100.{octet}.16.0/20"], ipv4_mask_size=24),
        "labels": {"tier": "x"},
    }
    assert provider.check(checked.inputs, grown).failures == []
    outs = provider.update(name, created.outs or {}, grown).outs or {}
    live = live_pool(custom, name)
    assert live["spec"]["ipv4"]["cidrs"] == [f"100.{octet}.0.0/20", f"100.{octet}.16.0/20"]
    assert live["metadata"]["labels"] == {"tier": "x"}
    read = provider.read(name, outs)
    assert read.id == name and read.outs is not None and read.outs["spec"] == grown["spec"]

    different = {**checked.inputs, "spec": pool_spec(ipv4_cidrs=[f"100.{octet}.32.0/20"], ipv4_mask_size=24)}
    with pytest.raises(ProviderError, match="already exists with a different spec"):
        provider.create(different)

    provider.delete(name, outs)
    provider.delete(name, outs)  # idempotent
    assert provider.read(name, outs).id == ""


def test_mp_pool_5_overlapping_pool_refused_naming_both(
    kubeconfig: str, unique: str, octet: int, cleanup: list[tuple[str, str]]
) -> None:
    provider = CiliumPodIPPoolProvider()
    first, second = f"a-{unique}", f"b-{unique}"
    cleanup += [("ciliumpodippools", first), ("ciliumpodippools", second)]
    provider.create(pool_props(first, kubeconfig, [f"100.{octet}.0.0/16"]))
    overlapping = pool_props(second, kubeconfig, [f"100.{octet}.128.0/20"], mask=26)
    result = provider.check({}, overlapping)  # refused already in preview when the cluster is reachable
    assert len(result.failures) == 1
    assert first in result.failures[0].reason and second in result.failures[0].reason
    with pytest.raises(ProviderError, match=f"{second}.*overlaps.*{first}.*MP-POOL-5"):
        provider.create(overlapping)
    assert provider.read(second, overlapping).id == ""  # nothing was created
    provider.delete(first, pool_props(first, kubeconfig, []))


def test_mp_pool_5_race_past_the_pre_check_is_undone(
    custom: Any,
    kubeconfig: str,
    unique: str,
    octet: int,
    cleanup: list[tuple[str, str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two overlapping pools created concurrently both pass the pre-check; the post-check undoes ours."""
    import provider.pod_ip_pool as module

    provider = CiliumPodIPPoolProvider()
    mine, theirs = f"mine-{unique}", f"theirs-{unique}"
    cleanup += [("ciliumpodippools", mine), ("ciliumpodippools", theirs)]
    provider.create(pool_props(theirs, kubeconfig, [f"100.{octet}.0.0/20"]))
    monkeypatch.setattr(module, "_refuse_overlaps", lambda *_: None)  # as if `theirs` came a moment later
    with pytest.raises(ProviderError, match=f"{mine}.*overlaps.*{theirs}.*created at the same time"):
        provider.create(pool_props(mine, kubeconfig, [f"100.{octet}.8.0/21"]))
    assert provider.read(mine, {"kubeconfig": kubeconfig}).id == ""  # nothing of ours is left

    far = pool_props(mine, kubeconfig, [f"100.{octet}.64.0/20"])
    created = provider.create(far)
    grown = {
        **far,
        "spec": pool_spec(ipv4_cidrs=[f"100.{octet}.64.0/20", f"100.{octet}.0.0/24"], ipv4_mask_size=24),
    }
    with pytest.raises(ProviderError, match="created at the same time"):
        provider.update(mine, created.outs or {}, grown)
    assert live_pool(custom, mine)["spec"] == far["spec"]  # previous ranges restored


def test_mp_pool_2_in_use_cidr_removal_and_pool_deletion_refused_naming_nodes(
    custom: Any, kubeconfig: str, unique: str, octet: int, cleanup: list[tuple[str, str]]
) -> None:
    provider = CiliumPodIPPoolProvider()
    name, node = f"used-{unique}", f"node-{unique}"
    cleanup += [("ciliumpodippools", name), ("ciliumnodes", node)]
    old = pool_props(name, kubeconfig, [f"100.{octet}.0.0/20", f"100.{octet}.16.0/20"])
    created = provider.create(old)
    make_node(custom, node, name, [f"100.{octet}.3.0/24"])

    drop_used = {**old, "spec": pool_spec(ipv4_cidrs=[f"100.{octet}.16.0/20"], ipv4_mask_size=24)}
    with pytest.raises(ProviderError, match=f"cannot remove 100.{octet}.0.0/20 while nodes use it.*{node}"):
        provider.update(name, created.outs or {}, drop_used)
    assert live_pool(custom, name)["spec"] == old["spec"]

    drop_free = {**old, "spec": pool_spec(ipv4_cidrs=[f"100.{octet}.0.0/20"], ipv4_mask_size=24)}
    outs = provider.update(name, created.outs or {}, drop_free).outs or {}
    assert live_pool(custom, name)["spec"]["ipv4"]["cidrs"] == [f"100.{octet}.0.0/20"]

    with pytest.raises(ProviderError, match=f"{name} is still in use.*{node} \\(100.{octet}.3.0/24\\)"):
        provider.delete(name, outs)
    assert live_pool(custom, name)

    custom.delete_cluster_custom_object("cilium.io", "v2", "ciliumnodes", node)
    provider.delete(name, outs)
    assert provider.read(name, outs).id == ""


def test_mp_pool_3_update_refuses_mask_change_even_without_check(
    custom: Any, kubeconfig: str, unique: str, octet: int, cleanup: list[tuple[str, str]]
) -> None:
    provider = CiliumPodIPPoolProvider()
    name = f"mask-{unique}"
    cleanup.append(("ciliumpodippools", name))
    old = pool_props(name, kubeconfig, [f"100.{octet}.0.0/20"])
    created = provider.create(old)
    new = {**old, "spec": pool_spec(ipv4_cidrs=[f"100.{octet}.0.0/20"], ipv4_mask_size=26)}
    assert "MP-POOL-3" in provider.check(old, new).failures[0].reason
    with pytest.raises(ProviderError, match="cilium-ipam pools migrate"):
        provider.update(name, created.outs or {}, new)
    assert live_pool(custom, name)["spec"]["ipv4"]["maskSize"] == 24
    provider.delete(name, created.outs or {})


def test_mp_node_1_node_config_warns_on_missing_default_pool(
    custom: Any,
    kubeconfig: str,
    kube_namespace: str,
    unique: str,
    octet: int,
    cleanup: list[tuple[str, str]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    provider = CiliumNodeConfigProvider()
    pool = f"dc1-{unique}"
    props = {
        "name": "dc1",
        "namespace": kube_namespace,
        "defaults": {"ipam-default-ip-pool": pool},
        "node_selector": {"matchLabels": {"zone": "dc1"}},
        "kubeconfig": kubeconfig,
    }
    checked = provider.check({}, props)
    assert checked.failures == []
    created = provider.create(checked.inputs)
    assert created.id == f"{kube_namespace}/dc1"
    assert created.outs is not None and len(created.outs["warnings"]) == 1
    assert f"no CiliumPodIPPool {pool!r} exists" in created.outs["warnings"][0]
    assert pool in capsys.readouterr().err
    live = custom.get_namespaced_custom_object("cilium.io", "v2", kube_namespace, "ciliumnodeconfigs", "dc1")
    assert live["spec"] == {
        "defaults": {"ipam-default-ip-pool": pool},
        "nodeSelector": {"matchLabels": {"zone": "dc1"}},
    }
    assert provider.create(checked.inputs).id == created.id  # idempotent

    cleanup.append(("ciliumpodippools", pool))
    CiliumPodIPPoolProvider().create(pool_props(pool, kubeconfig, [f"100.{octet}.0.0/20"]))
    new = {**checked.inputs, "node_selector": {"matchLabels": {"zone": "dc2"}}}
    diff = provider.diff(created.id, created.outs, new)
    assert diff.changes and diff.replaces == []
    outs = provider.update(created.id, created.outs, new).outs or {}
    assert outs["warnings"] == []
    live = custom.get_namespaced_custom_object("cilium.io", "v2", kube_namespace, "ciliumnodeconfigs", "dc1")
    assert live["spec"]["nodeSelector"] == {"matchLabels": {"zone": "dc2"}}
    assert provider.diff(created.id, outs, {**new, "namespace": "other"}).replaces == ["namespace"]
    provider.delete(created.id, outs)
    provider.delete(created.id, outs)
    assert provider.read(created.id, outs).id == ""


def test_node_config_check_requires_selector_and_defaults() -> None:
    provider = CiliumNodeConfigProvider()
    reasons = {
        f.property: f.reason for f in provider.check({}, {"name": "Bad_Name", "defaults": {}}).failures
    }
    assert set(reasons) == {"name", "defaults", "node_selector"}
    assert "matches no node" in reasons["node_selector"]


def test_eni_arch_2_cni_configuration_configmap(kube: Any, kubeconfig: str, kube_namespace: str) -> None:
    from kubernetes import client

    core = client.CoreV1Api(kube)
    provider = CniConfigurationProvider()
    eni = EniOptions(
        subnet_tags={"foo": "true"}, first_interface_index=1, delete_on_termination=False
    ).to_cni()
    ipam = IpamOptions(min_allocate=10, pre_allocate=16).to_cni()
    props = {"namespace": kube_namespace, "eni": eni, "ipam": ipam, "kubeconfig": kubeconfig}
    checked = provider.check({}, props)
    assert checked.failures == [] and checked.inputs["name"] == "cni-configuration"
    created = provider.create(checked.inputs)
    assert provider.create(checked.inputs).id == created.id
    live = core.read_namespaced_config_map("cni-configuration", kube_namespace)
    document = json.loads(live.data["cni-config"])
    plugin = document["plugins"][0]
    assert document["name"] == "cilium" and plugin["type"] == "cilium-cni"
    assert plugin["eni"] == {
        "subnet-tags": {"foo": "true"},
        "first-interface-index": 1,
        "delete-on-termination": False,
    }
    assert plugin["ipam"] == {"min-allocate": 10, "pre-allocate": 16}

    core.patch_namespaced_config_map("cni-configuration", kube_namespace, {"data": {"other": "keep"}})
    new = {**checked.inputs, "ipam": {"min-allocate": 4}}
    assert provider.diff(created.id, created.outs or {}, new).replaces == []
    provider.update(created.id, created.outs or {}, new)
    live = core.read_namespaced_config_map("cni-configuration", kube_namespace)
    assert json.loads(live.data["cni-config"])["plugins"][0]["ipam"] == {"min-allocate": 4}
    assert live.data["other"] == "keep"
    provider.delete(created.id, created.outs or {})
    provider.delete(created.id, created.outs or {})
    assert provider.read(created.id, created.outs or {}).id == ""


def test_cni_configuration_check_rejects_typos_and_bad_values() -> None:
    provider = CniConfigurationProvider()
    result = provider.check(
        {},
        {
            "eni": {"subnet-tag": {"a": "b"}, "security-groups": ["x-1"]},
            "ipam": {"min-allocate": 20, "max-allocate": 10, "pre-allocate": -1},
        },
    )
    reasons = [f.reason for f in result.failures]
    assert any("'subnet-tag' is not a Cilium eni parameter" in r for r in reasons)
    assert any("security-groups must be a list of ids starting with 'sg-'" in r for r in reasons)
    assert any("pre-allocate must be a whole number" in r for r in reasons)
    assert any("min-allocate 20 exceeds ipam.max-allocate 10" in r for r in reasons)
