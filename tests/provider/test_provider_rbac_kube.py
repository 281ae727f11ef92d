"""The operator's RBAC rules, bound for real and checked with SubjectAccessReview on the real apiserver.

Least privilege means both directions: every verb the operator needs is allowed, and the nearest
things it does not need (pool updates, CiliumNode creation, Secrets, leases elsewhere) are denied.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from provider.reconciler_rbac import cluster_rules, namespace_rules

pytestmark = pytest.mark.kube

# (group, resource, verb, namespace or "" for cluster-wide) -> allowed?
NEEDED = [("cilium.io", "ciliumnodes", verb, "") for verb in ("get", "list", "watch", "update", "delete")] + [
    ("cilium.io", "ciliumnodes/status", "update", ""),
    ("cilium.io", "ciliumnodes/status", "patch", ""),
    ("cilium.io", "ciliumpodippools", "create", ""),
    ("cilium.io", "ciliumpodippools", "watch", ""),
    ("cilium.io", "ciliumnodeconfigs", "list", "kube-system"),
    ("", "nodes", "watch", ""),
    ("", "pods", "list", ""),
    ("", "events", "create", "default"),
]
NOT_NEEDED = [
    ("cilium.io", "ciliumnodes", "create", ""),
    ("cilium.io", "ciliumpodippools", "update", ""),
    ("cilium.io", "ciliumpodippools", "delete", ""),
    ("cilium.io", "ciliumnodeconfigs", "update", "kube-system"),
    ("", "nodes", "update", ""),
    ("", "pods", "delete", "default"),
    ("", "secrets", "get", "kube-system"),
    ("", "configmaps", "list", ""),
    ("coordination.k8s.io", "leases", "update", "default"),
    ("coordination.k8s.io", "leases", "delete", "OWN"),
]


@pytest.fixture()
def bound_account(kube: Any, kube_namespace: str) -> Iterator[str]:
    from kubernetes import client

    rbac = client.RbacAuthorizationV1Api(kube)
    name = f"ipam-{uuid.uuid4().hex[:8]}"
    subject = [{"kind": "ServiceAccount", "name": name, "namespace": kube_namespace}]
    rbac.create_cluster_role({"metadata": {"name": name}, "rules": cluster_rules()})
    rbac.create_cluster_role_binding(
        {
            "metadata": {"name": name},
            "subjects": subject,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        }
    )
    rbac.create_namespaced_role(kube_namespace, {"metadata": {"name": name}, "rules": namespace_rules()})
    rbac.create_namespaced_role_binding(
        kube_namespace,
        {
            "metadata": {"name": name},
            "subjects": subject,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
        },
    )
    try:
        yield f"system:serviceaccount:{kube_namespace}:{name}"
    finally:
        rbac.delete_cluster_role_binding(name)
        rbac.delete_cluster_role(name)


def allowed(kube: Any, user: str, group: str, resource: str, verb: str, namespace: str) -> bool:
    from kubernetes import client

    plural, _, sub = resource.partition("/")
    attributes = {"group": group, "resource": plural, "verb": verb}
    if sub:
        attributes["subresource"] = sub
    if namespace:
        attributes["namespace"] = namespace
    review = {"spec": {"user": user, "groups": ["system:serviceaccounts"], "resourceAttributes": attributes}}
    result = client.AuthorizationV1Api(kube).create_subject_access_review(review)
    return bool(result.status.allowed)


def test_operator_rbac_allows_exactly_what_it_needs(
    kube: Any, kube_namespace: str, bound_account: str
) -> None:
    own = [
        (g, r, v, kube_namespace)
        for g, r, v in (("coordination.k8s.io", "leases", verb) for verb in ("get", "create", "update"))
    ]
    for group, resource, verb, namespace in NEEDED + own:
        assert allowed(kube, bound_account, group, resource, verb, namespace), (resource, verb, namespace)
    for group, resource, verb, namespace in NOT_NEEDED:
        where = kube_namespace if namespace == "OWN" else namespace
        assert not allowed(kube, bound_account, group, resource, verb, where), (resource, verb, where)
