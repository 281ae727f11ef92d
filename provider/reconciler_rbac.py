"""The operator's least-privilege RBAC rules, as plain data (so tests and reviewers read one list).

Why each verb exists:
- ciliumnodes get/list/watch/update/delete: read nodes, write spec.ipam.pools.allocated
  (MP-CRD-1), delete a CiliumNode whose Node is gone (ENI-NODE-1). No create: agents create them.
- ciliumnodes/status update/patch: status.eni.enis (ENI-PUB-1) and operator-status errors.
- ciliumpodippools get/list/watch/create: read pools (MP-POOL-1), auto-create pools (MP-CFG-1).
  Pools have no status subresource and the operator never edits a pool: no update/patch.
- ciliumnodeconfigs get/list/watch: per-node default pool (MP-NODE-1).
- nodes, pods get/list/watch: node deletion (ENI-NODE-1) and pending pods (surge, ENI-ALLOC-2).
- events create/patch: user-facing errors as Kubernetes events (DESIGN: clear errors).
- leases get/create/update, only in the operator's namespace: leader election (OPS-LEAD-1).
"""

from __future__ import annotations

from typing import Any

READ = ["get", "list", "watch"]


def cluster_rules() -> list[dict[str, Any]]:
    """ClusterRole rules (cluster-scoped objects and cross-namespace reads)."""
    return [
        {"apiGroups": ["cilium.io"], "resources": ["ciliumnodes"], "verbs": [*READ, "update", "delete"]},
        {"apiGroups": ["cilium.io"], "resources": ["ciliumnodes/status"], "verbs": ["update", "patch"]},
        {"apiGroups": ["cilium.io"], "resources": ["ciliumpodippools"], "verbs": [*READ, "create"]},
        {"apiGroups": ["cilium.io"], "resources": ["ciliumnodeconfigs"], "verbs": list(READ)},
        {"apiGroups": [""], "resources": ["nodes"], "verbs": list(READ)},
        {"apiGroups": [""], "resources": ["pods"], "verbs": list(READ)},
        {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]},
    ]


def namespace_rules() -> list[dict[str, Any]]:
    """Role rules in the operator's own namespace."""
    return [
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "create", "update"]},
    ]
