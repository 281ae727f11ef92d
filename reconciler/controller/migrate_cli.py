"""`cilium-ipam pools migrate`: read the cluster, plan MP-MIG-1 with the multi-pool library, print it.

Dry run by default (the plan only). `--update-pool` performs step 1 -- the pool's new CIDR list,
written with the resourceVersion that was planned against -- and nothing else: cordon, drain,
CiliumNode deletion and agent restarts stay with the platform team's own tooling, one node group at
a time, exactly as the printed commands say.
"""

from __future__ import annotations

import argparse
import sys

from reconciler.cluster.store import (
    CILIUM_NODE,
    CILIUM_POD_IP_POOL,
    NODE,
    POD,
    ClusterStore,
    Conflict,
    NotFound,
    StoreError,
)
from reconciler.model import CiliumNode
from reconciler.multipool.migrate import ZONE_LABEL, PodAddress, plan_migration, render_migration
from reconciler.multipool.pools import CiliumPodIPPool


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pool", required=True, help="the CiliumPodIPPool to migrate")
    parser.add_argument("--ipv4-cidrs", default=None, help="the pool's new IPv4 CIDR list (comma separated)")
    parser.add_argument("--ipv6-cidrs", default=None, help="the pool's new IPv6 CIDR list (comma separated)")
    parser.add_argument("--group-label", default=ZONE_LABEL, help="node label that forms the node groups")
    parser.add_argument("--kubeconfig", default="", help="kubeconfig path; empty = in-cluster")
    parser.add_argument("--update-pool", action="store_true", help="perform step 1: write the new CIDRs")


def _split(value: str | None) -> list[str] | None:
    return None if value is None else [c.strip() for c in value.split(",") if c.strip()]


def _nodes_with_labels(store: ClusterStore) -> list[CiliumNode]:
    """CiliumNodes, labelled like their Kubernetes Node (the group label lives on the Node)."""
    node_labels = {
        o["metadata"]["name"]: o["metadata"].get("labels") or {} for o in store.list(NODE).items
    }
    out = []
    for obj in store.list(CILIUM_NODE).items:
        node = CiliumNode.from_obj(obj)
        labels = {**node_labels.get(node.name, {}), **dict(node.labels)}
        out.append(CiliumNode.from_obj({**obj, "metadata": {**obj["metadata"], "labels": labels}}))
    return out


def _pods(store: ClusterStore) -> list[PodAddress]:
    out = []
    for obj in store.list(POD).items:
        status = obj.get("status") or {}
        ips = tuple(p.get("ip", "") for p in status.get("podIPs") or []) or (
            (status["podIP"],) if status.get("podIP") else ()
        )
        node = (obj.get("spec") or {}).get("nodeName")
        if ips and node:
            out.append(PodAddress(obj["metadata"].get("namespace", ""), obj["metadata"]["name"], node, ips))
    return out


def run_migrate(args: argparse.Namespace, store: ClusterStore | None = None) -> int:
    new: dict[int, list[str]] = {}
    for version, raw in ((4, args.ipv4_cidrs), (6, args.ipv6_cidrs)):
        cidrs = _split(raw)
        if cidrs is not None:
            new[version] = cidrs
    if not new:
        sys.stderr.write("cilium-ipam pools migrate: give --ipv4-cidrs and/or --ipv6-cidrs (the new lists)\n")
        return 2
    try:
        if store is None:
            from reconciler.cluster.kubernetes import KubernetesStore

            store = KubernetesStore.from_kubeconfig(args.kubeconfig or None)
        try:
            pool_obj = store.get(CILIUM_POD_IP_POOL, args.pool)
        except NotFound:
            sys.stderr.write(f"cilium-ipam pools migrate: CiliumPodIPPool {args.pool} does not exist\n")
            return 2
        current = CiliumPodIPPool.from_obj(pool_obj)
        others = [CiliumPodIPPool.from_obj(o) for o in store.list(CILIUM_POD_IP_POOL).items]
        plan = plan_migration(
            current, new, _nodes_with_labels(store), _pods(store), others, args.group_label,
            dry_run=not args.update_pool,
        )
        sys.stdout.write(render_migration(plan))
        if not plan.ok:
            return 2
        if args.update_pool:
            spec = pool_obj.setdefault("spec", {})
            for version, cidrs in new.items():
                spec.setdefault(f"ipv{version}", {})["cidrs"] = cidrs
            store.update(CILIUM_POD_IP_POOL, pool_obj)
            sys.stdout.write(f"step 1 done: CiliumPodIPPool {args.pool} now lists the new CIDRs\n")
        return 0
    except Conflict:
        sys.stderr.write(
            f"cilium-ipam pools migrate: CiliumPodIPPool {args.pool} changed while planning; run it again\n"
        )
        return 1
    except StoreError as exc:
        sys.stderr.write(f"cilium-ipam pools migrate: {exc}\n")
        return 1
