"""A set of taken integer slots in [0, size) stored as sorted disjoint intervals.

Why intervals and not a bitmap: a pool CIDR may hold 2^64 (or more) blocks (an IPv6 /48 carved into
/64s, an ENI /80 prefix holding 2^48 addresses). Memory here is proportional to the number of
*fragments* of taken slots, never to `size`, and the lowest free slot is always found in O(1): it is 0
or the end of the first interval. Taking / freeing a slot is O(log n) search plus a list splice.
"""

from __future__ import annotations

from bisect import bisect_right


class IntervalSet:
    """Taken slots in [0, size); `take_lowest()` hands out the lowest free slot."""

    __slots__ = ("size", "_starts", "_ends", "_taken")

    def __init__(self, size: int) -> None:
        if size < 0:
            raise ValueError(f"an interval set cannot have a negative size ({size})")
        self.size = size
        self._starts: list[int] = []  # interval i covers [_starts[i], _ends[i])
        self._ends: list[int] = []
        self._taken = 0

    @property
    def taken(self) -> int:
        return self._taken

    @property
    def free(self) -> int:
        return self.size - self._taken

    def lowest_free(self) -> int | None:
        """The lowest free slot, or None when full."""
        if not self._starts or self._starts[0] > 0:
            return 0 if self.size > 0 else None
        low = self._ends[0]
        return low if low < self.size else None

    def take_lowest(self) -> int | None:
        """Take and return the lowest free slot, or None when full."""
        slot = self.lowest_free()
        if slot is not None:
            self.take(slot)
        return slot

    def contains(self, slot: int) -> bool:
        i = bisect_right(self._starts, slot) - 1
        return i >= 0 and slot < self._ends[i]

    def take(self, slot: int) -> bool:
        """Mark one slot taken; returns False if it already was."""
        return self.take_range(slot, slot + 1) == 1

    def release(self, slot: int) -> bool:
        """Mark one slot free; returns False if it already was."""
        return self.release_range(slot, slot + 1) == 1

    def take_range(self, lo: int, hi: int) -> int:
        """Mark [lo, hi) taken; returns how many slots were newly taken."""
        lo, hi = max(lo, 0), min(hi, self.size)
        if lo >= hi:
            return 0
        starts, ends = self._starts, self._ends
        # first interval that could touch lo (ends >= lo), last that could touch hi (starts <= hi)
        first = bisect_right(starts, lo) - 1
        if first < 0 or ends[first] < lo:
            first += 1
        last = bisect_right(starts, hi) - 1
        already = 0
        new_lo, new_hi = lo, hi
        for k in range(first, last + 1):
            already += max(0, min(ends[k], hi) - max(starts[k], lo))
            new_lo = min(new_lo, starts[k])
            new_hi = max(new_hi, ends[k])
        starts[first : last + 1] = [new_lo]
        ends[first : last + 1] = [new_hi]
        added = (hi - lo) - already
        self._taken += added
        return added

    def release_range(self, lo: int, hi: int) -> int:
        """Mark [lo, hi) free; returns how many slots were newly freed."""
        lo, hi = max(lo, 0), min(hi, self.size)
        if lo >= hi:
            return 0
        starts, ends = self._starts, self._ends
        first = bisect_right(starts, lo) - 1
        if first < 0 or ends[first] <= lo:
            first += 1
        last = bisect_right(starts, hi - 1) - 1
        if first > last:
            return 0
        freed = 0
        keep_s: list[int] = []
        keep_e: list[int] = []
        for k in range(first, last + 1):
            s, e = starts[k], ends[k]
            freed += max(0, min(e, hi) - max(s, lo))
            if s < lo:
                keep_s.append(s)
                keep_e.append(lo)
            if e > hi:
                keep_s.append(hi)
                keep_e.append(e)
        starts[first : last + 1] = keep_s
        ends[first : last + 1] = keep_e
        self._taken -= freed
        return freed

    def intervals(self) -> list[tuple[int, int]]:
        """The taken intervals as [start, end) pairs, ascending (for tests and dumps)."""
        return list(zip(self._starts, self._ends, strict=True))
