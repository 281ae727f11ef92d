"""Leader election on a coordination.k8s.io/v1 Lease, over the ClusterStore, timed by a Clock.

Only the leader talks to EC2 or writes allocations (ENI-ARCH-1). We follow client-go's algorithm
(`kubernetes.leaderelection` in the Python client sleeps on wall time, uses naive datetimes and
cannot release on shutdown, so it cannot be driven by a SimClock):

- a candidate trusts only its own clock: it notes *when it observed* the lease record change and
  treats the lease as expired `lease_duration` after that observation -- no cross-host clock skew;
- the leader renews every `retry_period`; if it has not renewed for `renew_deadline` it stops
  leading at once, even if the API server is unreachable (`is_leader()` checks the clock);
- on graceful shutdown the leader releases the lease (empty holder), so a standby takes over on
  its next attempt instead of waiting for expiry.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from reconciler.clock import Clock
from reconciler.cluster.store import LEASE, AlreadyExists, ClusterStore, NotFound, StoreError
from reconciler.controller.logs import log_event

log = logging.getLogger("cilium_ipam.leader")

MICRO_TIME = "%Y-%m-%dT%H:%M:%S.%fZ"


@dataclass(frozen=True)
class LeaseTimings:
    """client-go / Cilium defaults: 15 s lease, 10 s renew deadline, 2 s retry period."""

    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0

    def problem(self) -> str | None:
        """One sentence if the timings cannot work together (the CLI exits 2 with it), else None."""
        if min(self.lease_duration, self.renew_deadline, self.retry_period) <= 0:
            return "leader election timings must all be positive durations"
        if self.lease_duration <= self.renew_deadline:
            return (
                f"--leader-election-lease-duration ({self.lease_duration:g}s) must be longer than "
                f"--leader-election-renew-deadline ({self.renew_deadline:g}s)"
            )
        if self.renew_deadline <= 1.2 * self.retry_period:
            return (
                f"--leader-election-renew-deadline ({self.renew_deadline:g}s) must be longer than "
                f"1.2 x --leader-election-retry-period ({self.retry_period:g}s)"
            )
        return None


def _wall_now() -> datetime:
    return datetime.now(UTC)


class LeaderElector:
    """One candidate. Call `step()` every `retry_period`; ask `is_leader()` before every write."""

    def __init__(
        self,
        store: ClusterStore,
        namespace: str,
        name: str,
        identity: str,
        clock: Clock,
        timings: LeaseTimings = LeaseTimings(),
        wall: Callable[[], datetime] = _wall_now,
        on_started_leading: Callable[[], None] | None = None,
        on_stopped_leading: Callable[[], None] | None = None,
    ) -> None:
        self._store = store
        self._namespace = namespace
        self._name = name
        self.identity = identity
        self._clock = clock
        self.timings = timings
        self._wall = wall
        self._on_started = on_started_leading
        self._on_stopped = on_stopped_leading
        self._observed_record: tuple[Any, ...] | None = None
        self._observed_at = 0.0
        self._last_renew: float | None = None
        self._leading = False
        self.current_holder = ""

    @property
    def _lease_ref(self) -> str:
        return f"{self._namespace}/{self._name}"

    # -- queries -------------------------------------------------------------------------------
    def is_leader(self) -> bool:
        """True only while we hold a lease renewed within `renew_deadline` (by our clock)."""
        if not self._leading or self._last_renew is None:
            return False
        if self._clock.now() - self._last_renew >= self.timings.renew_deadline:
            self._lose("renew deadline passed without a successful renewal")
            return False
        return True

    # -- one attempt ---------------------------------------------------------------------------
    def step(self) -> bool:
        """Try once to acquire or renew the lease; returns whether we lead afterwards."""
        try:
            acquired = self._try_acquire_or_renew()
        except StoreError as exc:
            log_event(log, "lease-error", logging.WARNING, lease=self._lease_ref, reason=str(exc))
            acquired = False
        if acquired:
            self._last_renew = self._clock.now()
            if not self._leading:
                self._leading = True
                log_event(log, "started-leading", lease=self._lease_ref, identity=self.identity)
                if self._on_started:
                    self._on_started()
        return self.is_leader()

    def _try_acquire_or_renew(self) -> bool:
        now = self._clock.now()
        stamp = self._wall().strftime(MICRO_TIME)
        try:
            lease = self._store.get(LEASE, self._name, self._namespace)
        except NotFound:
            try:
                self._store.create(LEASE, self._lease_body(stamp, stamp, transitions=0))
            except AlreadyExists:
                return False
            self._observe(("created", self.identity, stamp), now)
            self.current_holder = self.identity
            return True

        spec = lease.get("spec") or {}
        holder = str(spec.get("holderIdentity") or "")
        record = (holder, spec.get("renewTime"), spec.get("leaseTransitions"), spec.get("acquireTime"))
        if record != self._observed_record:
            self._observe(record, now)
        self.current_holder = holder
        if holder and holder != self.identity:
            duration = float(spec.get("leaseDurationSeconds") or self.timings.lease_duration)
            if self._leading:
                self._lose(f"lease taken by {holder}")
            if now < self._observed_at + duration:
                return False
        transitions = int(spec.get("leaseTransitions") or 0)
        acquire_time = spec.get("acquireTime") or stamp
        if holder != self.identity:
            transitions += 1
            acquire_time = stamp
        body = self._lease_body(acquire_time, stamp, transitions)
        body["metadata"] = {**lease["metadata"]}
        updated = self._store.update(LEASE, body)  # Conflict: someone else wrote first -> StoreError
        new_spec = updated.get("spec") or {}
        self._observe(
            (self.identity, new_spec.get("renewTime"), new_spec.get("leaseTransitions"), acquire_time), now
        )
        self.current_holder = self.identity
        return True

    def _observe(self, record: tuple[Any, ...], now: float) -> None:
        self._observed_record = record
        self._observed_at = now

    def _lease_body(self, acquire_time: str, renew_time: str, transitions: int) -> dict[str, Any]:
        return {
            "metadata": {"name": self._name, "namespace": self._namespace},
            "spec": {
                "holderIdentity": self.identity,
                "leaseDurationSeconds": int(round(self.timings.lease_duration)),
                "acquireTime": acquire_time,
                "renewTime": renew_time,
                "leaseTransitions": transitions,
            },
        }

    def _lose(self, reason: str) -> None:
        if not self._leading:
            return
        self._leading = False
        self._last_renew = None
        ref, who = self._lease_ref, self.identity
        log_event(log, "stopped-leading", logging.WARNING, lease=ref, identity=who, reason=reason)
        if self._on_stopped:
            self._on_stopped()

    # -- shutdown ------------------------------------------------------------------------------
    def release(self) -> None:
        """Give the lease up (graceful shutdown) so a standby need not wait for it to expire."""
        was_leading = self.is_leader()
        self._lose("released on shutdown")
        if not was_leading:
            return
        try:
            lease = self._store.get(LEASE, self._name, self._namespace)
            spec = lease.get("spec") or {}
            if spec.get("holderIdentity") != self.identity:
                return
            stamp = self._wall().strftime(MICRO_TIME)
            lease["spec"] = {**spec, "holderIdentity": "", "leaseDurationSeconds": 1, "renewTime": stamp}
            self._store.update(LEASE, lease)
            log_event(log, "lease-released", lease=self._lease_ref, identity=self.identity)
        except StoreError as exc:
            log_event(log, "lease-release-failed", logging.WARNING, lease=self._lease_ref, reason=str(exc))
