"""Garbage collection of leaked ENIs (ENI-GC-1): mark on one run, delete on the next.

Every `--eni-gc-interval` the operator lists ENIs that are `available` (detached) and carry the GC
tags (ENI-CFG-2). An ENI seen on two consecutive runs is deleted, so anything younger than one
interval -- e.g. an ENI between its create and attach calls -- is never touched. Deletions per run
are bounded; the rest stay marked and go on the next run.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from reconciler.clock import Clock
from reconciler.ec2.api import Ec2Api, Ec2Error, NotFound
from reconciler.eni.log import log_event


def plan_gc(listed: Iterable[str], marked: set[str], bound: int) -> tuple[list[str], set[str]]:
    """Pure core: (ENIs to delete now, the marks to keep for the next run)."""
    listed_ids = sorted(set(listed))
    due = [eni for eni in listed_ids if eni in marked]
    delete = due[:bound]
    return delete, set(listed_ids) - set(delete)


@dataclass
class GcResult:
    ran: bool = False
    marked: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


class EniGarbageCollector:
    """Two-phase, bounded GC of detached ENIs carrying the GC tags."""

    def __init__(
        self, ec2: Ec2Api, clock: Clock, tags: Mapping[str, str], interval: float, max_per_run: int
    ) -> None:
        self._ec2 = ec2
        self._clock = clock
        self._tags = dict(tags)
        self._interval = interval
        self._max = max_per_run
        self._marked: set[str] = set()
        self._last_run: float | None = None

    @property
    def marked(self) -> frozenset[str]:
        return frozenset(self._marked)

    def due(self) -> bool:
        if self._interval <= 0:
            return False
        return self._last_run is None or self._clock.now() - self._last_run >= self._interval

    def run(self, *, dry_run: bool = False, force: bool = False) -> GcResult:
        """One GC pass when due (or `force`); failures are logged and retried next interval."""
        if not (force or self.due()):
            return GcResult()
        self._last_run = self._clock.now()
        filters = {"status": ["available"], **{f"tag:{k}": [v] for k, v in self._tags.items()}}
        try:
            listed = [e.id for e in self._ec2.describe_network_interfaces(filters=filters)]
        except Ec2Error as err:
            log_event("gc_list_failed", logging.WARNING, action="gc", reason=str(err), code=err.code)
            return GcResult(ran=True, errors=[str(err)])
        delete, keep = plan_gc(listed, self._marked, self._max)
        result = GcResult(ran=True, marked=sorted(keep - self._marked))
        for eni_id in delete:
            if dry_run:
                log_event(
                    "dry_run",
                    action="delete_eni",
                    eni=eni_id,
                    reason="detached and marked on the last GC run",
                )
                keep.add(eni_id)
                continue
            try:
                self._ec2.delete_network_interface(eni_id)
            except NotFound:
                pass
            except Ec2Error as err:
                keep.add(eni_id)
                result.errors.append(str(err))
                log_event(
                    "gc_delete_failed", logging.WARNING, eni=eni_id, action="delete_eni", reason=str(err)
                )
                continue
            result.deleted.append(eni_id)
            log_event(
                "gc_deleted", eni=eni_id, action="delete_eni", reason="detached for a whole GC interval"
            )
        self._marked = keep
        return result
