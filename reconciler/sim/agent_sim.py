"""The simulated Cilium agent of one node in ENI mode: `reconciler.agent.Agent` on the event loop.

The library decides everything agent-side (ENI-ARCH-4 conversion of status.eni.enis, ENI-ARCH-5
demand, local pod IPs, ENI-REL-1 release); this adapter only feeds it pods and CiliumNodes at their
simulated times, reports pods that got an address to `Metrics`, and writes the spec.ipam the library
returns. Writes are coalesced (at most one per `SYNC_MIN_INTERVAL_S` per node, like the agent's
CiliumNode sync controller) and go through `write_spec`, which carries resourceVersion and retries
on conflict.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reconciler.agent.agent import ENI, Agent, AgentConfig, PodStatus
from reconciler.agent.pods import PodInfo
from reconciler.model import DEFAULT_POOL, CiliumNode, IpamSpec
from reconciler.sim.loop import EventLoop
from reconciler.sim.metrics import Metrics
from reconciler.sim.workload import pod_name

SYNC_MIN_INTERVAL_S = 1.0
NAMESPACE = "default"


def _key(pod: int) -> str:
    return f"{NAMESPACE}/{pod_name(pod)}"


class SimAgent:
    def __init__(
        self,
        name: str,
        loop: EventLoop,
        metrics: Metrics,
        write_spec: Callable[[SimAgent, IpamSpec], None],
        node: CiliumNode,
    ) -> None:
        self.name = name
        self.loop = loop
        self.metrics = metrics
        self._write_spec = write_spec
        # The agent's release idle time (ENI-REL-1 hysteresis) must run on simulated time.
        self.agent = Agent(name, AgentConfig(mode=ENI), clock=loop)
        self.node = node
        self.pending: set[str] = set()
        self._sync_scheduled = False
        self._last_sync = -SYNC_MIN_INTERVAL_S
        self._written: tuple[Any, Any] | None = None
        self._capacity = 0  # IPv4 addresses the node holds; changes only when the agent syncs

    # --- pods ------------------------------------------------------------------------------------
    def pod_add(self, pod: int) -> None:
        key = _key(pod)
        self.metrics.pod_pending(key, self.loop.now())
        outcome = self.agent.add_pod(PodInfo(NAMESPACE, pod_name(pod)))
        if outcome.status is PodStatus.ALLOCATED:
            self.metrics.pod_got_ip(key, self.loop.now())
        else:
            self.pending.add(key)
        self.schedule_sync()

    def pod_delete(self, pod: int) -> None:
        key = _key(pod)
        outcome = self.agent.remove_pod(key)
        if outcome is None:
            return
        self.pending.discard(key)
        self.metrics.pod_gone(key, had_ip=outcome.status is PodStatus.ALLOCATED)
        self.schedule_sync()

    # --- node sync -------------------------------------------------------------------------------
    def on_status(self, node: CiliumNode) -> None:
        """The operator published status.eni.enis: the agent adopts it at once (pods get IPs)."""
        self.node = node
        if not self._sync_scheduled and self.loop.now() >= self._last_sync + SYNC_MIN_INTERVAL_S:
            self._sync()
            return
        self._sync_now(write=False)
        self.schedule_sync()

    def schedule_sync(self) -> None:
        if self._sync_scheduled:
            return
        self._sync_scheduled = True
        self.loop.at(max(self.loop.now(), self._last_sync + SYNC_MIN_INTERVAL_S), self._sync)

    def _sync(self) -> None:
        self._sync_scheduled = False
        self._last_sync = self.loop.now()
        self._sync_now(write=True)

    def _sync_now(self, write: bool) -> None:
        ipam = self.agent.sync(self.node)
        local = self.agent.local_pool(DEFAULT_POOL, 4)
        self._capacity = local.capacity if local is not None else 0
        now = self.loop.now()
        for done in self.agent.take_completed():
            if done.key in self.pending:
                self.pending.discard(done.key)
                self.metrics.pod_got_ip(done.key, now)
        wanted = (ipam.requested, ipam.allocated)
        current = (self.node.ipam.requested, self.node.ipam.allocated)
        if write and wanted != self._written and wanted != current:
            self._write_spec(self, ipam)
            self._written = wanted

    # --- figures ---------------------------------------------------------------------------------
    @property
    def ready(self) -> bool:
        return self._capacity > 0

    def ips(self) -> int:
        return self._capacity
