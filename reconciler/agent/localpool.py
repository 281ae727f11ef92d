"""The agent's local view of one pool and family: the node's CIDRs and which pod holds which address.

- Addresses come from the CIDRs in list order (first CIDR with a free address, lowest address first),
  which keeps later CIDRs empty so they can be released; MP-POOL-4 reservations apply per CIDR.
- `update(advertised)`: new CIDRs are added unless the agent released them and they are still
  advertised (ENI-REL-1: never re-add a CIDR the agent released while it is still offered); released
  CIDRs no longer advertised are forgotten. A CIDR that disappears while pods still use it is kept
  for them ("removed") but hands out no new address; it goes away with its last pod.
- `release_excess(free_needed, policy)`: walking from the last CIDR to the first, a wholly unused CIDR is
  released when the free addresses left afterwards are still >= free_needed (= demand - in-use);
  `release.ReleasePolicy` adds hysteresis (minimum idle time on the pool's clock, spare margin).
  Each CIDR remembers since when it has been wholly unused (from the clock given to the pool).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator, Sequence

from reconciler.agent.release import IMMEDIATE, CidrUse, ReleasePolicy, releasable
from reconciler.cidr import IPNetwork, usable_addresses, usable_bounds
from reconciler.clock import Clock, WallClock
from reconciler.multipool.intervals import IntervalSet


class _Range:
    __slots__ = ("net", "first", "slots", "owners", "idle_since")

    def __init__(self, net: IPNetwork, allow_first: bool, allow_last: bool, now: float) -> None:
        self.net = net
        self.first = usable_bounds(net, allow_first, allow_last)[0]
        self.slots = IntervalSet(usable_addresses(net, allow_first, allow_last))
        self.owners: dict[int, str] = {}
        self.idle_since: float | None = now  # wholly unused since (None while an address is taken)

    @property
    def used(self) -> int:
        return self.slots.taken

    @property
    def free(self) -> int:
        return self.slots.free

    def address(self, offset: int) -> str:
        return str(ipaddress.ip_address(self.first + offset))

    def offset_of(self, ip: str) -> int | None:
        value = int(ipaddress.ip_address(ip)) - self.first
        return value if 0 <= value < self.slots.size else None


class LocalPool:
    """Ordered CIDRs of one pool and family on one node, plus the released and removed sets."""

    def __init__(
        self, allow_first: bool = False, allow_last: bool = False, clock: Clock | None = None
    ) -> None:
        self.allow_first = allow_first
        self.allow_last = allow_last
        self.clock: Clock = clock or WallClock()
        self._ranges: list[_Range] = []
        self.released: set[IPNetwork] = set()
        self.removed: set[IPNetwork] = set()

    # ---------------------------------------------------------------- CIDR list

    def update(self, advertised: Sequence[IPNetwork]) -> None:
        """Reconcile with the CIDRs currently offered to the node (see module docstring)."""
        seen: list[IPNetwork] = []
        for net in advertised:
            if net not in seen:
                seen.append(net)
        offered = set(seen)
        self.released &= offered
        by_net = {r.net: r for r in self._ranges}
        ranges: list[_Range] = []
        for net in seen:
            if net in self.released:
                continue
            current = by_net.get(net)
            if current is None:
                current = _Range(net, self.allow_first, self.allow_last, self.clock.now())
                if current.slots.size == 0:
                    continue
            self.removed.discard(net)
            ranges.append(current)
        for r in self._ranges:
            if r.net not in offered and r.used > 0:
                self.removed.add(r.net)
                ranges.append(r)
        self.removed &= {r.net for r in ranges}
        self._ranges = ranges

    def cidrs(self) -> list[str]:
        """CIDRs the node keeps (in use or usable): what the agent lists in `allocated`."""
        return [str(r.net) for r in self._ranges]

    def ranges(self) -> Iterator[tuple[IPNetwork, int, int]]:
        """(cidr, used, free) for dumps and explain tooling."""
        for r in self._ranges:
            yield r.net, r.used, (0 if r.net in self.removed else r.free)

    # ---------------------------------------------------------------- counts

    @property
    def in_use(self) -> int:
        return sum(r.used for r in self._ranges)

    @property
    def free(self) -> int:
        """Addresses that can still be handed out (removed CIDRs excluded)."""
        return sum(r.free for r in self._ranges if r.net not in self.removed)

    @property
    def capacity(self) -> int:
        return sum(r.slots.size for r in self._ranges if r.net not in self.removed)

    # ---------------------------------------------------------------- addresses

    def allocate(self, owner: str) -> str | None:
        """The lowest free address of the first usable CIDR, or None when the node must wait."""
        for r in self._ranges:
            if r.net in self.removed or r.free == 0:
                continue
            offset = r.slots.take_lowest()
            if offset is None:
                continue
            r.owners[offset] = owner
            r.idle_since = None
            return r.address(offset)
        return None

    def release(self, ip: str) -> bool:
        """Give an address back; a removed CIDR disappears with its last address."""
        for r in self._ranges:
            if ipaddress.ip_address(ip) not in r.net:
                continue
            offset = r.offset_of(ip)
            if offset is None or not r.slots.release(offset):
                return False
            r.owners.pop(offset, None)
            if r.used == 0:
                r.idle_since = self.clock.now()
            if r.net in self.removed and r.used == 0:
                self.removed.discard(r.net)
                self._ranges.remove(r)
            return True
        return False

    def owner_of(self, ip: str) -> str | None:
        for r in self._ranges:
            offset = r.offset_of(ip) if ipaddress.ip_address(ip) in r.net else None
            if offset is not None:
                return r.owners.get(offset)
        return None

    def release_excess(self, free_needed: int, policy: ReleasePolicy = IMMEDIATE) -> list[str]:
        """ENI-REL-1 spare-capacity rule, made stricter by `policy`; returns the released CIDRs.

        The released CIDRs leave `allocated` and stay out while still offered (see `update`).
        """
        uses = [CidrUse(r.net, r.used, r.free, r.idle_since, r.net in self.removed) for r in self._ranges]
        going = releasable(uses, free_needed, self.clock.now(), policy)
        self.released.update(going)
        self._ranges = [r for r in self._ranges if r.net not in going]
        return [str(net) for net in going]
