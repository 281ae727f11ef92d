"""`EniOperator`: the ENI-mode engine both the controller (real Kubernetes) and the simulator drive.

Usage contract
--------------
Construct once per leadership term (state is rebuilt from CiliumNodes + EC2 only)::

    tags = own_instance_tags(ec2, my_instance_id)  # ENI-CFG-2; skip when --cluster-name is set
    op = EniOperator(ec2, config, clock, runner=ThreadPoolRunner(config.parallel_alloc_workers),
                     own_instance_tags=tags)                    # None -> --cluster-name or "default"
    op.refresh(force=True)                                      # first EC2 cache load (ENI-CACHE-1)

Feed it what the cluster says, whenever it changes:

    op.on_node_changed(cilium_node)      # CiliumNode add/update: stores it, queues it on a deficit
    op.on_node_deleted(name)             # CiliumNode gone: forget it (its IPv6 prefix goes with it)
    op.set_pending_pods({"node-a": 3})   # pods bound to a node without an IP yet (surge, ENI-ALLOC-2)

Drive the loops (each call is cheap when it has nothing to do):

    op.refresh()                # call every tick: refreshes when due (60 s, or 1 s after a mutation
                                # or a failed one, ENI-CACHE-2); a node whose EC2 call failed waits
                                # for that refresh before its next mutation (lost responses)
    results = op.publish()      # ENI-PUB-1: {node: NodeResult(enis=...)} for nodes whose status changed
    plan = op.resync(nodes, pending)   # the 1-minute scan (ENI-CALC-3/4): demands + ordered queue
    results = op.run_allocations()     # the allocation queue, at most once per second (ENI-CALC-4)
    results = op.run_release(plan)     # excess release, scan only, with --aws-release-excess-ips
    gc = op.run_gc()                   # every --eni-gc-interval (ENI-GC-1)
    op.gauges(), op.counters           # ENI-MET-1 gauges and cumulative counters
    # or all of it: results = op.reconcile(nodes, pending, scan=True)

Every `NodeResult` says what to write back: `enis` (new status.eni.enis, None = unchanged) and
`operator_error` (sentence, "" = clear, None = no opinion). Writing them (with resourceVersion and
retry on conflict) is the driver's job; the engine never talks to Kubernetes. A node's failure is
caught, becomes one sentence in its result, and never stops other nodes. `op.counters` and each
`Plan` carry what ENI-MET-1 exports. With `config.dry_run` every EC2 mutation is logged with its
reason and none is performed. Work on nodes runs through the pluggable `Runner` (sequential for
the simulator, a bounded thread pool for the operator).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping

from reconciler.clock import Clock
from reconciler.ec2.api import Ec2Api, Ec2Error, InsufficientCidrBlocks
from reconciler.eni.allocate import (
    AssignIps,
    AssignPrefixes,
    allocation_target,
    plan_ips,
    plan_prefixes,
    prefix_delegation_enabled,
)
from reconciler.eni.cache import Ec2Cache, LimitsSource
from reconciler.eni.calc import (
    NodeDemand,
    QueueEntry,
    needed_ips,
    node_demand,
    pod_need,
    scan_queue,
    two_phase_order,
)
from reconciler.eni.config import EniOperatorConfig, creation_tags, gc_tags, resolve_cluster_name
from reconciler.eni.create import CreateEni, device_index, plan_create
from reconciler.eni.executor import Executor
from reconciler.eni.gc import EniGarbageCollector, GcResult
from reconciler.eni.ipv6 import AssignIpv6Prefix, holds_ipv6_prefix, plan_ipv6
from reconciler.eni.log import log_event
from reconciler.eni.publish import changed_enis, node_enis, offered_cidrs, usable_for_pods
from reconciler.eni.release import CidrTracker, plan_release
from reconciler.eni.results import Counters, Gauges, NodeResult, Plan
from reconciler.eni.runner import Runner, SequentialRunner
from reconciler.eni.static_ip import needs_static_ip, plan_static_ip
from reconciler.eni.view import NodeError, NodeView
from reconciler.model import CiliumNode, EniStatus

CAPACITY_LOG_INTERVAL = 300.0


def _ec2_sentence(node: str, what: str, err: Ec2Error) -> str:
    return f"node {node}: {what} failed with {err.code}: {err}"


def own_instance_tags(ec2: Ec2Api, instance_id: str) -> dict[str, str]:
    """ENI-CFG-2: the tags of the operator's own instance (DescribeTags, ENI-PERM-1), {} on failure.

    Only needed when neither --cluster-name nor --eni-gc-tags is set; pass the result as
    `own_instance_tags` so the EKS cluster-name tag names the GC tags.
    """
    if not instance_id:
        return {}
    try:
        found = ec2.describe_tags(filters={"resource-id": [instance_id], "resource-type": ["instance"]})
    except Ec2Error as err:
        log_event("own_instance_tags_failed", logging.WARNING, action="describe_tags", reason=str(err))
        return {}
    return {t.key: t.value for t in found}


class EniOperator:
    """See the module docstring for the contract."""

    def __init__(
        self,
        ec2: Ec2Api,
        config: EniOperatorConfig,
        clock: Clock,
        *,
        runner: Runner | None = None,
        limits: LimitsSource | None = None,
        own_instance_tags: Mapping[str, str] | None = None,
        epoch: int | None = None,
    ) -> None:
        self.config = config
        self.clock = clock
        self.cluster_name = resolve_cluster_name(config.cluster_name, own_instance_tags)
        self.cache = Ec2Cache(ec2, clock, config, limits)
        self.counters = Counters()
        self.tracker = CidrTracker()
        self.gc = EniGarbageCollector(
            ec2,
            clock,
            gc_tags(config, self.cluster_name),
            config.eni_gc_interval,
            config.gc_max_deletions_per_run,
        )
        self.executor = Executor(ec2, self.cache, clock, self.counters, config.dry_run)
        self.runner: Runner = runner or SequentialRunner()
        self.epoch = epoch if epoch is not None else int(clock.now() * 1000)
        self._ec2 = ec2
        self._tags = creation_tags(config, self.cluster_name)
        self._lock = threading.RLock()
        self._nodes: dict[str, CiliumNode] = {}
        self._pending: dict[str, int] = {}
        self._queue: dict[str, int] = {}
        self._last_allocation_run: float | None = None
        self._fragmented: dict[str, float] = {}
        self._attempts: dict[tuple[str, int], int] = {}
        self._capacity_logged: dict[str, float] = {}
        self._static_ip_done: set[str] = set()
        self._uncertain: dict[str, int] = {}
        self._at_capacity: set[str] = set()
        self._missing_instance: dict[str, int] = {}

    # --- inputs ----------------------------------------------------------------------------------
    def on_node_changed(self, node: CiliumNode) -> None:
        """ENI-CALC-3: a changed CiliumNode is checked for a deficit at once and queued if short."""
        with self._lock:
            self._nodes[node.name] = node
        if node.instance_id:
            self.tracker.observe(
                node.name,
                offered_cidrs(self.published_enis(node)),
                node.ipam.cidrs_of("default"),
                self.clock.now(),
            )
        demand = node_demand(node)
        if self._wants_work(node, demand):
            with self._lock:
                self._queue[node.name] = max(self._effective_needed(node, demand), 0)

    def on_node_deleted(self, name: str) -> None:
        with self._lock:
            self._nodes.pop(name, None)
            self._queue.pop(name, None)
            self._pending.pop(name, None)
            self._uncertain.pop(name, None)
            self._at_capacity.discard(name)
            self._static_ip_done.discard(name)
            self._missing_instance.pop(name, None)
        self.tracker.forget_node(name)

    def set_pending_pods(self, counts: Mapping[str, int]) -> None:
        with self._lock:
            self._pending = {k: int(v) for k, v in counts.items() if v > 0}

    def nodes(self) -> list[CiliumNode]:
        with self._lock:
            return list(self._nodes.values())

    # --- cache + publish -------------------------------------------------------------------------
    def refresh(self, force: bool = False) -> bool:
        """ENI-CACHE-2: refresh when due (or now with `force`); True when a refresh succeeded."""
        return self.cache.refresh() if force else self.cache.maybe_refresh()

    def published_enis(self, node: CiliumNode) -> dict[str, EniStatus]:
        """ENI-PUB-1: what status.eni.enis should say for this node according to the cache."""
        if not node.instance_id:
            return {}
        return node_enis(
            node, self.cache.enis_of_instance(node.instance_id), self.cache.subnet_map(), self.cache.vpc_map()
        )

    def publish(self) -> dict[str, NodeResult]:
        """ENI-PUB-1: a NodeResult for every node whose status.eni.enis differs from the cache."""
        out: dict[str, NodeResult] = {}
        now = self.clock.now()
        for node in self.nodes():
            if not self.cache.manages_instance(node.instance_id):
                continue
            published = self.published_enis(node)
            self.tracker.observe(node.name, offered_cidrs(published), node.ipam.cidrs_of("default"), now)
            changed = changed_enis(node, published)
            if changed is not None:
                out[node.name] = NodeResult(node.name, enis=changed)
        return out

    # --- the scan --------------------------------------------------------------------------------
    def resync(
        self, nodes: Iterable[CiliumNode] | None = None, pending_pods: Mapping[str, int] | None = None
    ) -> Plan:
        """ENI-CALC-3/4: the interval scan. Replaces the node set when `nodes` is given.

        Returns every node's numbers and the queue: deficits first (largest first), then nodes that
        only need an IPv6 prefix or a static IP, then releases (only with --aws-release-excess-ips).
        """
        if nodes is not None:
            fresh = {n.name: n for n in nodes}
            with self._lock:
                for gone in set(self._nodes) - set(fresh):
                    self.tracker.forget_node(gone)
                self._nodes = fresh
                self._queue = {k: v for k, v in self._queue.items() if k in fresh}
        if pending_pods is not None:
            self.set_pending_pods(pending_pods)
        now = self.clock.now()
        demands: dict[str, NodeDemand] = {}
        effective: list[NodeDemand] = []
        extra: list[str] = []
        for node in self.nodes():
            if not self.cache.manages_instance(node.instance_id):
                continue
            demand = node_demand(node)
            demands[node.name] = demand
            self.tracker.observe(
                node.name, offered_cidrs(self.published_enis(node)), node.ipam.cidrs_of("default"), now
            )
            needed = self._effective_needed(node, demand)
            effective.append(
                NodeDemand(
                    node.name,
                    demand.available,
                    demand.used,
                    needed,
                    demand.excess,
                    demand.wants_ipv6,
                    demand.max_above_watermark,
                )
            )
            if needed == 0 and self._wants_work(node, demand):
                extra.append(node.name)
        queue = scan_queue(effective, self.config.aws_release_excess_ips)
        allocs = [e for e in queue if e.action == "allocate"]
        releases = [e for e in queue if e.action == "release"]
        if self.config.aws_release_excess_ips:
            # Deviation (see release.py): a node in deficit also releases the CIDRs its agent gave
            # up -- they are dead to the agent and hold ENI slots the deficit needs.
            listed = {e.node for e in releases}
            releases += [
                QueueEntry(e.node, "release", 0)
                for e in allocs
                if e.node not in listed and self.tracker.due(e.node, now, self.config.excess_ip_release_delay)
            ]
        queue = allocs + [QueueEntry(n, "allocate", 0) for n in sorted(extra)] + releases
        with self._lock:
            for entry in queue:
                if entry.action == "allocate":
                    self._queue[entry.node] = entry.amount
        self.counters.resyncs += 1
        return Plan(demands=demands, queue=queue)

    def _effective_needed(self, node: CiliumNode, demand: NodeDemand) -> int:
        """neededIPs with addresses the agent has not adopted yet counted as available."""
        in_flight = self.tracker.in_flight(node.name, self.clock.now(), self.config.adoption_grace)
        if in_flight == 0:
            return demand.needed
        ipam = node.ipam
        return needed_ips(
            demand.available + in_flight, demand.used, ipam.pre_allocate, ipam.min_allocate, ipam.max_allocate
        )

    def _wants_work(self, node: CiliumNode, demand: NodeDemand) -> bool:
        if self._effective_needed(node, demand) > 0:
            return True
        if not node.instance_id:
            return False
        enis = self.cache.enis_of_instance(node.instance_id)
        wants_v6 = demand.wants_ipv6 and not any(
            e.ipv6_prefixes for e in enis if usable_for_pods(e, node.eni)
        )
        wants_static = bool(node.ipam.static_ip_tags) and node.name not in self._static_ip_done
        return wants_v6 or wants_static

    # --- allocation ------------------------------------------------------------------------------
    def allocation_due(self) -> bool:
        last = self._last_allocation_run
        return last is None or self.clock.now() - last >= self.config.allocation_min_interval

    def queued(self) -> list[str]:
        """The allocation queue in processing order (ENI-CALC-4 in two phases): nodes whose pods
        lack addresses first, then nodes short only of their watermark; largest deficit first."""
        with self._lock:
            amounts = dict(self._queue)
        return two_phase_order(amounts, {name: self._pod_need(name) for name in amounts})

    def _pod_need(self, name: str) -> int:
        """Addresses the node's pods lack now, in-flight addresses counted as available."""
        node = self._nodes.get(name)
        if node is None:
            return 0
        demand = node_demand(node)
        in_flight = self.tracker.in_flight(name, self.clock.now(), self.config.adoption_grace)
        return pod_need(demand.used, self._pending.get(name, 0), demand.available + in_flight)

    def run_allocations(self, force: bool = False) -> dict[str, NodeResult]:
        """ENI-CALC-4: process the allocation queue, at most once per second; blocked while the
        cache is unstable (ENI-CACHE-2). Nodes that made partial progress or hit a transient EC2
        error stay queued for the next run.

        Two phases (NOTES.md, deviation 10): nodes whose pods lack addresses go first, and such a
        node stops once its pods are covered, so its result (new status.eni.enis) is returned --
        and can be published -- without waiting for the ENI that only the watermark needs; that
        remainder stays queued and is served by a later run, after every pod need of that run.
        """
        if not self.cache.stable:
            log_event("allocation_blocked", logging.WARNING, action="allocate", reason=self.cache.last_error)
            return {}
        if not (force or self.allocation_due()):
            return {}
        self._last_allocation_run = self.clock.now()
        names = self.queued()
        with self._lock:
            self._queue.clear()
        results = self.runner.map(self._allocate_node, names)
        out: dict[str, NodeResult] = {}
        for name, (result, retry) in zip(names, results, strict=True):
            out[name] = result
            with self._lock:
                if result.at_capacity:
                    self._at_capacity.add(name)
                elif result.demand is not None:
                    self._at_capacity.discard(name)
            if retry:
                with self._lock:
                    self._queue.setdefault(name, result.demand.needed if result.demand else 0)
        return out

    def _view(self, node: CiliumNode) -> NodeView:
        if not node.instance_id:
            raise NodeError(
                "spec.instance-id is empty; the agent must create the CiliumNode from EC2 metadata"
            )
        try:
            limits = self.cache.limits_for(node.eni.instance_type)
        except Ec2Error as err:
            raise NodeError(str(err)) from None
        now = self.clock.now()
        fragmented = frozenset(s for s, until in list(self._fragmented.items()) if until > now)
        return NodeView(
            node=node,
            limits=limits,
            attached=tuple(self.cache.enis_of_instance(node.instance_id)),
            subnets=self.cache.subnet_map(),
            route_tables=self.cache.route_tables(),
            security_groups=self.cache.security_groups(),
            fragmented=fragmented,
        )

    def _allocate_node(self, name: str) -> tuple[NodeResult, bool]:
        """One node's allocation pass; returns (result, keep queued). Never raises."""
        node = self._nodes.get(name)
        if node is None or not self.cache.manages_instance(node.instance_id):
            return NodeResult(name), False
        failed_at = self._uncertain.get(name)
        if failed_at is not None:
            if self.cache.refresh_count <= failed_at:
                return NodeResult(name), True  # wait for the refresh that shows what the failed call did
            self._uncertain.pop(name, None)
        if node.instance_id and not self.cache.enis_of_instance(node.instance_id):
            return self._instance_not_cached(node)
        self._missing_instance.pop(name, None)
        demand = node_demand(node)
        result = NodeResult(name, demand=demand)
        errors: list[str] = []
        retry = False
        try:
            retry = self._allocate(node, demand, result, errors)
        except NodeError as err:
            errors.append(f"node {name}: {err}")
        except Ec2Error as err:  # pragma: no cover - _allocate maps EC2 errors itself
            errors.append(_ec2_sentence(name, "allocation", err))
            retry = True
        result.enis = changed_enis(node, self.published_enis(node))
        result.operator_error = "; ".join(dict.fromkeys(errors))
        return result, retry

    def _instance_not_cached(self, node: CiliumNode) -> tuple[NodeResult, bool]:
        """A node whose instance has no ENI in the cache (not even eth0) is not planned blindly: a
        new instance waits for the next refresh; one still missing after a refresh is an error."""
        seen_at = self._missing_instance.setdefault(node.name, self.cache.refresh_count)
        if self.cache.refresh_count <= seen_at:
            self.cache.trigger()  # once per missing instance, not every run for a bad instance-id
            return NodeResult(node.name), True
        error = (
            f"node {node.name}: instance {node.instance_id} has no network interface in EC2; "
            "check spec.instance-id or whether the instance still runs"
        )
        return NodeResult(node.name, demand=node_demand(node), operator_error=error), False

    def _allocate(self, node: CiliumNode, demand: NodeDemand, result: NodeResult, errors: list[str]) -> bool:
        name = node.name
        view = self._view(node)
        now = self.clock.now()
        self.tracker.observe(
            name, offered_cidrs(self.published_enis(node)), node.ipam.cidrs_of("default"), now
        )
        in_flight = self.tracker.in_flight(name, now, self.config.adoption_grace)
        ipam = node.ipam
        needed = self._effective_needed(node, demand)
        remaining = (
            allocation_target(
                needed,
                ipam.max_above_watermark,
                self._pending.get(name, 0),
                demand.available + in_flight,
                ipam.max_allocate,
            )
            if needed > 0
            else 0
        )
        # Phase one of ENI-CALC-4: while pods lack addresses, stop once they are covered; each
        # call is still sized for the whole target, so deferring the rest costs no extra call.
        pods_short = pod_need(demand.used, self._pending.get(name, 0), demand.available + in_flight)
        pd = prefix_delegation_enabled(self.config, view.limits, node.eni)
        want_v6 = demand.wants_ipv6 and not holds_ipv6_prefix(view)
        retry = False
        max_ops = 2 * view.limits.max_network_interfaces + 4
        for _ in range(max_ops):
            pods_served = 0 < pods_short <= result.allocated_ips
            if (remaining <= 0 or pods_served) and not want_v6:
                break
            view = self._view(node)
            action: AssignIps | AssignPrefixes | CreateEni | AssignIpv6Prefix | None = None
            try:
                if want_v6:
                    try:
                        v6 = plan_ipv6(view, True)
                    except NodeError as err:
                        errors.append(f"node {name}: {err}")
                        want_v6 = False
                        continue
                    if v6 is not None:
                        action = v6
                        result.actions.append(self.executor.assign_ipv6(name, v6))
                        want_v6 = False
                        if self.executor.dry_run:
                            break
                        continue
                action = self._plan_ipv4(view, remaining, pd, want_v6, errors) if remaining > 0 else None
                if action is None and want_v6:
                    try:
                        action = self._plan_create(view, 0, False, True)
                    except NodeError as err:
                        errors.append(f"node {name}: {err}")
                        want_v6 = False
                        continue
                if action is None:
                    break
                if isinstance(action, CreateEni):
                    added = self._do_create(name, action, result)
                    want_v6 = False  # the /80 came with the ENI, or _plan_create reported why not
                else:
                    added, line = self.executor.assign(name, action)
                    result.actions.append(line)
                result.allocated_ips += added
                remaining -= added
                if self.executor.dry_run:
                    break
            except InsufficientCidrBlocks as err:
                subnet = self._subnet_of(action)
                self._fragmented[subnet] = self.clock.now() + self.config.cache_refresh_interval
                log_event(
                    "insufficient_cidr_blocks",
                    logging.WARNING,
                    node=name,
                    subnet=subnet,
                    action="assign_prefixes",
                    reason=f"{err} Trying another subnet, then /32 addresses.",
                )
            except NodeError as err:
                result.at_capacity = remaining > 0
                errors.append(f"node {name}: {err}")
                self._log_capacity(name, str(err))
                break
            except Ec2Error as err:
                errors.append(_ec2_sentence(name, self._describe(action), err))
                log_event(
                    "ec2_error",
                    logging.WARNING,
                    node=name,
                    action=self._describe(action),
                    reason=str(err),
                    code=err.code,
                )
                self.counters.add("ec2_errors", err.code)
                # The call may have taken effect even though it failed (lost response): no more
                # mutations for this node until a cache refresh shows EC2's real state.
                self._uncertain[name] = self.cache.refresh_count
                self.cache.trigger()
                retry = True
                break
        else:
            retry = True
        self._static_ip(view, result, errors)
        if self.executor.dry_run:
            return False
        return retry or (remaining > 0 and not result.at_capacity and not errors)

    def _plan_ipv4(
        self, view: NodeView, remaining: int, pd: bool, want_v6: bool, errors: list[str]
    ) -> AssignIps | AssignPrefixes | CreateEni | None:
        """ENI-ALLOC-1..5 with prefix delegation preferred, then a new ENI, then /32 fallbacks."""
        if not pd:
            return plan_ips(view, remaining) or self._plan_create(view, remaining, False, want_v6, errors)
        found = plan_prefixes(view, remaining)
        if found is not None:
            return found
        if view.free_device_slot:
            return self._plan_create(view, remaining, True, want_v6, errors)
        fallback = plan_ips(view, remaining, fallback=True)
        if fallback is None and view.fragmented:
            fallback = plan_ips(view, remaining, fallback=True, allow_mixing=True)
        return fallback or self._plan_create(view, remaining, True, want_v6, errors)

    def _plan_create(
        self, view: NodeView, want: int, pd: bool, want_v6: bool, errors: list[str] | None = None
    ) -> CreateEni:
        """ENI-CREATE: include the IPv6 prefix when wanted; if no dual-stack subnet, create for IPv4
        alone and report the IPv6 problem (ENI-V6-4)."""
        used = [e.device_index for e in view.attached if e.device_index is not None]
        index = device_index(used, view.node.eni.first_interface_index)
        attempt = self._attempts.get((view.instance_id, index), 0)
        reason = (
            f"no usable ENI can take {want} more address(es)"
            if want
            else "IPv6 demand and no ENI can take a /80"
        )
        try:
            return plan_create(view, want, pd, want_v6, self._tags, self.epoch, attempt, reason)
        except NodeError as err:
            if not want_v6 or want == 0 or errors is None:
                raise
            errors.append(f"node {view.name}: {err}")
            return plan_create(view, want, pd, False, self._tags, self.epoch, attempt, reason)

    def _do_create(self, name: str, action: CreateEni, result: NodeResult) -> int:
        key = (action.instance_id, action.device_index)
        try:
            eni, line = self.executor.create(action)
        except Ec2Error as err:
            if not err.retryable:
                self._attempts[key] = self._attempts.get(key, 0) + 1
            raise
        self._attempts[key] = self._attempts.get(key, 0) + 1
        result.actions.append(line)
        if eni is None:
            return 0
        result.created_enis += 1
        return len(eni.secondary_ips) + 16 * len(eni.ipv4_prefixes)

    @staticmethod
    def _subnet_of(action: object) -> str:
        if isinstance(action, CreateEni):
            return action.subnet_id
        return str(getattr(action, "subnet_id", ""))

    @staticmethod
    def _describe(action: object) -> str:
        if isinstance(action, CreateEni):
            return f"creating an ENI in {action.subnet_id}"
        if isinstance(action, AssignPrefixes):
            return f"assigning {action.count} prefix(es) to {action.eni_id}"
        if isinstance(action, AssignIps):
            return f"assigning {action.count} address(es) to {action.eni_id}"
        if isinstance(action, AssignIpv6Prefix):
            return f"assigning an IPv6 /80 prefix to {action.eni_id}"
        return "allocation"

    def _log_capacity(self, name: str, reason: str) -> None:
        """ENI-ALLOC-5: 'out of interfaces' is logged at most once per 5 minutes per node."""
        now = self.clock.now()
        if now - self._capacity_logged.get(name, -CAPACITY_LOG_INTERVAL) >= CAPACITY_LOG_INTERVAL:
            self._capacity_logged[name] = now
            log_event("node_at_capacity", logging.WARNING, node=name, action="allocate", reason=reason)

    def _static_ip(self, view: NodeView, result: NodeResult, errors: list[str]) -> None:
        """ENI-PARAM-9, tried once per node per operator term once it succeeds."""
        name = view.name
        if name in self._static_ip_done or not view.node.ipam.static_ip_tags:
            return
        view = self._view(view.node)
        if not needs_static_ip(view):
            self._static_ip_done.add(name)
            return
        try:
            filters = {f"tag:{k}": [v] for k, v in view.node.ipam.static_ip_tags.items()}
            action = plan_static_ip(view, self._ec2.describe_addresses(filters=filters))
            if action is not None:
                result.actions.append(self.executor.associate(name, action))
            if not self.executor.dry_run:
                self._static_ip_done.add(name)
        except NodeError as err:
            errors.append(f"node {name}: {err}")
        except Ec2Error as err:
            errors.append(_ec2_sentence(name, "associating a static IP", err))

    # --- release ---------------------------------------------------------------------------------
    def run_release(self, plan: Plan) -> dict[str, NodeResult]:
        """ENI-REL-2/3, ENI-CALC-3: on the scan only, with --aws-release-excess-ips, never while the
        cache is unstable; at most excessIPs addresses per node per scan."""
        if not self.config.aws_release_excess_ips or not self.cache.stable:
            return {}
        names = plan.releases
        results = self.runner.map(lambda n: self._release_node(n, self._release_cap(plan.demands[n])), names)
        return {r.node: r for r in results}

    @staticmethod
    def _release_cap(demand: NodeDemand) -> int:
        """ENI-REL-2: at most excessIPs per scan -- except for a node in deficit, whose released
        CIDRs are unusable (the agent will not re-add them while offered) and block its ENI slots."""
        return demand.excess if demand.needed == 0 else 1 << 30

    def _release_node(self, name: str, excess: int) -> NodeResult:
        node = self._nodes.get(name)
        if node is None:
            return NodeResult(name)
        result = NodeResult(name, demand=node_demand(node))
        errors: list[str] = []
        now = self.clock.now()
        published = self.published_enis(node)
        self.tracker.observe(name, offered_cidrs(published), node.ipam.cidrs_of("default"), now)
        due = self.tracker.due(name, now, self.config.excess_ip_release_delay)
        if due:
            try:
                view = self._view(node)
            except NodeError as err:
                return NodeResult(name, operator_error=f"node {name}: {err}")
            allocated = [c for a in node.ipam.allocated for c in a.cidrs]
            for action in plan_release(
                due, allocated, view.usable, excess, self.config.excess_ip_release_delay
            ):
                try:
                    released, line = self.executor.release(name, action)
                except Ec2Error as err:
                    errors.append(_ec2_sentence(name, f"releasing addresses on {action.eni_id}", err))
                    self.cache.trigger()
                    continue
                result.released_ips += released
                result.actions.append(line)
        result.enis = changed_enis(node, self.published_enis(node))
        result.operator_error = "; ".join(errors) if errors else None
        return result

    # --- metrics ---------------------------------------------------------------------------------
    def gauges(self) -> Gauges:
        """ENI-MET-1 gauges from the known CiliumNodes: per-node available/used/needed and the node
        categories (total, in-deficit, at-capacity as found by the last allocation run)."""
        per_node = {n.name: node_demand(n) for n in self.nodes()}
        with self._lock:
            at_capacity = len(self._at_capacity & set(per_node))
        return Gauges(
            per_node=per_node,
            nodes_total=len(per_node),
            nodes_in_deficit=sum(1 for d in per_node.values() if d.needed > 0),
            nodes_at_capacity=at_capacity,
        )

    # --- GC and the whole cycle ------------------------------------------------------------------
    def run_gc(self, force: bool = False) -> GcResult:
        """ENI-GC-1: every --eni-gc-interval (0 disables), bounded, two-phase."""
        return self.gc.run(dry_run=self.config.dry_run, force=force)

    def reconcile(
        self,
        nodes: Iterable[CiliumNode],
        pending_pods: Mapping[str, int] | None = None,
        *,
        scan: bool = False,
    ) -> dict[str, NodeResult]:
        """One convenient pass: refresh if due, scan (when `scan`), allocate, release, GC, publish.

        Nodes given here replace the known set. Results for the same node are merged.
        """
        nodes = list(nodes)
        self.refresh()
        if scan:
            plan = self.resync(nodes, pending_pods)
        else:
            for node in nodes:
                self.on_node_changed(node)
            if pending_pods is not None:
                self.set_pending_pods(pending_pods)
            plan = None
        out: dict[str, NodeResult] = {}

        def merge(more: Mapping[str, NodeResult]) -> None:
            for name, res in more.items():
                out[name] = out[name].merge(res) if name in out else res

        merge(self.run_allocations())
        if plan is not None:
            merge(self.run_release(plan))
        self.run_gc()
        merge({k: v for k, v in self.publish().items() if k not in out or out[k].enis is None})
        return out
