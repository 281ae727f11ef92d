"""IPv4 release (ENI-REL-1..4) and the adoption view the allocator needs.

The agent releases by removing a CIDR from `spec.ipam.pools.allocated` while the operator still
offers it in `status.eni.enis`. `CidrTracker` remembers, per node, since when each offered IPv4 CIDR
has been absent from `allocated`. A CIDR absent for `--excess-ip-release-delay` becomes a release
candidate; one that reappears is forgotten (ENI-REL-2).

The same absence also covers addresses the operator has just assigned and the agent has not adopted
yet. Those (never seen in `allocated`, offered for less than `adoption_grace`) are "in flight": the
allocator counts them as available so it does not allocate twice while the agent catches up.

Deliberate deviation: the excessIPs cap (ENI-CALC-2) applies to nodes without a deficit. A node in
deficit releases every due CIDR, because the agent will not re-add a CIDR while it is still offered:
left in place, such a CIDR is dead capacity that holds an ENI slot, and with the cap (excessIPs is
0 for a node in deficit) it would never go, leaving the node stuck at "out of interfaces".

State is in memory only. After a restart every offered-but-absent CIDR starts a fresh delay, so a
restart can postpone a release but never hasten one.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from reconciler.ec2.api import NetworkInterface
from reconciler.eni.cidr import is_ipv4, size


@dataclass
class _NodeCidrs:
    absent_since: dict[str, float] = field(default_factory=dict)
    seen_allocated: set[str] = field(default_factory=set)


class CidrTracker:
    """Per-node memory of offered IPv4 CIDRs missing from `allocated`."""

    def __init__(self) -> None:
        self._nodes: dict[str, _NodeCidrs] = {}

    def observe(self, node: str, offered: Iterable[str], allocated: Iterable[str], now: float) -> None:
        state = self._nodes.setdefault(node, _NodeCidrs())
        offered_v4 = {c for c in offered if is_ipv4(c)}
        allocated_set = set(allocated)
        state.seen_allocated = (state.seen_allocated | (allocated_set & offered_v4)) & offered_v4
        absent = offered_v4 - allocated_set
        state.absent_since = {c: state.absent_since.get(c, now) for c in absent}

    def forget_node(self, node: str) -> None:
        self._nodes.pop(node, None)

    def absent_since(self, node: str) -> Mapping[str, float]:
        state = self._nodes.get(node)
        return dict(state.absent_since) if state else {}

    def in_flight(self, node: str, now: float, adoption_grace: float) -> int:
        """Addresses just offered and not adopted yet (never seen in `allocated`)."""
        state = self._nodes.get(node)
        if state is None:
            return 0
        return sum(
            size(c)
            for c, since in state.absent_since.items()
            if c not in state.seen_allocated and now - since < adoption_grace
        )

    def due(self, node: str, now: float, delay: float) -> list[str]:
        """ENI-REL-2: CIDRs absent for at least `delay`, oldest first."""
        state = self._nodes.get(node)
        if state is None:
            return []
        ready = [(since, c) for c, since in state.absent_since.items() if now - since >= delay]
        return [c for _, c in sorted(ready)]


@dataclass(frozen=True)
class ReleaseAction:
    """One UnassignPrivateIpAddresses call (ENI-REL-2): /32s or whole /28 prefixes on one ENI."""

    eni_id: str
    subnet_id: str
    private_ips: tuple[str, ...] = ()
    ipv4_prefixes: tuple[str, ...] = ()
    reason: str = ""

    @property
    def addresses(self) -> int:
        return len(self.private_ips) + 16 * len(self.ipv4_prefixes)


def covered(cidr: str, allocated: Sequence[str]) -> bool:
    """ENI-REL-4: True when any allocated CIDR overlaps this one."""
    net = ipaddress.ip_network(cidr, strict=False)
    for other in allocated:
        o = ipaddress.ip_network(other, strict=False)
        if o.version == net.version and net.overlaps(o):
            return True
    return False


def _owner(
    cidr: str, owner_ip: Mapping[str, NetworkInterface], owner_prefix: Mapping[str, NetworkInterface]
) -> NetworkInterface | None:
    if cidr.endswith("/32"):
        return owner_ip.get(cidr.split("/")[0])
    return owner_prefix.get(cidr)


def plan_release(
    due: Sequence[str],
    allocated: Sequence[str],
    enis: Sequence[NetworkInterface],
    excess: int,
    delay: float,
) -> list[ReleaseAction]:
    """ENI-REL-2/4 + ENI-CALC-2: group due CIDRs into calls, at most `excess` addresses in total.

    Primary addresses are never released (EC2 forbids it; they leave with the ENI). Candidates are
    taken oldest first; one that would overshoot the cap is skipped for a smaller one. CIDRs go
    whole, so when the cap is positive but smaller than every candidate (a /28 against excessIPs of
    14), the oldest one is released anyway: otherwise a /28 the agent gave up could never go.
    """
    owner_ip = {ip: e for e in enis for ip in e.secondary_ips}
    owner_prefix = {p: e for e in enis for p in e.ipv4_prefixes}
    candidates = [c for c in due if not covered(c, allocated) and _owner(c, owner_ip, owner_prefix)]
    chosen: list[str] = []
    budget = excess
    for cidr in candidates:
        if 0 < size(cidr) <= budget:
            chosen.append(cidr)
            budget -= size(cidr)
    if not chosen and candidates and excess > 0:
        chosen = candidates[:1]
    ips: dict[str, list[str]] = {}
    prefixes: dict[str, list[str]] = {}
    for cidr in chosen:
        address = cidr.split("/")[0]
        if cidr.endswith("/32") and address in owner_ip:
            ips.setdefault(owner_ip[address].id, []).append(address)
        else:
            prefixes.setdefault(owner_prefix[cidr].id, []).append(cidr)
    subnet_of = {e.id: e.subnet_id for e in enis}
    reason = f"absent from spec.ipam.pools.allocated for >= {delay:g}s"
    actions = [
        ReleaseAction(eni, subnet_of[eni], private_ips=tuple(v), reason=reason) for eni, v in ips.items()
    ]
    actions += [
        ReleaseAction(eni, subnet_of[eni], ipv4_prefixes=tuple(v), reason=reason)
        for eni, v in prefixes.items()
    ]
    return actions
