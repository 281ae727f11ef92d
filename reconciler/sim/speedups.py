"""Memoised CIDR parsing for simulation runs.

The engine and the agent library parse the same few thousand CIDR strings with `ipaddress` on every
scan and sync; in a 1,000-node simulation that is most of the CPU. Network objects are immutable
values, so memoising `ipaddress.ip_network` by its arguments changes no result, only the cost.
The patch is scoped to a `with` block and undone afterwards (the deployed operator never sees it).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache

_ORIGINAL = ipaddress.ip_network
_CACHED = lru_cache(maxsize=1 << 20)(_ORIGINAL)


@contextmanager
def memoised_cidr_parsing() -> Iterator[None]:
    if ipaddress.ip_network is _CACHED:  # nested use
        yield
        return
    ipaddress.ip_network = _CACHED  # type: ignore[assignment]
    try:
        yield
    finally:
        ipaddress.ip_network = _ORIGINAL  # type: ignore[assignment]
