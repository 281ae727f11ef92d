"""`Agent`: one simulated Cilium 1.20 agent (one per node), in multi-pool or ENI mode.

API the simulator, explain-style tooling and tests drive::

    agent = Agent("node-1", AgentConfig(mode="multi-pool", enable_ipv6=True), pools=pools,
                  node_configs=cncs, node_labels={"topology.kubernetes.io/zone": "dc1"})
    out = agent.add_pod(PodInfo("ns", "web-0", labels=..., annotations=..., namespace_labels=...))
    out.status   # ALLOCATED (out.ips {4: "10.0.0.1", 6: ...}, out.pools, out.masquerade),
                 # PENDING (waits for addresses; counted in demand), BLOCKED (pool selection failed:
                 # out.reason; retried on every sync), FAILED (permanent, e.g. a pool annotation in ENI mode)
    ipam = agent.sync(cilium_node)   # ingest the node's CIDRs, serve pending pods, release spare
                                     # CIDRs, and return the desired spec.ipam (requested + allocated)
    agent.take_completed()           # pods that got their addresses during sync calls
    agent.remove_pod("ns/web-0")     # frees the pod's addresses

Release hysteresis, ENI mode (`AgentConfig.release`, `release.ReleasePolicy`): a CIDR leaves
`allocated` only after it has been wholly unused for `min_idle_s` (default 600 s) on the agent's
`clock` and the node keeps `spare_cidrs` CIDRs' worth of free addresses beyond demand - in-use. Pass
the simulator's clock (`Agent(..., clock=loop)`); without one the agent reads wall time (WallClock).

What `sync` reads: multi-pool mode, `spec.ipam.pools.allocated` (the operator adds blocks); ENI mode,
`status.eni.enis` (ENI-ARCH-4) and `spec.ipam.pre-allocate`. What it returns: the node's IpamSpec
with `pools.requested` (MP-PRE-1 per pool and family, or ENI-ARCH-5 linear demand for pool `default`)
and `pools.allocated` (the CIDRs the agent keeps: released ones are left out, ENI-REL-1). The caller
writes it to the CiliumNode (spec, with resourceVersion). Pool selection follows MP-SEL-1..4 with the
node's default pool from CiliumNodeConfig (MP-NODE-1); annotations are read once, when the pod is
added (MP-SEL-4); the masquerade decision (MP-MASQ-1) is taken when the pod gets its address.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum

from reconciler.agent.demand import (
    DEFAULT_PRE_ALLOCATION,
    PRE_ALLOCATION_KEY,
    eni_needed,
    multi_pool_needed,
    parse_pre_allocation,
)
from reconciler.agent.eni import ENI_POOL, eni_cidrs
from reconciler.agent.localpool import LocalPool
from reconciler.agent.masquerade import MasqueradeConfig, masquerade_decision
from reconciler.agent.pods import FAMILY_POOL_ANNOTATION, POOL_ANNOTATION, PodInfo
from reconciler.agent.release import IMMEDIATE, ReleasePolicy
from reconciler.agent.selection import select_pool
from reconciler.cidr import CidrError, IPNetwork, contains, parse_cidr
from reconciler.clock import Clock, WallClock
from reconciler.model import DEFAULT_POOL, CiliumNode, IpamSpec, PoolAllocation, PoolRequest
from reconciler.multipool.pools import (
    DEFAULT_POOL_KEY,
    CiliumNodeConfig,
    CiliumPodIPPool,
    node_defaults,
    pool_networks,
)

MULTI_POOL = "multi-pool"
ENI = "eni"


class PodStatus(StrEnum):
    ALLOCATED = "allocated"
    PENDING = "pending"
    BLOCKED = "blocked"
    FAILED = "failed"


@dataclass(frozen=True)
class PodOutcome:
    key: str
    status: PodStatus
    ips: Mapping[int, str] = field(default_factory=dict)
    pools: Mapping[int, str] = field(default_factory=dict)
    masquerade: bool | None = None
    reason: str = ""


@dataclass(frozen=True)
class AgentConfig:
    mode: str = MULTI_POOL
    enable_ipv4: bool = True
    enable_ipv6: bool = False
    default_pool: str = DEFAULT_POOL  # --ipam-default-ip-pool
    pre_allocation: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_PRE_ALLOCATION))
    masquerade: MasqueradeConfig = field(default_factory=MasqueradeConfig)
    release: ReleasePolicy = field(default_factory=ReleasePolicy)  # ENI-REL-1 hysteresis, ENI mode

    def problems(self) -> list[str]:
        out: list[str] = []
        if self.mode not in (MULTI_POOL, ENI):
            out.append(f"agent mode {self.mode!r} is not supported; use {MULTI_POOL!r} or {ENI!r}.")
        if not (self.enable_ipv4 or self.enable_ipv6):
            out.append("both IPv4 and IPv6 are disabled; enable at least one family.")
        if self.mode == MULTI_POOL:
            out.extend(self.masquerade.problems())
        out.extend(self.release.problems())
        return out


class AgentConfigError(ValueError):
    """Invalid agent configuration; one sentence per problem."""


@dataclass
class _Pod:
    info: PodInfo
    seq: int
    status: PodStatus = PodStatus.PENDING
    pools: dict[int, str] = field(default_factory=dict)
    ips: dict[int, str] = field(default_factory=dict)
    masquerade: bool | None = None
    reason: str = ""

    def outcome(self) -> PodOutcome:
        return PodOutcome(
            self.info.key, self.status, dict(self.ips), dict(self.pools), self.masquerade, self.reason
        )


class Agent:
    """One node's agent; see the module docstring."""

    def __init__(
        self,
        node_name: str,
        config: AgentConfig | None = None,
        node_labels: Mapping[str, str] | None = None,
        pools: Iterable[CiliumPodIPPool] = (),
        node_configs: Iterable[CiliumNodeConfig] = (),
        clock: Clock | None = None,
    ) -> None:
        self.node_name = node_name
        self.clock: Clock = clock or WallClock()  # idle times of CIDRs (release hysteresis)
        self.config = config or AgentConfig()
        problems = self.config.problems()
        if problems:
            raise AgentConfigError(" ".join(problems))
        self._labels_from_node = node_labels is None
        self._node_labels: dict[str, str] = dict(node_labels or {})
        self._pools: dict[str, CiliumPodIPPool] = {p.name: p for p in pools}
        self._node_configs: list[CiliumNodeConfig] = list(node_configs)
        self._pods: dict[str, _Pod] = {}
        self._local: dict[tuple[str, int], LocalPool] = {}
        self._seq = itertools.count()
        self._completed: list[PodOutcome] = []
        self._eni_pre_allocate = IpamSpec().pre_allocate
        self.problems: list[str] = []
        self._last_node: CiliumNode | None = None
        self._refresh_defaults()

    # ------------------------------------------------------------ configuration

    @property
    def families(self) -> tuple[int, ...]:
        return tuple(f for f, on in ((4, self.config.enable_ipv4), (6, self.config.enable_ipv6)) if on)

    @property
    def default_pool(self) -> str:
        """MP-NODE-1: `ipam-default-ip-pool` from matching CiliumNodeConfigs, else the agent flag."""
        return self._default_pool

    @property
    def pre_allocation(self) -> Mapping[str, int]:
        return dict(self._pre_allocation)

    def _refresh_defaults(self) -> None:
        defaults = node_defaults(self._node_configs, self._node_labels)
        self._default_pool = defaults.get(DEFAULT_POOL_KEY) or self.config.default_pool
        if PRE_ALLOCATION_KEY in defaults:
            self._pre_allocation = parse_pre_allocation(defaults[PRE_ALLOCATION_KEY])
        else:
            self._pre_allocation = dict(self.config.pre_allocation)

    def set_pools(self, pools: Iterable[CiliumPodIPPool]) -> None:
        """New pool specs take effect at once (a block its pool no longer covers stops serving new pods)."""
        self._pools = {p.name: p for p in pools}
        if self._last_node is not None and self.config.mode == MULTI_POOL:
            self._ingest(self._last_node)

    def set_node_configs(self, configs: Iterable[CiliumNodeConfig]) -> None:
        self._node_configs = list(configs)
        self._refresh_defaults()

    def set_node_labels(self, labels: Mapping[str, str]) -> None:
        self._labels_from_node = False
        self._node_labels = dict(labels)
        self._refresh_defaults()

    # ------------------------------------------------------------ pods

    def outcome(self, key: str) -> PodOutcome | None:
        pod = self._pods.get(key)
        return None if pod is None else pod.outcome()

    def pods(self) -> list[PodOutcome]:
        return [p.outcome() for p in sorted(self._pods.values(), key=lambda p: p.seq)]

    def add_pod(self, pod: PodInfo) -> PodOutcome:
        """Select pools and allocate now if the node has free addresses, else PENDING / BLOCKED / FAILED."""
        existing = self._pods.get(pod.key)
        if existing is not None:
            return existing.outcome()  # MP-SEL-4: annotations count only at creation
        state = _Pod(pod, next(self._seq))
        self._pods[pod.key] = state
        if self._decide(state):
            self._try_allocate(state)
        return state.outcome()

    def remove_pod(self, key: str) -> PodOutcome | None:
        """Forget the pod and free its addresses."""
        state = self._pods.pop(key, None)
        if state is None:
            return None
        for family, ip in state.ips.items():
            local = self._local.get((state.pools[family], family))
            if local is not None:
                local.release(ip)
        return state.outcome()

    def take_completed(self) -> list[PodOutcome]:
        """Pods that got their addresses during `sync` since the last call."""
        done, self._completed = self._completed, []
        return done

    def _decide(self, state: _Pod) -> bool:
        pod = state.info
        if self.config.mode == ENI:
            for scope, annotations in (("pod", pod.annotations), ("namespace", pod.namespace_annotations)):
                for key in (POOL_ANNOTATION, *FAMILY_POOL_ANNOTATION.values()):
                    asked = annotations.get(key, "")
                    if asked and asked != ENI_POOL:
                        state.status = PodStatus.FAILED
                        state.reason = (
                            f"pod {pod.key} asks for pool {asked} via {scope} annotation {key}, but ENI mode "
                            f"allocates every pod from pool {ENI_POOL} (ENI-ARCH-4); remove the annotation"
                        )
                        return False
            state.pools = {f: ENI_POOL for f in self.families}
            return True
        chosen: dict[int, str] = {}
        for family in self.families:
            sel = select_pool(pod, family, self._pools, self.default_pool)
            if sel.pool is None:
                state.status = PodStatus.BLOCKED
                state.reason = sel.reason
                return False
            chosen[family] = sel.pool
        state.pools = chosen
        state.status = PodStatus.PENDING
        state.reason = ""
        return True

    def _try_allocate(self, state: _Pod) -> bool:
        locals_ = {f: self._local.get((p, f)) for f, p in state.pools.items()}
        short = [f for f, lp in locals_.items() if lp is None or lp.free == 0]
        if short:
            state.status = PodStatus.PENDING
            state.reason = "waiting for " + ", ".join(
                f"IPv{f} addresses of pool {state.pools[f]}" for f in short
            )
            return False
        for family, lp in locals_.items():
            assert lp is not None
            ip = lp.allocate(state.info.key)
            assert ip is not None, "free > 0 guarantees an address"
            state.ips[family] = ip
        state.status = PodStatus.ALLOCATED
        state.reason = ""
        if self.config.mode == MULTI_POOL:
            pool = state.pools[self.families[0]]
            state.masquerade, _why = masquerade_decision(
                pool, self._pools.get(pool), self.default_pool, self.config.masquerade
            )
        return True

    # ------------------------------------------------------------ node sync

    def _ingest(self, node: CiliumNode) -> list[tuple[str, int]]:
        """Update local pools from the node; returns the pool keys in advertised order."""
        grouped: dict[tuple[str, int], list[IPNetwork]] = {}
        self.problems = []
        if self.config.mode == ENI:
            by_family, problems = eni_cidrs(node)
            self.problems.extend(problems)
            for family in (4, 6):
                grouped[(ENI_POOL, family)] = by_family[family]
            self._eni_pre_allocate = node.ipam.pre_allocate
        else:
            for alloc in node.ipam.allocated:
                for text in alloc.cidrs:
                    try:
                        net = parse_cidr(text, f"CIDR of pool {alloc.pool} on node {node.name}")
                    except CidrError as exc:
                        self.problems.append(str(exc))
                        continue
                    if self._retired(alloc.pool, net):
                        continue  # kept only while pods use it (LocalPool "removed"), never for new pods
                    grouped.setdefault((alloc.pool, net.version), []).append(net)
        for key in list(self._local):
            if key not in grouped:
                self._local[key].update([])
        for key, nets in grouped.items():
            local = self._local.get(key)
            if local is None:
                if self.config.mode == ENI:
                    local = LocalPool(allow_first=True, allow_last=True, clock=self.clock)
                else:
                    spec = self._pools.get(key[0])
                    local = LocalPool(
                        spec.allow_first_ip if spec else False,
                        spec.allow_last_ip if spec else False,
                        clock=self.clock,
                    )
                self._local[key] = local
            local.update(nets)
        return list(grouped)

    def _retired(self, pool_name: str, net: IPNetwork) -> bool:
        """A block of a known pool that the pool's CIDRs no longer cover (MP-POOL-2 orphan).

        The operator keeps such blocks in `allocated` but does not count them; the agent does the
        same: existing pods keep their addresses, new pods get addresses from current blocks only.
        """
        spec = self._pools.get(pool_name)
        if spec is None or spec.family(net.version) is None:
            return spec is not None
        return not any(contains(c, net) for c in pool_networks(spec, net.version))

    def demand(self) -> dict[tuple[str, int], tuple[int, int, int]]:
        """(pool, family) -> (in use, pending, needed) as reported in `requested`."""
        pending: dict[tuple[str, int], int] = {}
        for pod in self._pods.values():
            if pod.status is PodStatus.PENDING:
                for family, pool in pod.pools.items():
                    pending[(pool, family)] = pending.get((pool, family), 0) + 1
        keys = set(self._local) | set(pending)
        if self.config.mode == MULTI_POOL:
            keys |= {(p, f) for p, n in self._pre_allocation.items() if n > 0 for f in self.families}
        else:
            keys |= {(ENI_POOL, f) for f in self.families}
        out: dict[tuple[str, int], tuple[int, int, int]] = {}
        for pool, family in sorted(keys):
            if family not in self.families:
                continue
            local = self._local.get((pool, family))
            in_use = local.in_use if local else 0
            waiting = pending.get((pool, family), 0)
            if self.config.mode == ENI:
                needed = eni_needed(in_use, waiting, self._eni_pre_allocate)
            else:
                needed = multi_pool_needed(in_use, waiting, self._pre_allocation.get(pool, 0))
            out[(pool, family)] = (in_use, waiting, needed)
        return out

    def sync(self, node: CiliumNode) -> IpamSpec:
        """Ingest the node's CIDRs, serve waiting pods, release spare CIDRs; return the desired spec.ipam."""
        if self._labels_from_node and dict(node.labels) != self._node_labels:
            self._node_labels = dict(node.labels)
            self._refresh_defaults()
        self._last_node = node
        order = self._ingest(node)
        for state in sorted(self._pods.values(), key=lambda p: p.seq):
            if state.status is PodStatus.BLOCKED and self.config.mode == MULTI_POOL:
                self._decide(state)
            if state.status is PodStatus.PENDING and self._try_allocate(state):
                self._completed.append(state.outcome())
        demand = self.demand()
        for (pool, family), (in_use, _waiting, needed) in demand.items():
            local = self._local.get((pool, family))
            if local is None or (self.config.mode == ENI and family == 6):
                continue  # ENI-V6-3: IPv6 prefixes are never released
            local.release_excess(max(needed - in_use, 0), self._release_policy())
        return replace(node.ipam, requested=self._requested(demand), allocated=self._allocated(node, order))

    def _release_policy(self) -> ReleasePolicy:
        """Hysteresis in ENI mode, where a released address holds an ENI slot for the release delay
        (ENI-REL-2); multi-pool blocks go straight back to the shared pool, so they go at once."""
        return self.config.release if self.config.mode == ENI else IMMEDIATE

    def _requested(self, demand: Mapping[tuple[str, int], tuple[int, int, int]]) -> tuple[PoolRequest, ...]:
        per_pool: dict[str, dict[int, int]] = {}
        for (pool, family), (_u, _w, needed) in demand.items():
            per_pool.setdefault(pool, {})[family] = needed
        return tuple(
            PoolRequest(pool, fams.get(4, 0), fams.get(6, 0))
            for pool, fams in sorted(per_pool.items())
            if fams.get(4, 0) or fams.get(6, 0)
        )

    def _allocated(self, node: CiliumNode, order: list[tuple[str, int]]) -> tuple[PoolAllocation, ...]:
        pools: list[str] = []
        for pool, _family in order + sorted(self._local):
            if pool not in pools:
                pools.append(pool)
        out: list[PoolAllocation] = []
        for pool in pools:
            cidrs: list[str] = []
            for family in (4, 6):
                local = self._local.get((pool, family))
                if local is not None:
                    cidrs.extend(local.cidrs())
            if cidrs:
                out.append(PoolAllocation(pool, tuple(cidrs)))
        return tuple(out)

    def local_pool(self, pool: str, family: int) -> LocalPool | None:
        """The local view of one pool and family (explain tooling, tests)."""
        return self._local.get((pool, family))
