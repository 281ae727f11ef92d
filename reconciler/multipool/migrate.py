"""`cilium-ipam pools migrate`: plan the documented procedure for changing an in-use pool's CIDRs (MP-MIG-1).

The seed's procedure, made explicit and checkable before anything is touched:

1. update the pool (new CIDR list; maskSize / allowFirstIP / allowLastIP must not change, MP-POOL-3);
2. expect the operator to warn once per still-used block (`CIDR from pool still in use by node`);
3. restart the operator;
4. per node group (nodes grouped by a label, default the zone label): cordon, drain, delete the
   CiliumNode, restart the agent on those nodes, uncordon.

`plan_migration(...)` is pure: it returns a `MigrationPlan` with structured `Step`s naming the nodes,
the blocks that leave the pool and the pods whose IPs lie in them; `render_migration(plan)` turns it
into text. The plan is a dry run by default (`dry_run=True`); executing the steps is the caller's job
(the CLI wiring lives in the controller).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from reconciler.cidr import CidrError, IPNetwork, contains, overlaps, parse_cidr
from reconciler.model import CiliumNode
from reconciler.multipool.operator import ORPHAN_WARNING, _immutable_changes, join_sentences
from reconciler.multipool.pools import CiliumPodIPPool, PoolFamily, pool_networks, pool_problems

ZONE_LABEL = "topology.kubernetes.io/zone"
NO_GROUP = "<no label>"
AGENT_SELECTOR = "app.kubernetes.io/name=cilium-agent"


@dataclass(frozen=True)
class PodAddress:
    """A running pod and its IPs (input to the plan: which pods a step disturbs)."""

    namespace: str
    name: str
    node: str
    ips: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True)
class Step:
    """One step of the procedure."""

    kind: str  # update-pool | expect-warnings | restart-operator | cordon | drain | delete-ciliumnode
    # | restart-agent | uncordon
    description: str
    group: str = ""
    nodes: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    blocks: tuple[tuple[str, str], ...] = ()  # (node, cidr) leaving the pool
    pods: tuple[str, ...] = ()  # namespace/name disturbed by this step


@dataclass(frozen=True)
class MigrationPlan:
    pool: str
    dry_run: bool
    group_label: str
    removed_cidrs: tuple[str, ...]
    added_cidrs: tuple[str, ...]
    groups: Mapping[str, tuple[str, ...]]
    steps: tuple[Step, ...]
    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    new_pool: CiliumPodIPPool | None = field(default=None, compare=False)

    @property
    def ok(self) -> bool:
        return not self.errors


def _with_cidrs(pool: CiliumPodIPPool, new_cidrs: Mapping[int, Sequence[str]]) -> CiliumPodIPPool:
    fams: dict[int, PoolFamily | None] = {4: pool.ipv4, 6: pool.ipv6}
    for version, cidrs in new_cidrs.items():
        old = fams.get(version)
        if old is None:
            raise ValueError(f"pool {pool.name} has no IPv{version} family; add it with maskSize first")
        fams[version] = PoolFamily(tuple(cidrs), old.mask_size)
    return CiliumPodIPPool(
        name=pool.name,
        ipv4=fams[4],
        ipv6=fams[6],
        pod_selector=pool.pod_selector,
        namespace_selector=pool.namespace_selector,
        allow_first_ip=pool.allow_first_ip,
        allow_last_ip=pool.allow_last_ip,
        annotations=pool.annotations,
        creation_timestamp=pool.creation_timestamp,
    )


def _nets(pool: CiliumPodIPPool) -> list[IPNetwork]:
    return [n for v in (4, 6) for n in pool_networks(pool, v)]


def plan_migration(
    current: CiliumPodIPPool,
    new_cidrs: Mapping[int, Sequence[str]] | CiliumPodIPPool,
    nodes: Sequence[CiliumNode],
    pods: Sequence[PodAddress] = (),
    other_pools: Sequence[CiliumPodIPPool] = (),
    group_label: str = ZONE_LABEL,
    dry_run: bool = True,
) -> MigrationPlan:
    """Plan the MP-MIG-1 procedure for `current` -> `new_cidrs` (family -> CIDR list, or a full pool)."""
    errors: list[str] = []
    warnings: list[str] = []
    try:
        new_pool = new_cidrs if isinstance(new_cidrs, CiliumPodIPPool) else _with_cidrs(current, new_cidrs)
    except ValueError as exc:
        return _failed(current, group_label, dry_run, [str(exc)])
    changes = _immutable_changes(current, new_pool)
    if changes:
        errors.append(
            f"CiliumPodIPPool {current.name}: {', '.join(changes)} cannot change (MP-POOL-3); "
            "create a new pool instead of migrating this one"
        )
    errors.extend(pool_problems(new_pool))
    if errors:
        return _failed(current, group_label, dry_run, errors)
    old_nets, new_nets = _nets(current), _nets(new_pool)
    for other in other_pools:
        if other.name == current.name:
            continue
        for mine in new_nets:
            for theirs in _nets(other):
                if overlaps(mine, theirs):
                    errors.append(
                        f"new CIDR {mine} of pool {current.name} overlaps CIDR {theirs} of pool {other.name} "
                        "(MP-POOL-5); pick a range no other pool uses"
                    )
    if errors:
        return _failed(current, group_label, dry_run, errors)
    removed = [n for n in old_nets if n not in new_nets]
    added = [n for n in new_nets if n not in old_nets]

    def leaves_pool(block: IPNetwork) -> bool:
        return not any(contains(n, block) for n in new_nets)

    node_blocks: dict[str, list[str]] = {}
    for node in nodes:
        for text in node.ipam.cidrs_of(current.name):
            try:
                block = parse_cidr(text)
            except CidrError as exc:
                warnings.append(f"node {node.name}: {exc}")
                continue
            if leaves_pool(block):
                node_blocks.setdefault(node.name, []).append(str(block))
    pods_by_node = _pods_in_blocks(pods, node_blocks)
    groups: dict[str, list[str]] = {}
    for node in sorted(nodes, key=lambda n: n.name):
        if node.name in node_blocks:
            groups.setdefault(node.labels.get(group_label, NO_GROUP), []).append(node.name)
    if len(groups) == 1 and len(nodes) > 1 and sum(len(v) for v in groups.values()) == len(nodes):
        warnings.append(
            f"every affected node is in one group ({group_label}={next(iter(groups))}); "
            "draining it leaves no node for the pods - "
            "choose a --group-label that splits the nodes into at least two groups"
        )
    if not node_blocks:
        warnings.append(
            f"no node holds a block outside the new CIDRs of pool {current.name}; "
            "only the pool update is needed"
        )
    steps = _steps(current.name, new_pool, removed, added, node_blocks, pods_by_node, groups)
    return MigrationPlan(
        pool=current.name,
        dry_run=dry_run,
        group_label=group_label,
        removed_cidrs=tuple(str(n) for n in removed),
        added_cidrs=tuple(str(n) for n in added),
        groups={g: tuple(ns) for g, ns in sorted(groups.items())},
        steps=tuple(steps),
        errors=(),
        warnings=tuple(warnings),
        new_pool=new_pool,
    )


def _failed(current: CiliumPodIPPool, label: str, dry_run: bool, errors: list[str]) -> MigrationPlan:
    return MigrationPlan(current.name, dry_run, label, (), (), {}, (), tuple(errors))


def _pods_in_blocks(pods: Sequence[PodAddress], node_blocks: Mapping[str, list[str]]) -> dict[str, list[str]]:
    nets = {node: [ipaddress.ip_network(b) for b in blocks] for node, blocks in node_blocks.items()}
    hit: dict[str, list[str]] = {}
    for pod in sorted(pods, key=lambda p: p.key):
        for ip in pod.ips:
            addr = ipaddress.ip_address(ip)
            if any(addr in n for n in nets.get(pod.node, ())):
                hit.setdefault(pod.node, []).append(pod.key)
                break
    return hit


def _steps(
    pool: str,
    new_pool: CiliumPodIPPool,
    removed: list[IPNetwork],
    added: list[IPNetwork],
    node_blocks: Mapping[str, list[str]],
    pods_by_node: Mapping[str, list[str]],
    groups: Mapping[str, list[str]],
) -> list[Step]:
    all_blocks = tuple((n, b) for n in sorted(node_blocks) for b in node_blocks[n])
    cidr_lines = "; ".join(
        f"ipv{v}: {', '.join(fam.cidrs)}" for v in (4, 6) if (fam := new_pool.family(v)) is not None
    )
    steps = [
        Step(
            "update-pool",
            f"Update CiliumPodIPPool {pool} to {cidr_lines} "
            f"(removes {', '.join(map(str, removed)) or 'nothing'}, "
            f"adds {', '.join(map(str, added)) or 'nothing'}).",
            commands=(f"kubectl apply -f <updated CiliumPodIPPool {pool}>",),
            blocks=all_blocks,
        ),
    ]
    if not all_blocks:
        return steps
    steps += [
        Step(
            "expect-warnings",
            f"The operator warns once per block still in use: '{ORPHAN_WARNING}' "
            f"({len(all_blocks)} expected).",
            commands=(f'kubectl -n kube-system logs deploy/cilium-operator | grep "{ORPHAN_WARNING}"',),
            blocks=all_blocks,
        ),
        Step(
            "restart-operator",
            "Restart the operator.",
            commands=("kubectl -n kube-system rollout restart deploy/cilium-operator",),
        ),
    ]
    for group, members in sorted(groups.items()):
        nodes = tuple(members)
        blocks = tuple((n, b) for n in nodes for b in node_blocks.get(n, ()))
        pods = tuple(p for n in nodes for p in pods_by_node.get(n, ()))
        steps += [
            Step(
                "cordon",
                f"Cordon node group {group}.",
                group,
                nodes,
                tuple(f"kubectl cordon {n}" for n in nodes),
            ),
            Step(
                "drain",
                f"Drain node group {group}: {len(pods)} pod(s) holding IPs in old blocks are evicted and "
                "rescheduled elsewhere.",
                group,
                nodes,
                tuple(f"kubectl drain {n} --ignore-daemonsets" for n in nodes),
                blocks,
                pods,
            ),
            Step(
                "delete-ciliumnode",
                f"Delete the CiliumNodes of group {group}; their old blocks return to no pool.",
                group,
                nodes,
                tuple(f"kubectl delete cn {n}" for n in nodes),
                blocks,
            ),
            Step(
                "restart-agent",
                f"Restart the Cilium agent on group {group}; "
                "it recreates the CiliumNode and gets new blocks.",
                group,
                nodes,
                tuple(
                    "kubectl -n kube-system delete pod "
                    f"--field-selector spec.nodeName={n} --selector={AGENT_SELECTOR}"
                    for n in nodes
                ),
            ),
            Step(
                "uncordon",
                f"Uncordon node group {group}.",
                group,
                nodes,
                tuple(f"kubectl uncordon {n}" for n in nodes),
            ),
        ]
    return steps


def render_migration(plan: MigrationPlan) -> str:
    """Human-readable plan (what `cilium-ipam pools migrate` prints)."""
    mode = "DRY RUN - nothing is changed" if plan.dry_run else "EXECUTE"
    lines = [f"Migration plan for CiliumPodIPPool {plan.pool} ({mode})"]
    if plan.errors:
        lines.append(f"REFUSED: {join_sentences(list(plan.errors))}")
        return "\n".join(lines) + "\n"
    lines.append(f"  removed CIDRs: {', '.join(plan.removed_cidrs) or '-'}")
    lines.append(f"  added CIDRs:   {', '.join(plan.added_cidrs) or '-'}")
    for group, nodes in plan.groups.items():
        lines.append(f"  group {plan.group_label}={group}: {', '.join(nodes)}")
    for w in plan.warnings:
        lines.append(f"  warning: {w}")
    for i, step in enumerate(plan.steps, 1):
        lines.append(f"{i:>2}. [{step.kind}] {step.description}")
        for cmd in step.commands:
            lines.append(f"      $ {cmd}")
        if step.kind in ("expect-warnings", "drain"):
            for node, cidr in step.blocks:
                lines.append(f"      block {cidr} on {node}")
            for pod in step.pods:
                lines.append(f"      pod {pod}")
    return "\n".join(lines) + "\n"
