"""A set of small integers with O(1) add, remove, membership and uniformly random pick.

The simulator keeps every subnet's free addresses (and free /28 blocks, and free /80 slots) in one
of these, so an allocation never scans the subnet: two flat arrays (members, positions) and the
swap-with-last trick. Memory is 8 bytes per possible member.
"""

from __future__ import annotations

import random
from array import array
from collections.abc import Iterable, Iterator

_ABSENT = -1


class FreeSet:
    """Members are integers in range(size)."""

    def __init__(self, size: int, members: Iterable[int] = ()) -> None:
        self.size = size
        self._items = array("l")
        self._pos = array("l", [_ABSENT]) * size
        for item in members:
            self.add(item)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, item: int) -> bool:
        return 0 <= item < self.size and self._pos[item] != _ABSENT

    def __iter__(self) -> Iterator[int]:
        return iter(list(self._items))

    def add(self, item: int) -> None:
        if self._pos[item] == _ABSENT:
            self._pos[item] = len(self._items)
            self._items.append(item)

    def remove(self, item: int) -> None:
        """Remove `item`; KeyError when absent."""
        where = self._pos[item]
        if where == _ABSENT:
            raise KeyError(item)
        last = self._items.pop()
        if last != item:
            self._items[where] = last
            self._pos[last] = where
        self._pos[item] = _ABSENT

    def discard(self, item: int) -> None:
        if item in self:
            self.remove(item)

    def pick(self, rng: random.Random) -> int:
        """A uniformly random member (not removed); IndexError when empty."""
        if not self._items:
            raise IndexError("empty FreeSet")
        return self._items[rng.randrange(len(self._items))]
