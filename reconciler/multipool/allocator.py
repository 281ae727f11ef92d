"""CIDR-set allocators: one pool CIDR carved into `maskSize` blocks, and one pool family over its CIDRs.

`BlockSet` keeps taken block indices in an `IntervalSet`, so its memory follows the number of taken
fragments, not the number of blocks: a /8 into /24s (65,536 blocks), an IPv6 /104 into /120s and a /48
into /64s (2^16) or even a /32 into /64s (2^32) all cost the same. The lowest free block is handed out
first, in O(1); occupying or releasing a block is O(log n). Blocks are handed out in pool-CIDR order
(first CIDR first), which keeps allocations compact and predictable.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator, Sequence

from reconciler.cidr import IPNetwork, contains
from reconciler.multipool.intervals import IntervalSet


def _network(version: int, address: int, prefixlen: int) -> IPNetwork:
    if version == 4:
        return ipaddress.IPv4Network((address, prefixlen))
    return ipaddress.IPv6Network((address, prefixlen))


class BlockSet:
    """One pool CIDR carved into blocks of `mask_size` bits."""

    __slots__ = ("parent", "mask_size", "_shift", "_base", "_slots")

    def __init__(self, parent: IPNetwork, mask_size: int) -> None:
        if not parent.prefixlen <= mask_size <= parent.max_prefixlen:
            raise ValueError(f"mask size /{mask_size} does not fit inside {parent}")
        self.parent = parent
        self.mask_size = mask_size
        self._shift = parent.max_prefixlen - mask_size
        self._base = int(parent.network_address)
        self._slots = IntervalSet(1 << (mask_size - parent.prefixlen))

    @property
    def size(self) -> int:
        return self._slots.size

    @property
    def free(self) -> int:
        return self._slots.free

    @property
    def taken(self) -> int:
        return self._slots.taken

    def covers(self, net: IPNetwork) -> bool:
        """True when `net` lies inside this pool CIDR."""
        return contains(self.parent, net)

    def block(self, index: int) -> IPNetwork:
        return _network(self.parent.version, self._base + (index << self._shift), self.mask_size)

    def _index_range(self, net: IPNetwork) -> tuple[int, int]:
        lo = (int(net.network_address) - self._base) >> self._shift
        hi = ((int(net.broadcast_address) - self._base) >> self._shift) + 1
        return lo, hi

    def allocate(self) -> IPNetwork | None:
        """Take the lowest free block, or None when the CIDR is exhausted."""
        index = self._slots.take_lowest()
        return None if index is None else self.block(index)

    def occupy(self, net: IPNetwork) -> int:
        """Mark every block `net` touches as taken; returns how many were newly taken."""
        return self._slots.take_range(*self._index_range(net))

    def release(self, net: IPNetwork) -> int:
        """Free every block `net` touches; returns how many were newly freed."""
        return self._slots.release_range(*self._index_range(net))

    def is_taken(self, net: IPNetwork) -> bool:
        lo, hi = self._index_range(net)
        return all(self._slots.contains(i) for i in range(lo, min(hi, lo + 64)))

    def taken_blocks(self) -> Iterator[IPNetwork]:
        """Every taken block, ascending (tests and dumps only: this walks all taken slots)."""
        for lo, hi in self._slots.intervals():
            for i in range(lo, hi):
                yield self.block(i)


class FamilyAllocator:
    """All CIDRs of one pool and one family, tried in order."""

    __slots__ = ("version", "mask_size", "sets")

    def __init__(self, version: int, cidrs: Sequence[IPNetwork], mask_size: int) -> None:
        self.version = version
        self.mask_size = mask_size
        self.sets: list[BlockSet] = [BlockSet(c, mask_size) for c in cidrs]

    @property
    def cidrs(self) -> tuple[IPNetwork, ...]:
        return tuple(s.parent for s in self.sets)

    @property
    def free_blocks(self) -> int:
        return sum(s.free for s in self.sets)

    def set_for(self, net: IPNetwork) -> BlockSet | None:
        return next((s for s in self.sets if s.covers(net)), None)

    def allocate(self) -> IPNetwork | None:
        for s in self.sets:
            if s.free:
                return s.allocate()
        return None

    def update_cidrs(self, cidrs: Sequence[IPNetwork]) -> tuple[list[BlockSet], list[BlockSet]]:
        """Keep sets whose CIDR stays, add new ones in the given order; returns (added, removed)."""
        old = {s.parent: s for s in self.sets}
        wanted = set(cidrs)
        removed = [s for s in self.sets if s.parent not in wanted]
        added: list[BlockSet] = []
        new_sets: list[BlockSet] = []
        for c in cidrs:
            if c in old:
                new_sets.append(old[c])
            else:
                bs = BlockSet(c, self.mask_size)
                added.append(bs)
                new_sets.append(bs)
        self.sets = new_sets
        return added, removed
