"""How many addresses the agent asks for, per pool and family.

- Multi-pool (MP-PRE-1): neededIPs = roundUp(inUse + pending + preAlloc, preAlloc), i.e. the next
  multiple of preAlloc strictly above inUse + pending (0 -> preAlloc, preAlloc -> 2*preAlloc); no
  rounding when preAlloc is 0. `ipam-multi-pool-pre-allocation` defaults to `default=8`; pools not
  listed pre-allocate 0; the same count applies to each family.
- ENI mode (ENI-ARCH-5): linear, inUse + pending + pre-allocate (spec.ipam.pre-allocate), pool
  `default` only.
"""

from __future__ import annotations

from collections.abc import Mapping

DEFAULT_PRE_ALLOCATION: Mapping[str, int] = {"default": 8}
PRE_ALLOCATION_KEY = "ipam-multi-pool-pre-allocation"


class DemandConfigError(ValueError):
    """A malformed pre-allocation map; one sentence naming the entry and the fix."""


def round_up(value: int, multiple: int) -> int:
    """The smallest multiple of `multiple` that is >= value (value itself when multiple is 0)."""
    if multiple <= 0:
        return value
    return -(-value // multiple) * multiple


def multi_pool_needed(in_use: int, pending: int, pre_alloc: int) -> int:
    """MP-PRE-1."""
    return round_up(in_use + pending + pre_alloc, pre_alloc)


def eni_needed(in_use: int, pending: int, pre_allocate: int) -> int:
    """ENI-ARCH-5 (linear)."""
    return in_use + pending + pre_allocate


def parse_pre_allocation(value: str | Mapping[str, object] | None) -> dict[str, int]:
    """`pool=n[,pool=n]` or a map -> {pool: n}; None or "" gives the default `default=8`."""
    if value is None or value == "":
        return dict(DEFAULT_PRE_ALLOCATION)
    items: list[tuple[str, object]]
    if isinstance(value, Mapping):
        items = [(str(k), v) for k, v in value.items()]
    else:
        items = []
        for entry in str(value).split(","):
            if not entry.strip():
                continue
            name, sep, count = entry.partition("=")
            if not sep:
                raise DemandConfigError(
                    f"{PRE_ALLOCATION_KEY} entry {entry.strip()!r} is not pool=count; write e.g. default=8."
                )
            items.append((name.strip(), count.strip()))
    result: dict[str, int] = {}
    for pool, wanted in items:
        text = str(wanted)
        if not pool or not text.isdecimal():  # isdigit() would let '²' through to int()
            raise DemandConfigError(
                f"{PRE_ALLOCATION_KEY} entry {pool}={text} needs a pool name and a whole number >= 0."
            )
        result[pool] = int(text)
    return result
