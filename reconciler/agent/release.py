"""When the agent gives a wholly unused CIDR back: ENI-REL-1 plus hysteresis.

ENI-REL-1 alone (release as soon as a CIDR is unused and free-after-removal >= demand - in-use) makes
nodes whose pods come and go flap: the operator keeps each released address for
`--excess-ip-release-delay` (ENI-REL-2) while it still uses an ENI slot, and the agent may not take it
back while it is listed, so the node runs short and allocates anew. The policy below only makes the
rule stricter, never looser:

- `min_idle_s`: a CIDR must have been wholly unused for this long (agent clock) before it may go;
  an address taken from it restarts the wait.
- `spare_cidrs`: after removal the node keeps this many CIDRs' worth of addresses (the largest CIDR of
  the pool) beyond demand - in-use, so a pod arriving right after a release needs no new allocation.

`IMMEDIATE` (0 s, 0 CIDRs) is the bare ENI-REL-1 rule.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from reconciler.cidr import IPNetwork

DEFAULT_MIN_IDLE_S = 600.0  # full S3: 300 s left one 37 s churn wait, 600 s none
DEFAULT_SPARE_CIDRS = 1


@dataclass(frozen=True)
class ReleasePolicy:
    min_idle_s: float = DEFAULT_MIN_IDLE_S
    spare_cidrs: int = DEFAULT_SPARE_CIDRS

    def problems(self) -> list[str]:
        out: list[str] = []
        if not (isinstance(self.min_idle_s, int | float) and math.isfinite(self.min_idle_s)) or (
            self.min_idle_s < 0
        ):
            out.append(
                f"release min idle time {self.min_idle_s!r} is not a number of seconds >= 0; use e.g. 300."
            )
        whole = isinstance(self.spare_cidrs, int) and not isinstance(self.spare_cidrs, bool)
        if not whole or self.spare_cidrs < 0:
            out.append(f"release spare CIDRs {self.spare_cidrs!r} is not a whole number >= 0; use e.g. 1.")
        return out


IMMEDIATE = ReleasePolicy(min_idle_s=0.0, spare_cidrs=0)


@dataclass(frozen=True)
class CidrUse:
    """One CIDR of a local pool as the release decision sees it."""

    net: IPNetwork
    used: int
    free: int
    idle_since: float | None  # None while any address is in use
    removed: bool = False  # gone from the offer, kept only for its pods

    @property
    def size(self) -> int:
        return self.used + self.free


def releasable(
    cidrs: Sequence[CidrUse], free_needed: int, now: float, policy: ReleasePolicy
) -> list[IPNetwork]:
    """The CIDRs to release, walking from the last to the first (allocation fills the first ones).

    Each one is wholly unused, idle for at least `policy.min_idle_s`, and leaves
    free >= free_needed + spare margin afterwards -- so ENI-REL-1's free >= demand - in-use holds too.
    """
    usable = [c for c in cidrs if not c.removed]
    margin = policy.spare_cidrs * max((c.size for c in usable), default=0)
    total_free = sum(c.free for c in usable)
    out: list[IPNetwork] = []
    for c in reversed(usable):
        if c.used or c.idle_since is None or now - c.idle_since < policy.min_idle_s:
            continue
        if total_free - c.free >= max(free_needed, 0) + margin:
            total_free -= c.free
            out.append(c.net)
    return out
