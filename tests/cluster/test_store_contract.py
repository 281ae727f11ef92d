"""ClusterStore contract: the MemoryStore must behave like the real kube-apiserver (DESIGN.md ports).

Every test runs twice (tests/cluster/conftest.py): on MemoryStore and on KubernetesStore against the
real kube-apiserver + etcd. ENI-PUB-1 relies on resourceVersion conflicts and on the status
subresource; the informers rely on list+watch, resume and 410 Gone.
"""

from __future__ import annotations

from typing import Any

import pytest

from reconciler.cluster.store import (
    CILIUM_NODE,
    LEASE,
    NODE,
    POD,
    AlreadyExists,
    Conflict,
    Gone,
    Invalid,
    Kind,
    NotFound,
    WatchEvent,
    resource_version_of,
)
from tests.cluster.conftest import StoreUnderTest


def cilium_node(name: str, pre_allocate: int = 8) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"test": "contract"}},
        "spec": {"instance-id": "i-0123", "ipam": {"pre-allocate": pre_allocate}},
    }


def pod(name: str, namespace: str, node: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "busybox"}]},
    }


def collect(
    s: StoreUnderTest, kind: Kind, rv: str, count: int, name: str | None = None, namespace: str | None = None
) -> list[WatchEvent]:
    """The first `count` object events (of `name`, if given) after `rv`; bounded by a 10 s watch."""
    got: list[WatchEvent] = []
    stream = s.store.watch(kind, rv, namespace=namespace, timeout=10)
    try:
        for event in stream:
            if event.type == "BOOKMARK":
                continue
            if name and event.object["metadata"]["name"] != name:
                continue
            got.append(event)
            if len(got) >= count:
                break
    finally:
        stream.close()
    return got


def test_create_then_get_returns_the_object_with_a_resource_version(subject: StoreUnderTest) -> None:
    name = subject.unique("cn")
    created = subject.store.create(CILIUM_NODE, cilium_node(name))
    assert created["metadata"]["name"] == name
    assert resource_version_of(created)
    got = subject.store.get(CILIUM_NODE, name)
    assert got["spec"]["instance-id"] == "i-0123"
    assert got["metadata"]["labels"] == {"test": "contract"}
    assert resource_version_of(got) == resource_version_of(created)
    assert got["kind"] == "CiliumNode" and got["apiVersion"] == "cilium.io/v2"


def test_create_ignores_status_when_the_kind_has_a_status_subresource(subject: StoreUnderTest) -> None:
    name = subject.unique("cn")
    obj = cilium_node(name)
    obj["status"] = {"ipam": {"operator-status": {"error": "should be dropped"}}}
    subject.store.create(CILIUM_NODE, obj)
    assert "error" not in (subject.store.get(CILIUM_NODE, name).get("status") or {}).get("ipam", {}).get(
        "operator-status", {}
    )


def test_create_of_a_taken_name_raises_already_exists(subject: StoreUnderTest) -> None:
    name = subject.unique("cn")
    subject.store.create(CILIUM_NODE, cilium_node(name))
    with pytest.raises(AlreadyExists):
        subject.store.create(CILIUM_NODE, cilium_node(name))


def test_get_and_delete_of_a_missing_object_raise_not_found(subject: StoreUnderTest) -> None:
    with pytest.raises(NotFound):
        subject.store.get(CILIUM_NODE, subject.unique("missing"))
    with pytest.raises(NotFound):
        subject.store.delete(CILIUM_NODE, subject.unique("missing"))


def test_list_holds_created_objects_and_a_resource_version(subject: StoreUnderTest) -> None:
    names = {subject.unique("cn") for _ in range(3)}
    for name in names:
        subject.store.create(CILIUM_NODE, cilium_node(name))
    listed = subject.store.list(CILIUM_NODE)
    assert listed.resource_version
    assert names <= {o["metadata"]["name"] for o in listed.items}
    assert all(o["kind"] == "CiliumNode" for o in listed.items)


def test_list_of_a_namespaced_kind_filters_by_namespace(subject: StoreUnderTest) -> None:
    name = subject.unique("pod")
    subject.store.create(POD, pod(name, subject.namespace, "node-a"))
    mine = subject.store.list(POD, namespace=subject.namespace)
    assert [o["metadata"]["name"] for o in mine.items] == [name]
    everywhere = subject.store.list(POD)
    assert name in {o["metadata"]["name"] for o in everywhere.items}


def test_watch_from_a_listed_version_sees_add_modify_delete_in_order(subject: StoreUnderTest) -> None:
    rv = subject.store.list(CILIUM_NODE).resource_version
    name = subject.unique("cn")
    created = subject.store.create(CILIUM_NODE, cilium_node(name))
    created["spec"]["ipam"]["pre-allocate"] = 16
    updated = subject.store.update(CILIUM_NODE, created)
    subject.store.delete(CILIUM_NODE, name)
    events = collect(subject, CILIUM_NODE, rv, 3, name=name)
    assert [e.type for e in events] == ["ADDED", "MODIFIED", "DELETED"]
    assert events[1].object["spec"]["ipam"]["pre-allocate"] == 16
    assert events[1].resource_version == resource_version_of(updated)
    assert int(events[2].resource_version) > int(events[1].resource_version)


def test_watch_resumes_from_the_last_seen_version_without_replay(subject: StoreUnderTest) -> None:
    rv = subject.store.list(CILIUM_NODE).resource_version
    first, second = subject.unique("cn"), subject.unique("cn")
    subject.store.create(CILIUM_NODE, cilium_node(first))
    [seen] = collect(subject, CILIUM_NODE, rv, 1, name=first)
    subject.store.create(CILIUM_NODE, cilium_node(second))
    resumed = collect(subject, CILIUM_NODE, seen.resource_version, 1)
    assert [(e.type, e.object["metadata"]["name"]) for e in resumed] == [("ADDED", second)]


def test_watch_of_a_namespaced_kind_sees_only_its_namespace(subject: StoreUnderTest) -> None:
    rv = subject.store.list(POD, namespace=subject.namespace).resource_version
    name = subject.unique("pod")
    subject.store.create(POD, pod(name, subject.namespace, "node-a"))
    [event] = collect(subject, POD, rv, 1, namespace=subject.namespace)
    assert event.object["metadata"]["name"] == name
    assert event.object["spec"]["nodeName"] == "node-a"


def test_watch_from_a_version_older_than_the_retained_history_raises_gone(subject: StoreUnderTest) -> None:
    name = subject.unique("cn")
    obj = subject.store.create(CILIUM_NODE, cilium_node(name))
    for n in range(40):  # outrun the MemoryStore's small history; the apiserver compacted rv 1 long ago
        obj["spec"]["ipam"]["pre-allocate"] = n
        obj = subject.store.update(CILIUM_NODE, obj)
    with pytest.raises(Gone):
        collect(subject, CILIUM_NODE, "1", 1)


def test_update_with_the_current_version_changes_spec_but_never_status(subject: StoreUnderTest) -> None:
    name = subject.unique("cn")
    created = subject.store.create(CILIUM_NODE, cilium_node(name))
    with_status = dict(created, status={"ipam": {"operator-status": {"error": "kept"}}})
    with_status = subject.store.update_status(CILIUM_NODE, with_status)
    with_status["spec"]["ipam"]["pre-allocate"] = 4
    with_status["status"] = {"ipam": {"operator-status": {"error": "ignored by a spec update"}}}
    updated = subject.store.update(CILIUM_NODE, with_status)
    assert int(resource_version_of(updated)) > int(resource_version_of(created))
    stored = subject.store.get(CILIUM_NODE, name)
    assert stored["spec"]["ipam"]["pre-allocate"] == 4
    assert stored["status"]["ipam"]["operator-status"]["error"] == "kept"


def test_update_status_changes_status_but_never_spec(subject: StoreUnderTest) -> None:
    name = subject.unique("cn")
    created = subject.store.create(CILIUM_NODE, cilium_node(name, pre_allocate=8))
    created["spec"]["ipam"]["pre-allocate"] = 99
    created["status"] = {"eni": {"enis": {"eni-1": {"id": "eni-1", "addresses": ["10.0.0.5"]}}}}
    updated = subject.store.update_status(CILIUM_NODE, created)
    assert int(resource_version_of(updated)) > int(resource_version_of(created))
    stored = subject.store.get(CILIUM_NODE, name)
    assert stored["spec"]["ipam"]["pre-allocate"] == 8
    assert stored["status"]["eni"]["enis"]["eni-1"]["addresses"] == ["10.0.0.5"]


def test_a_stale_version_conflicts_on_update_status_and_delete(subject: StoreUnderTest) -> None:
    name = subject.unique("cn")
    stale = subject.store.create(CILIUM_NODE, cilium_node(name))
    fresh = dict(stale, spec={**stale["spec"], "instance-id": "i-newer"})
    subject.store.update(CILIUM_NODE, fresh)
    stale["spec"]["ipam"]["pre-allocate"] = 1
    with pytest.raises(Conflict):
        subject.store.update(CILIUM_NODE, stale)
    with pytest.raises(Conflict):
        subject.store.update_status(CILIUM_NODE, dict(stale, status={"ipam": {}}))
    with pytest.raises(Conflict):
        subject.store.delete(CILIUM_NODE, name, resource_version=resource_version_of(stale))
    assert subject.store.get(CILIUM_NODE, name)["spec"]["instance-id"] == "i-newer"


def test_an_update_without_a_resource_version_is_refused(subject: StoreUnderTest) -> None:
    name = subject.unique("cn")
    subject.store.create(CILIUM_NODE, cilium_node(name))
    with pytest.raises(Invalid, match="resourceVersion"):
        subject.store.update(CILIUM_NODE, cilium_node(name, pre_allocate=1))


def test_delete_removes_the_object(subject: StoreUnderTest) -> None:
    name = subject.unique("cn")
    created = subject.store.create(CILIUM_NODE, cilium_node(name))
    subject.store.delete(CILIUM_NODE, name, resource_version=resource_version_of(created))
    with pytest.raises(NotFound):
        subject.store.get(CILIUM_NODE, name)
    assert name not in {o["metadata"]["name"] for o in subject.store.list(CILIUM_NODE).items}


def test_core_node_and_pod_status_go_through_the_status_subresource(subject: StoreUnderTest) -> None:
    node_name = subject.unique("node")
    node = subject.store.create(NODE, {"metadata": {"name": node_name}, "spec": {}})
    node["status"] = {"addresses": [{"type": "InternalIP", "address": "10.0.0.1"}]}
    subject.store.update_status(NODE, node)
    assert subject.store.get(NODE, node_name)["status"]["addresses"][0]["address"] == "10.0.0.1"
    pod_name = subject.unique("pod")
    created = subject.store.create(POD, pod(pod_name, subject.namespace, node_name))
    created["status"] = {"podIP": "10.0.0.9", "podIPs": [{"ip": "10.0.0.9"}]}
    subject.store.update_status(POD, created)
    assert subject.store.get(POD, pod_name, subject.namespace)["status"]["podIP"] == "10.0.0.9"
    subject.store.delete(NODE, node_name)


def test_leases_are_namespaced_and_conflict_on_stale_versions(subject: StoreUnderTest) -> None:
    name = subject.unique("lease")
    lease = subject.store.create(
        LEASE,
        {
            "metadata": {"name": name, "namespace": subject.namespace},
            "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15},
        },
    )
    renewed = dict(lease, spec={**lease["spec"], "holderIdentity": "b"})
    subject.store.update(LEASE, renewed)
    with pytest.raises(Conflict):
        subject.store.update(LEASE, dict(lease, spec={**lease["spec"], "holderIdentity": "c"}))
    assert subject.store.get(LEASE, name, subject.namespace)["spec"]["holderIdentity"] == "b"
    with pytest.raises(Invalid):
        subject.store.get(LEASE, name)
