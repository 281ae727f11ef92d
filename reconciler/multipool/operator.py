"""Multi-pool IPAM, operator side: hand PodCIDR blocks from CiliumPodIPPools to CiliumNodes (SPEC 2).

Public API (pure logic, no Kubernetes client; the controller wires it to a ClusterStore):

    op = MultiPoolOperator()
    op.restore(pools, nodes)          # at start-up / after leader change: occupy every block already in
                                      # spec.ipam.pools.allocated of every node, THEN allow new hand-outs
    op.set_pools(pools)               # on every CiliumPodIPPool event: the full current list of pools
    op.upsert_pool(pool) / op.delete_pool(name)   # the same, one pool at a time
    result = op.reconcile_node(node)  # on every CiliumNode event
    op.forget_node(name)              # CiliumNode deleted: its blocks return to their pools

`reconcile_node` returns a `NodeResult`: the node's new `allocated` list (existing entries untouched,
new blocks appended), `changed` (write only then, with the node's resourceVersion; re-read and retry
on conflict), `error` (one sentence for `status.ipam.operator-status.error`; "" clears it) and
`warnings` (structured log records). Pass nodes with their resourceVersion: the same version seen
again is treated as a stale event whose new blocks are still in flight (kept, not handed out again).
`set_pools` returns a `PoolSyncResult` with one error sentence per
refused pool or refused update, and the warnings. `plan_allocations(pools, nodes)` is the same thing as
one pure function (what the simulator calls for 5,000 nodes, and what tests use).

Rules implemented:
- MP-CRD-1 / MP-POOL-1: for every `pools.requested` entry and family, add `maskSize` blocks until the
  usable addresses (MP-POOL-4 reservations applied with the pool's allowFirstIP / allowLastIP) reach
  `needed`; blocks the agent removed from `allocated` are freed. Blocks come from the pool's CIDRs in
  order, lowest free block first.
- Start-up: until `restore` has occupied every node's blocks nothing new is handed out, so a restart
  never hands out a block twice. A block listed by two nodes is reported on the second node and not
  counted for it.
- MP-POOL-2: a block whose pool was deleted, or whose pool CIDR was removed, stays with the node (it
  stays in `allocated`) and is reported once with `CIDR from pool still in use by node` (cidr,
  poolName, node). Like Cilium, such orphaned blocks do not count towards the node's request, so the
  node gets fresh blocks from the pool's current CIDRs. A pool that comes back re-adopts them; a block
  lying inside another pool's CIDR is kept occupied there so it is never handed out twice.
- MP-POOL-3: a change of maskSize, allowFirstIP or allowLastIP is refused with an error on the pool and
  the previously accepted spec stays in force. (Adding a family the pool did not have is allowed.)
- MP-POOL-5: overlapping pools are refused: pools are considered oldest first (creationTimestamp,
  then name), already-accepted pools before new ones, so the newer pool is the one refused, with a
  sentence naming both.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from reconciler.cidr import CidrError, IPNetwork, overlaps, parse_cidr, usable_addresses
from reconciler.model import CiliumNode, PoolAllocation
from reconciler.multipool.allocator import BlockSet, FamilyAllocator
from reconciler.multipool.pools import CiliumPodIPPool, pool_networks, pool_problems

ORPHAN_WARNING = "CIDR from pool still in use by node"
ADOPTED_MESSAGE = "CIDR from pool already in use by node, marking it as allocated"


@dataclass(frozen=True)
class OperatorWarning:
    """A structured log record; `log_line()` renders it key=value like Cilium's operator."""

    message: str
    cidr: str = ""
    pool_name: str = ""
    node: str = ""

    def log_line(self) -> str:
        parts = [f'level=warn msg="{self.message}"']
        if self.cidr:
            parts.append(f"cidr={self.cidr}")
        if self.pool_name:
            parts.append(f"poolName={self.pool_name}")
        if self.node:
            parts.append(f"node={self.node}")
        return " ".join(parts)


@dataclass(frozen=True)
class NodeResult:
    """What the operator wants written to one CiliumNode."""

    node: str
    allocated: tuple[PoolAllocation, ...]
    changed: bool
    error: str = ""
    warnings: tuple[OperatorWarning, ...] = ()
    new_blocks: tuple[tuple[str, str], ...] = ()  # (pool, cidr) handed out in this call


@dataclass(frozen=True)
class PoolSyncResult:
    """Outcome of a pool event: refused pools / updates and MP-POOL-2 warnings."""

    accepted: tuple[str, ...]
    errors: Mapping[str, str] = field(default_factory=dict)
    warnings: tuple[OperatorWarning, ...] = ()
    adopted: tuple[OperatorWarning, ...] = ()


@dataclass(frozen=True)
class AllocationPlan:
    """Result of `plan_allocations`: per-node results, per-pool errors, every warning."""

    nodes: Mapping[str, NodeResult]
    pool_errors: Mapping[str, str]
    warnings: tuple[OperatorWarning, ...]


def join_sentences(sentences: Sequence[str]) -> str:
    """Several problems as one sentence for operator-status."""
    parts = [s.strip().rstrip(".") for s in sentences if s.strip()]
    return "; ".join(parts) + "." if parts else ""


class _Pool:
    __slots__ = ("spec", "families")

    def __init__(self, spec: CiliumPodIPPool) -> None:
        self.spec = spec
        self.families: dict[int, FamilyAllocator] = {}
        for version in (4, 6):
            fam = spec.family(version)
            if fam is not None:
                self.families[version] = FamilyAllocator(version, pool_networks(spec, version), fam.mask_size)

    def covering_set(self, net: IPNetwork) -> BlockSet | None:
        fam = self.families.get(net.version)
        return None if fam is None else fam.set_for(net)


class MultiPoolOperator:
    """Allocator state for every pool and node; see the module docstring for the call protocol."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._known: dict[str, CiliumPodIPPool] = {}
        self._pools: dict[str, _Pool] = {}
        self._pool_errors: dict[str, str] = {}
        self._holdings: dict[str, set[tuple[str, IPNetwork]]] = {}
        self._owner: dict[IPNetwork, tuple[str, str]] = {}
        self._orphans: set[tuple[str, str, IPNetwork]] = set()
        # blocks handed out in reply to a node version, not yet seen in its `allocated`: a stale event
        # (the same resourceVersion again) must neither free them nor cause a second hand-out
        self._unconfirmed: dict[str, tuple[str, set[tuple[str, IPNetwork]]]] = {}
        self.ready = False

    # ----------------------------------------------------------------- pools

    @property
    def pool_errors(self) -> Mapping[str, str]:
        return dict(self._pool_errors)

    def accepted_pool(self, name: str) -> CiliumPodIPPool | None:
        pool = self._pools.get(name)
        return None if pool is None else pool.spec

    def upsert_pool(self, pool: CiliumPodIPPool) -> PoolSyncResult:
        self._known[pool.name] = pool
        return self.set_pools(list(self._known.values()))

    def delete_pool(self, name: str) -> PoolSyncResult:
        self._known.pop(name, None)
        return self.set_pools(list(self._known.values()))

    def set_pools(self, pools: Iterable[CiliumPodIPPool]) -> PoolSyncResult:
        """Apply the full current list of pools (MP-POOL-1/2/3/5)."""
        wanted = {p.name: p for p in pools}
        self._known = dict(wanted)
        errors: dict[str, str] = {}
        old_specs = {name: p.spec for name, p in self._pools.items()}
        # unchanged accepted pools first, then changed ones, then new ones; oldest first within each
        order = sorted(
            wanted.values(),
            key=lambda p: (p.name not in old_specs, not _same_spec(old_specs.get(p.name), p), p.age_key()),
        )
        accepted: dict[str, CiliumPodIPPool] = {}
        for pool in order:
            previous = old_specs.get(pool.name)
            candidate, error = self._candidate(pool, previous)
            if candidate is not None:
                clash = _first_overlap(candidate, accepted.values())
                if clash is not None and previous is not None and candidate is not previous:
                    error = error or _overlap_sentence(pool.name, clash, updating=True)
                    candidate = previous
                    clash = _first_overlap(candidate, accepted.values())
                if clash is not None:
                    error = _overlap_sentence(pool.name, clash, updating=previous is not None)
                    candidate = None
            if error:
                errors[pool.name] = error
            if candidate is not None:
                accepted[pool.name] = candidate
        self._pool_errors = errors
        self._apply_accepted(accepted)
        warnings, adopted = self._refresh_orphans()
        return PoolSyncResult(tuple(sorted(accepted)), errors, tuple(warnings), tuple(adopted))

    def _candidate(
        self, pool: CiliumPodIPPool, previous: CiliumPodIPPool | None
    ) -> tuple[CiliumPodIPPool | None, str]:
        """The spec to use for `pool` and an error sentence (MP-POOL-3, validation)."""
        if previous is not None:
            changes = _immutable_changes(previous, pool)
            if changes:
                return previous, (
                    f"CiliumPodIPPool {pool.name}: {', '.join(changes)} cannot change "
                    "(immutable, MP-POOL-3); "
                    "the update is ignored - create a new pool and migrate with `cilium-ipam pools migrate`."
                )
        problems = pool_problems(pool)
        if problems:
            verdict = "the update is ignored" if previous is not None else "the pool is not used"
            return previous, f"{join_sentences(problems).rstrip('.')}; {verdict}."
        return pool, ""

    def _apply_accepted(self, accepted: Mapping[str, CiliumPodIPPool]) -> None:
        for name in [n for n in self._pools if n not in accepted]:
            del self._pools[name]
        added_sets: list[BlockSet] = []
        for name, spec in accepted.items():
            current = self._pools.get(name)
            if current is None:
                fresh = _Pool(spec)
                self._pools[name] = fresh
                added_sets.extend(s for fam in fresh.families.values() for s in fam.sets)
                continue
            if _same_spec(current.spec, spec):
                current.spec = spec
                continue
            current.spec = spec
            for version in (4, 6):
                fam_spec = spec.family(version)
                if fam_spec is None:
                    current.families.pop(version, None)
                    continue
                nets = pool_networks(spec, version)
                alloc = current.families.get(version)
                if alloc is None:
                    alloc = FamilyAllocator(version, nets, fam_spec.mask_size)
                    current.families[version] = alloc
                    added_sets.extend(alloc.sets)
                else:
                    added, _removed = alloc.update_cidrs(nets)
                    added_sets.extend(added)
        if added_sets:
            for net in self._owner:
                for bs in added_sets:
                    if bs.covers(net):
                        bs.occupy(net)

    def _covering(self, net: IPNetwork) -> tuple[str, BlockSet] | None:
        for name, pool in self._pools.items():
            bs = pool.covering_set(net)
            if bs is not None:
                return name, bs
        return None

    def _is_adopted(self, pool_name: str, net: IPNetwork) -> bool:
        pool = self._pools.get(pool_name)
        return pool is not None and pool.covering_set(net) is not None

    def _refresh_orphans(self) -> tuple[list[OperatorWarning], list[OperatorWarning]]:
        warnings: list[OperatorWarning] = []
        adopted: list[OperatorWarning] = []
        for net, (node, pool) in sorted(self._owner.items(), key=lambda kv: (kv[1], _net_key(kv[0]))):
            key = (node, pool, net)
            orphan = not self._is_adopted(pool, net)
            if orphan and key not in self._orphans:
                self._orphans.add(key)
                warnings.append(OperatorWarning(ORPHAN_WARNING, str(net), pool, node))
            elif not orphan and key in self._orphans:
                self._orphans.discard(key)
                adopted.append(OperatorWarning(ADOPTED_MESSAGE, str(net), pool, node))
        return warnings, adopted

    # ----------------------------------------------------------------- nodes

    def restore(self, pools: Iterable[CiliumPodIPPool], nodes: Iterable[CiliumNode]) -> AllocationPlan:
        """Rebuild all state: pools, then every node's existing blocks, and only then allow hand-outs."""
        self._reset()
        sync = self.set_pools(pools)
        node_list = sorted(nodes, key=lambda n: n.name)
        results: dict[str, NodeResult] = {}
        warnings = list(sync.warnings)
        for node in node_list:
            res = self.reconcile_node(node)
            warnings.extend(res.warnings)
            results[node.name] = res
        self.ready = True
        return AllocationPlan(results, sync.errors, tuple(warnings))

    def forget_node(self, name: str) -> None:
        """The CiliumNode is gone: return its blocks to their pools."""
        self._unconfirmed.pop(name, None)
        for pool, net in self._holdings.pop(name, set()):
            self._release(name, pool, net)
        self._orphans = {k for k in self._orphans if k[0] != name}

    def _release(self, node: str, pool: str, net: IPNetwork) -> None:
        if self._owner.get(net) != (node, pool):
            return
        del self._owner[net]
        self._orphans.discard((node, pool, net))
        placed = self._covering(net)
        if placed is not None:
            placed[1].release(net)

    def _hold(self, node: str, pool: str, net: IPNetwork) -> str:
        """Record a block the node lists; returns an error sentence on a conflict."""
        owner = self._owner.get(net)
        if owner is not None and owner[0] != node:
            return (
                f"CIDR {net} of pool {pool} is already allocated to node {owner[0]}; "
                f"remove it from spec.ipam.pools.allocated of node {node}"
            )
        placed = self._covering(net)
        if owner is None and placed is not None and placed[1].is_taken(net):
            return (
                f"CIDR {net} of pool {pool} overlaps a block allocated to another node; "
                f"remove it from spec.ipam.pools.allocated of node {node}"
            )
        if owner is not None:  # same node lists it under another pool name
            self._release(owner[0], owner[1], net)
            self._holdings.get(node, set()).discard((owner[1], net))
            placed = self._covering(net)
        if placed is not None:
            placed[1].occupy(net)
        self._owner[net] = (node, pool)
        return ""

    def reconcile_node(self, node: CiliumNode) -> NodeResult:
        """Occupy/free according to the node's `allocated`, then satisfy its `requested` (MP-CRD-1)."""
        errors: list[str] = []
        listed: set[tuple[str, IPNetwork]] = set()
        for alloc in node.ipam.allocated:
            for text in alloc.cidrs:
                try:
                    where = f"CIDR of pool {alloc.pool} on node {node.name}"
                    listed.add((alloc.pool, parse_cidr(text, where)))
                except CidrError as exc:
                    errors.append(str(exc))
        held = self._holdings.setdefault(node.name, set())
        version, unconfirmed = self._unconfirmed.get(node.name, ("", set()))
        if version != node.resource_version:
            unconfirmed = set()  # a newer version: our write landed or was lost; trust the node
        unconfirmed -= listed
        carried = sorted(unconfirmed & held, key=lambda x: (x[0], _net_key(x[1])))
        for pool, net in sorted(held - listed - unconfirmed, key=lambda x: (x[0], _net_key(x[1]))):
            self._release(node.name, pool, net)
            held.discard((pool, net))
        for pool, net in sorted(listed - held, key=lambda x: (x[0], _net_key(x[1]))):
            problem = self._hold(node.name, pool, net)
            if problem:
                errors.append(problem)
            else:
                held.add((pool, net))
        warnings, _adopted = self._refresh_orphans_for(node.name)
        new_blocks: list[tuple[str, IPNetwork]] = []
        if self.ready:
            for request in node.ipam.requested:
                errors.extend(
                    self._satisfy(node.name, request.pool, request.ipv4_addrs, request.ipv6_addrs, new_blocks)
                )
        unconfirmed.update(new_blocks)
        self._unconfirmed[node.name] = (node.resource_version, unconfirmed)
        allocated = _merge_allocated(node.ipam.allocated, carried + new_blocks)
        return NodeResult(
            node=node.name,
            allocated=allocated,
            changed=allocated != node.ipam.allocated,
            error=join_sentences(errors),
            warnings=tuple(warnings),
            new_blocks=tuple((p, str(n)) for p, n in new_blocks),
        )

    def _refresh_orphans_for(self, node: str) -> tuple[list[OperatorWarning], list[OperatorWarning]]:
        warnings: list[OperatorWarning] = []
        adopted: list[OperatorWarning] = []
        for pool, net in sorted(self._holdings.get(node, set()), key=lambda x: (x[0], _net_key(x[1]))):
            key = (node, pool, net)
            orphan = not self._is_adopted(pool, net)
            if orphan and key not in self._orphans:
                self._orphans.add(key)
                warnings.append(OperatorWarning(ORPHAN_WARNING, str(net), pool, node))
            elif not orphan and key in self._orphans:
                self._orphans.discard(key)
                adopted.append(OperatorWarning(ADOPTED_MESSAGE, str(net), pool, node))
        return warnings, adopted

    def _satisfy(
        self, node: str, pool_name: str, need_v4: int, need_v6: int, new_blocks: list[tuple[str, IPNetwork]]
    ) -> list[str]:
        errors: list[str] = []
        if need_v4 <= 0 and need_v6 <= 0:
            return errors
        pool = self._pools.get(pool_name)
        if pool is None:
            refused = self._pool_errors.get(pool_name)
            if refused:
                return [f"node {node} requests pool {pool_name}, which is refused: {refused.rstrip('.')}"]
            return [
                f"node {node} requests pool {pool_name}, which does not exist; "
                "create the CiliumPodIPPool or fix the pool annotation or default pool"
            ]
        held = self._holdings.setdefault(node, set())
        for version, needed in ((4, need_v4), (6, need_v6)):
            if needed <= 0:
                continue
            fam = pool.families.get(version)
            if fam is None:
                errors.append(
                    f"pool {pool_name} has no IPv{version} CIDRs but node {node} needs {needed} IPv{version} "
                    f"addresses; add spec.ipv{version} to the pool or disable IPv{version}"
                )
                continue
            spec = pool.spec
            have = sum(
                usable_addresses(net, spec.allow_first_ip, spec.allow_last_ip)
                for p, net in held
                if p == pool_name and net.version == version and fam.set_for(net) is not None
            )
            while have < needed:
                block = fam.allocate()
                if block is None:
                    errors.append(
                        f"pool {pool_name} has no free /{fam.mask_size} IPv{version} block left "
                        f"for node {node} "
                        f"({have} of {needed} addresses); append a CIDR to the pool"
                    )
                    break
                self._owner[block] = (node, pool_name)
                held.add((pool_name, block))
                new_blocks.append((pool_name, block))
                have += usable_addresses(block, spec.allow_first_ip, spec.allow_last_ip)
        return errors

    # ----------------------------------------------------------------- introspection

    def snapshot(self) -> dict[str, object]:
        """A comparable dump of the allocator state (tests: restart + occupy gives the same state)."""
        sets = {
            (name, version, str(bs.parent)): tuple(bs._slots.intervals())  # noqa: SLF001
            for name, pool in self._pools.items()
            for version, fam in pool.families.items()
            for bs in fam.sets
        }
        owners = {str(net): owner for net, owner in self._owner.items()}
        orphans = sorted((n, p, str(c)) for n, p, c in self._orphans)
        return {"sets": sets, "owners": owners, "orphans": orphans}

    def orphans(self) -> list[tuple[str, str, str]]:
        """(node, pool, cidr) of every block kept although its pool no longer covers it (MP-POOL-2)."""
        return sorted((n, p, str(c)) for n, p, c in self._orphans)

    def blocks_of(self, node: str) -> list[tuple[str, str]]:
        return sorted((p, str(n)) for p, n in self._holdings.get(node, set()))


def plan_allocations(pools: Iterable[CiliumPodIPPool], nodes: Iterable[CiliumNode]) -> AllocationPlan:
    """Pure planning: (pools, nodes) -> per-node allocated lists, per-pool errors, warnings.

    Equivalent to an operator start-up followed by one reconcile of every node (name order).
    """
    node_list = sorted(nodes, key=lambda n: n.name)
    op = MultiPoolOperator()
    restored = op.restore(pools, node_list)
    results: dict[str, NodeResult] = {}
    warnings = list(restored.warnings)
    for node in node_list:
        res = op.reconcile_node(node)
        results[node.name] = res
        warnings.extend(res.warnings)
    return AllocationPlan(results, restored.pool_errors, tuple(warnings))


# --------------------------------------------------------------------- helpers


def _net_key(net: IPNetwork) -> tuple[int, int, int]:
    return net.version, int(net.network_address), net.prefixlen


def _merge_allocated(
    existing: Sequence[PoolAllocation], new_blocks: Sequence[tuple[str, IPNetwork]]
) -> tuple[PoolAllocation, ...]:
    if not new_blocks:
        return tuple(existing)
    extra: dict[str, list[str]] = {}
    for pool, net in new_blocks:
        extra.setdefault(pool, []).append(str(net))
    merged: list[PoolAllocation] = []
    for alloc in existing:
        add = extra.pop(alloc.pool, [])
        merged.append(PoolAllocation(alloc.pool, alloc.cidrs + tuple(add)) if add else alloc)
    for pool, cidrs in extra.items():
        merged.append(PoolAllocation(pool, tuple(cidrs)))
    return tuple(merged)


def _same_spec(a: CiliumPodIPPool | None, b: CiliumPodIPPool) -> bool:
    """Equal apart from the resourceVersion (every event carries a new one)."""
    return a is not None and replace(a, resource_version="") == replace(b, resource_version="")


def _immutable_changes(old: CiliumPodIPPool, new: CiliumPodIPPool) -> list[str]:
    changes: list[str] = []
    for version in (4, 6):
        a, b = old.family(version), new.family(version)
        if a is not None and b is not None and a.mask_size != b.mask_size:
            changes.append(f"spec.ipv{version}.maskSize ({a.mask_size} -> {b.mask_size})")
    if old.allow_first_ip != new.allow_first_ip:
        changes.append(f"spec.allowFirstIP ({old.allow_first_ip} -> {new.allow_first_ip})")
    if old.allow_last_ip != new.allow_last_ip:
        changes.append(f"spec.allowLastIP ({old.allow_last_ip} -> {new.allow_last_ip})")
    return changes


def _first_overlap(pool: CiliumPodIPPool, others: Iterable[CiliumPodIPPool]) -> tuple[str, str, str] | None:
    """(own cidr, other cidr, other pool) of the first overlap with an accepted pool."""
    mine = [net for v in (4, 6) for net in pool_networks(pool, v)]
    for other in others:
        for theirs in (net for v in (4, 6) for net in pool_networks(other, v)):
            for net in mine:
                if overlaps(net, theirs):
                    return str(net), str(theirs), other.name
    return None


def _overlap_sentence(name: str, clash: tuple[str, str, str], updating: bool) -> str:
    own, theirs, other = clash
    verdict = "the update is ignored" if updating else "the pool is refused"
    return (
        f"CiliumPodIPPool {name} CIDR {own} overlaps CIDR {theirs} of CiliumPodIPPool {other} (MP-POOL-5); "
        f"{verdict} - pod IPs must be cluster-unique, so remove the overlap."
    )
