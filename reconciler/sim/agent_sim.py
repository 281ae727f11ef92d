"""The simulated Cilium agent of one node in ENI mode (ENI-ARCH-2/4/5, ENI-REL-1).

It is what the operator sees of a node: it creates the CiliumNode from the instance's metadata,
reports demand in `spec.ipam.pools.requested` (in-use + pending + pre-allocate, linear), adopts the
CIDRs the operator publishes in `status.eni.enis` into `spec.ipam.pools.allocated` (each address a
/32, each prefix a /28, via the engine's own `offered_cidrs`), hands pod IPs out locally, and -- with
release on -- removes wholly unused CIDRs when the node keeps enough spare (never re-adding one it
removed while the operator still lists it).

Writes are coalesced (at most one per `SYNC_MIN_INTERVAL_S` per node) and go through
`SimCluster.write_spec`, which carries resourceVersion and retries on conflict like a real client.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from reconciler.eni.publish import offered_cidrs
from reconciler.model import DEFAULT_POOL, CiliumNode
from reconciler.sim.loop import EventLoop
from reconciler.sim.metrics import Metrics
from reconciler.sim.workload import pod_name

SYNC_MIN_INTERVAL_S = 1.0


def cidr_ips(cidr: str) -> list[str]:
    """The pod IPs a /32 or an ENI /28 prefix gives (every address of an AWS prefix is usable)."""
    base, _, bits = cidr.partition("/")
    if bits == "32":
        return [base]
    a, b, c, d = (int(x) for x in base.split("."))
    return [f"{a}.{b}.{c}.{d + i}" for i in range(2 ** (32 - int(bits)))]


class SimAgent:
    def __init__(
        self,
        name: str,
        loop: EventLoop,
        metrics: Metrics,
        write_spec: Callable[[SimAgent], None],
        *,
        pre_allocate: int,
        release: bool,
    ) -> None:
        self.name = name
        self.loop = loop
        self.metrics = metrics
        self._write_spec = write_spec
        self.pre_allocate = pre_allocate
        self.release = release
        self.allocated: list[str] = []  # default-pool CIDRs in spec.ipam.pools.allocated
        self._allocated_set: set[str] = set()
        self.released: set[str] = set()
        self.free: list[str] = []
        self.pod_ip: dict[int, str] = {}
        self.cidr_of_ip: dict[str, str] = {}
        self.used_in_cidr: dict[str, int] = {}
        self.pending: deque[int] = deque()
        self.dead_cidrs: set[str] = set()  # withdrawn by the operator while in use: no new IPs
        self._sync_scheduled = False
        self._last_sync = -SYNC_MIN_INTERVAL_S
        self.written_demand = -1

    # --- demand (ENI-ARCH-5) ---------------------------------------------------------------------
    @property
    def demand(self) -> int:
        return len(self.pod_ip) + len(self.pending) + self.pre_allocate

    @property
    def ready(self) -> bool:
        return bool(self.allocated)

    def spec_ipam(self, base: dict[str, Any]) -> dict[str, Any]:
        """`spec.ipam` with our requested/allocated for pool default (other keys kept)."""
        ipam = dict(base)
        pools = dict(ipam.get("pools") or {})
        pools["requested"] = [{"pool": DEFAULT_POOL, "needed": {"ipv4-addrs": self.demand}}]
        pools["allocated"] = [{"pool": DEFAULT_POOL, "cidrs": list(self.allocated)}] if self.allocated else []
        ipam["pools"] = pools
        ipam["pre-allocate"] = self.pre_allocate
        return ipam

    def schedule_sync(self) -> None:
        if self._sync_scheduled:
            return
        self._sync_scheduled = True
        self.loop.at(max(self.loop.now(), self._last_sync + SYNC_MIN_INTERVAL_S), self._sync)

    def _sync(self) -> None:
        self._sync_scheduled = False
        self._last_sync = self.loop.now()
        if self.release:
            self._release_spare()
        self.written_demand = self.demand
        self._write_spec(self)

    # --- pods ------------------------------------------------------------------------------------
    def pod_add(self, pod: int) -> None:
        self.metrics.pod_pending(pod_name(pod), self.loop.now())
        self.pending.append(pod)
        self._serve()
        self.schedule_sync()

    def pod_delete(self, pod: int) -> None:
        ip = self.pod_ip.pop(pod, None)
        if ip is None:
            try:
                self.pending.remove(pod)
            except ValueError:
                return
            self.metrics.pod_gone(pod_name(pod), had_ip=False)
        else:
            self.metrics.pod_gone(pod_name(pod), had_ip=True)
            cidr = self.cidr_of_ip[ip]
            self.used_in_cidr[cidr] -= 1
            if cidr in self._allocated_set and cidr not in self.dead_cidrs:
                self.free.append(ip)
            elif self.used_in_cidr[cidr] == 0:
                self._drop(cidr)
        self.schedule_sync()

    def _serve(self) -> None:
        now = self.loop.now()
        while self.pending and self.free:
            pod = self.pending.popleft()
            ip = self.free.pop()
            self.pod_ip[pod] = ip
            self.used_in_cidr[self.cidr_of_ip[ip]] += 1
            self.metrics.pod_got_ip(pod_name(pod), now)

    # --- CIDRs (ENI-ARCH-4, ENI-REL-1) -----------------------------------------------------------
    def on_status(self, node: CiliumNode) -> None:
        """The operator published status.eni.enis: adopt new CIDRs, forget withdrawn ones."""
        offered = {c for c in offered_cidrs(node.enis) if ":" not in c}
        self.released &= offered
        new = [c for c in sorted(offered) if c not in self._allocated_set and c not in self.released]
        withdrawn = [c for c in self.allocated if c not in offered]
        for cidr in withdrawn:
            if self.used_in_cidr.get(cidr, 0):
                self.dead_cidrs.add(cidr)
            self._remove_from_free(cidr)
            self._drop(cidr)
        for cidr in new:
            self.allocated.append(cidr)
            self._allocated_set.add(cidr)
            self.used_in_cidr.setdefault(cidr, 0)
            for ip in cidr_ips(cidr):
                self.cidr_of_ip[ip] = cidr
                self.free.append(ip)
        if new or withdrawn:
            self._serve()
            self.schedule_sync()

    def _drop(self, cidr: str) -> None:
        if cidr in self._allocated_set:
            self._allocated_set.discard(cidr)
            self.allocated.remove(cidr)
        if not self.used_in_cidr.get(cidr):
            self.used_in_cidr.pop(cidr, None)
            self.dead_cidrs.discard(cidr)
            for ip in cidr_ips(cidr):
                self.cidr_of_ip.pop(ip, None)

    def _remove_from_free(self, cidr: str) -> None:
        gone = set(cidr_ips(cidr))
        self.free = [ip for ip in self.free if ip not in gone]

    def _release_spare(self) -> None:
        """ENI-REL-1: drop wholly unused CIDRs while free-after-removal >= demand - in-use."""
        keep = len(self.pending) + self.pre_allocate
        for cidr in sorted(
            (c for c in self.allocated if self.used_in_cidr.get(c, 0) == 0),
            key=lambda c: -int(c.rpartition("/")[2]),  # /32s before /28s
        ):
            size = len(cidr_ips(cidr))
            if len(self.free) - size < keep:
                break
            self._remove_from_free(cidr)
            self._drop(cidr)
            self.released.add(cidr)

    # --- figures ---------------------------------------------------------------------------------
    def ips(self) -> int:
        return len(self.free) + len(self.pod_ip)
