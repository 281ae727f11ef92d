"""Baseline (b): a per-node model of the AWS VPC CNI's ipamd, for comparison only.

What it keeps from the real thing (and why the comparison is fair):
- every node calls EC2 itself (no central operator), sharing the account's token buckets;
- at start each ipamd describes its own instance and ENIs (DescribeInstances,
  DescribeNetworkInterfaces), and re-describes its ENIs every 60 s (reconcile);
- a pool monitor every 5 s keeps WARM_ENI_TARGET=1: at least one whole ENI's worth of free IPs.
  ENIs are filled completely: AssignPrivateIpAddresses for the free slots of an attached ENI, or
  CreateNetworkInterface (with the count) + AttachNetworkInterface + ModifyNetworkInterfaceAttribute
  (delete-on-termination) for a new one; an ENI whose attach fails is deleted;
- an ENI with no pod on it is detached and deleted when the node keeps a whole ENI free without it
  (no sooner than 60 s after the ENI came);
- freed pod IPs cool down for 30 s before reuse;
- AWS SDK retries: up to 3 retries with exponential backoff and full jitter (base 0.5 s for
  throttling, 0.05 s otherwise, capped at 20 s); after that the next monitor tick tries again.
It simplifies: no IMDS, no custom networking, no prefix mode, pods that find no free IP are served
the moment one appears (kubelet's sandbox retries are not modelled, which flatters the baseline).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from reconciler.ec2 import api
from reconciler.ec2.sim import SimulatedEc2
from reconciler.sim.loop import EventLoop
from reconciler.sim.metrics import Metrics
from reconciler.sim.workload import pod_name
from reconciler.sim.world import ClusterWorld

MONITOR_S = 5.0
RECONCILE_S = 60.0
COOLDOWN_S = 30.0
ENI_MIN_AGE_S = 60.0
MAX_RETRIES = 3


@dataclass
class _Eni:
    id: str
    index: int
    attachment_id: str = ""
    ips: list[str] = field(default_factory=list)
    since: float = 0.0


@dataclass
class _Node:
    index: int
    instance_id: str
    ready: bool = False
    busy: bool = False
    enis: dict[str, _Eni] = field(default_factory=dict)
    free: list[str] = field(default_factory=list)
    cooling: deque[tuple[float, str]] = field(default_factory=deque)
    pod_ip: dict[int, str] = field(default_factory=dict)
    ip_eni: dict[str, str] = field(default_factory=dict)
    waiting: deque[int] = field(default_factory=deque)


class VpcCniPolicy:
    """One ipamd per node, all driven by the shared event loop."""

    name = "vpc-cni-like"

    def __init__(self, loop: EventLoop, ec2: SimulatedEc2, world: ClusterWorld, metrics: Metrics) -> None:
        self.loop = loop
        self.ec2 = ec2
        self.world = world
        self.metrics = metrics
        self.nodes: dict[int, _Node] = {}
        limits = ec2.limits.limits_for(world.instance_type)
        self.max_enis = limits.max_network_interfaces
        self.per_eni = limits.ipv4_per_interface - 1

    # --- EC2 calls with SDK retries --------------------------------------------------------------
    def _call(
        self,
        fn: Callable[[], Any],
        on_ok: Callable[[Any], None],
        on_fail: Callable[[api.Ec2Error], None],
        attempt: int = 0,
    ) -> None:
        """Run `fn` now; continue with its result once its latency has passed (retrying like the SDK)."""
        try:
            result = fn()
            error: api.Ec2Error | None = None
        except api.Ec2Error as err:
            result, error = None, err
        record = self.ec2.last_call
        done = record.finished_at if record is not None else self.loop.now()
        if error is None:
            self.loop.at(done, on_ok, result)
        elif attempt < MAX_RETRIES and (error.retryable or isinstance(error, api.NotFound)):
            base = 0.5 if isinstance(error, api.Throttled) else 0.05
            backoff = self.loop.rng.uniform(0.0, min(20.0, base * 2**attempt))
            self.loop.at(done + backoff, self._call, fn, on_ok, on_fail, attempt + 1)
        else:
            self.loop.at(done, on_fail, error)

    # --- workload --------------------------------------------------------------------------------
    def node_join(self, index: int) -> None:
        node = self.nodes[index] = _Node(index, self.world.launch(index))
        self._call(
            lambda: self.ec2.describe_instances(ids=[node.instance_id]),
            lambda _: self._describe_enis(node, first=True),
            lambda _: self.loop.after(MONITOR_S, self.node_join_retry, node),
        )

    def node_join_retry(self, node: _Node) -> None:
        self._describe_enis(node, first=True)

    def _describe_enis(self, node: _Node, first: bool = False) -> None:
        def seen(enis: list[api.NetworkInterface]) -> None:
            for e in enis:
                if e.id not in node.enis and e.device_index is not None:
                    node.enis[e.id] = _Eni(e.id, e.device_index, e.attachment_id or "", [], self.loop.now())
                    for ip in e.secondary_ips:
                        self._add_ip(node, e.id, ip)
            if first:
                node.ready = True
                phase = self.loop.rng.uniform(0.0, MONITOR_S)
                self.loop.after(phase, self._monitor, node)
                self.loop.after(RECONCILE_S + phase, self._reconcile, node)

        def failed(_: api.Ec2Error) -> None:
            if first:
                self.loop.after(MONITOR_S, self._describe_enis, node, True)

        self._call(
            lambda: self.ec2.describe_network_interfaces(
                filters={"attachment.instance-id": [node.instance_id]}
            ),
            seen,
            failed,
        )

    def pod_add(self, index: int, pod: int) -> None:
        self.metrics.pod_pending(pod_name(pod), self.loop.now())
        node = self.nodes[index]
        node.waiting.append(pod)
        self._serve(node)

    def pod_delete(self, index: int, pod: int) -> None:
        node = self.nodes[index]
        ip = node.pod_ip.pop(pod, None)
        if ip is None:
            if pod in node.waiting:
                node.waiting.remove(pod)
            self.metrics.pod_gone(pod_name(pod), had_ip=False)
            return
        self.metrics.pod_gone(pod_name(pod), had_ip=True)
        node.cooling.append((self.loop.now() + COOLDOWN_S, ip))
        self.loop.after(COOLDOWN_S, self._cooled, node)

    def _cooled(self, node: _Node) -> None:
        now = self.loop.now()
        while node.cooling and node.cooling[0][0] <= now:
            _, ip = node.cooling.popleft()
            if ip in node.ip_eni:
                node.free.append(ip)
        self._serve(node)

    def _serve(self, node: _Node) -> None:
        now = self.loop.now()
        while node.waiting and node.free:
            pod = node.waiting.popleft()
            node.pod_ip[pod] = node.free.pop()
            self.metrics.pod_got_ip(pod_name(pod), now)

    def _add_ip(self, node: _Node, eni_id: str, ip: str) -> None:
        node.enis[eni_id].ips.append(ip)
        node.ip_eni[ip] = eni_id
        node.free.append(ip)

    # --- ipamd loops -----------------------------------------------------------------------------
    def _reconcile(self, node: _Node) -> None:
        self._describe_enis(node)
        self.loop.after(RECONCILE_S, self._reconcile, node)

    def _monitor(self, node: _Node) -> None:
        self.loop.after(MONITOR_S, self._monitor, node)
        if node.busy:
            return
        free = len(node.free) + len(node.cooling)
        short = free - len(node.waiting) < self.per_eni
        if short:
            unfilled = [e for e in node.enis.values() if len(e.ips) < self.per_eni]
            if unfilled:
                self._fill(node, min(unfilled, key=lambda e: e.index))
            elif len(node.enis) < self.max_enis:
                self._new_eni(node)
            return
        self._maybe_free_eni(node, free)

    def _done(self, node: _Node) -> None:
        node.busy = False
        self._serve(node)

    def _fill(self, node: _Node, eni: _Eni) -> None:
        node.busy = True
        count = self.per_eni - len(eni.ips)

        def ok(got: api.AssignedAddresses) -> None:
            for ip in got.private_ips:
                self._add_ip(node, eni.id, ip)
            self._done(node)

        self._call(
            lambda: self.ec2.assign_private_ip_addresses(eni.id, secondary_private_ip_count=count),
            ok,
            lambda _: self._done(node),
        )

    def _new_eni(self, node: _Node) -> None:
        node.busy = True
        used = {e.index for e in node.enis.values()}
        index = next(i for i in range(1, self.max_enis) if i not in used)
        request = api.CreateNetworkInterfaceRequest(
            subnet_id=self.world.subnet_for(node.index),
            security_group_ids=(self.world.security_group_id,),
            description="aws-K8S-" + node.instance_id,
            secondary_private_ip_count=self.per_eni,
            tags={"node.k8s.amazonaws.com/instance_id": node.instance_id},
        )

        def created(eni: api.NetworkInterface) -> None:
            self._call(
                lambda: self.ec2.attach_network_interface(eni.id, node.instance_id, index),
                lambda attachment: attached(eni, attachment),
                lambda _: self._call(
                    lambda: self.ec2.delete_network_interface(eni.id),
                    lambda _: self._done(node),
                    lambda _: self._done(node),
                ),
            )

        def attached(eni: api.NetworkInterface, attachment: str) -> None:
            node.enis[eni.id] = _Eni(eni.id, index, attachment, [], self.loop.now())
            for ip in eni.secondary_ips:
                self._add_ip(node, eni.id, ip)
            self._serve(node)
            self._call(
                lambda: self.ec2.set_delete_on_termination(eni.id, attachment, True),
                lambda _: self._done(node),
                lambda _: self._done(node),
            )

        self._call(lambda: self.ec2.create_network_interface(request), created, lambda _: self._done(node))

    def _maybe_free_eni(self, node: _Node, free: int) -> None:
        now = self.loop.now()
        in_use = {node.ip_eni[ip] for ip in node.pod_ip.values()}
        cooling = {node.ip_eni.get(ip) for _, ip in node.cooling}
        for eni in sorted(node.enis.values(), key=lambda e: -e.index):
            if eni.index == 0 or eni.id in in_use or eni.id in cooling or now - eni.since < ENI_MIN_AGE_S:
                continue
            if free - len(eni.ips) - len(node.waiting) < self.per_eni:
                return
            self._free_eni(node, eni)
            return

    def _free_eni(self, node: _Node, eni: _Eni) -> None:
        node.busy = True
        del node.enis[eni.id]
        gone = set(eni.ips)
        node.free = [ip for ip in node.free if ip not in gone]
        for ip in gone:
            node.ip_eni.pop(ip, None)

        def detached(_: Any) -> None:
            self._call(
                lambda: self.ec2.delete_network_interface(eni.id),
                lambda _: self._done(node),
                lambda _: self._done(node),
            )

        self._call(
            lambda: self.ec2.detach_network_interface(eni.attachment_id), detached, lambda _: self._done(node)
        )

    # --- figures ---------------------------------------------------------------------------------
    def nodes_ready(self) -> int:
        return sum(1 for n in self.nodes.values() if n.ready)

    def ips_allocated(self) -> int:
        return sum(len(n.ip_eni) for n in self.nodes.values())
