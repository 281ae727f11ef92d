"""Agent-like writers for controller tests: what a Cilium agent writes to its CiliumNode.

ENI mode (ENI-ARCH-4/5): requested = in-use + pending + pre-allocate in pool `default`, and
`allocated` = every CIDR offered in status.eni.enis. The agent owns these spec fields; it writes
them with the resourceVersion it read and retries on 409, exactly like the real agent.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from reconciler.agent.release import ReleasePolicy
from reconciler.clock import Clock
from reconciler.cluster.store import CILIUM_NODE, ClusterStore, Conflict


def eni_agent_sync(
    store: ClusterStore, name: str, in_use: int = 0, pending: int = 0, keep: int | None = None
) -> dict[str, Any]:
    """One agent pass: publish offered CIDRs as allocated and report demand; returns the written node.

    `keep`: publish only the first `keep` offered CIDRs -- the agent released the others (ENI-REL-1).
    """
    while True:
        obj = store.get(CILIUM_NODE, name)
        allocated = offered_cidrs(obj)[:keep]
        ipam = obj.setdefault("spec", {}).setdefault("ipam", {})
        pre = int(ipam.get("pre-allocate", 8))
        pools = ipam.setdefault("pools", {})
        pools["requested"] = [{"pool": "default", "needed": {"ipv4-addrs": in_use + pending + pre}}]
        pools["allocated"] = [{"pool": "default", "cidrs": allocated}] if allocated else []
        try:
            return store.update(CILIUM_NODE, obj)
        except Conflict:
            continue


def ipv4_addresses(node_obj: dict[str, Any]) -> set[str]:
    """Every IPv4 pod address the operator published for a node (addresses and /28 prefixes)."""
    out: set[str] = set()
    for eni in ((node_obj.get("status") or {}).get("eni") or {}).get("enis", {}).values():
        out.update(eni.get("addresses") or [])
        for prefix in eni.get("prefixes") or []:
            out.update(str(a) for a in ipaddress.ip_network(prefix))
    return out


def offered_cidrs(node_obj: dict[str, Any]) -> list[str]:
    """ENI-ARCH-4: each secondary IPv4 a /32, each IPv4 prefix a /28, each IPv6 prefix a /80."""
    out: list[str] = []
    enis = ((node_obj.get("status") or {}).get("eni") or {}).get("enis", {})
    for eni in sorted(enis.values(), key=lambda e: (e.get("number", 0), e.get("id", ""))):
        out += [f"{a}/32" for a in eni.get("addresses") or []]
        out += list(eni.get("prefixes") or [])
        out += list(eni.get("ipv6-prefixes") or [])
    return out


class LibraryAgent:
    """The project's agent library (reconciler.agent.Agent) writing to a real ClusterStore.

    `sync()` reads the CiliumNode, lets the agent ingest it, and writes back only the fields the
    agent owns -- `spec.ipam.pools` (requested and allocated) -- with the version it read.
    """

    def __init__(
        self,
        store: ClusterStore,
        name: str,
        mode: str = "eni",
        clock: Clock | None = None,
        release: ReleasePolicy | None = None,
    ) -> None:
        """`clock`, `release`: the agent's own time and its release hysteresis (ENI-REL-1); wall time
        and the agent's defaults unless given."""
        from reconciler.agent.agent import Agent, AgentConfig

        self.store = store
        self.name = name
        config = AgentConfig(mode=mode) if release is None else AgentConfig(mode=mode, release=release)
        self.agent = Agent(name, config, clock=clock)

    def add_pods(self, count: int, prefix: str = "pod") -> list[str]:
        from reconciler.agent.pods import PodInfo

        keys = []
        for i in range(count):
            self.agent.add_pod(PodInfo("default", f"{prefix}-{i}"))
            keys.append(f"default/{prefix}-{i}")
        return keys

    def sync(self) -> dict[str, Any]:
        from reconciler.model import CiliumNode

        while True:
            obj = self.store.get(CILIUM_NODE, self.name)
            ipam = self.agent.sync(CiliumNode.from_obj(obj))
            obj.setdefault("spec", {}).setdefault("ipam", {})["pools"] = ipam.to_obj().get("pools", {})
            try:
                return self.store.update(CILIUM_NODE, obj)
            except Conflict:
                continue

    def pod_ips(self) -> dict[str, str]:
        return {p.key: p.ips.get(4, "") for p in self.agent.pods() if p.ips.get(4)}
