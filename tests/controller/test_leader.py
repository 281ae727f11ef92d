"""Leader election (ENI-ARCH-1: only the elected operator talks to EC2), driven by a SimClock."""

from __future__ import annotations

import pytest

from reconciler.clock import SimClock
from reconciler.cluster.memory import MemoryStore
from reconciler.cluster.store import LEASE, ClusterStore, StoreError
from reconciler.controller.leader import LeaderElector, LeaseTimings
from tests.controller.conftest import StoreAndNamespace

NS = "kube-system"
LEASE_NAME = "cilium-operator-resource-lock"
TIMINGS = LeaseTimings(lease_duration=15, renew_deadline=10, retry_period=2)


def elector(
    store: ClusterStore, clock: SimClock, identity: str, events: list[str] | None = None
) -> LeaderElector:
    log = events if events is not None else []
    return LeaderElector(
        store,
        NS,
        LEASE_NAME,
        identity,
        clock,
        TIMINGS,
        on_started_leading=lambda: log.append(f"{identity} started"),
        on_stopped_leading=lambda: log.append(f"{identity} stopped"),
    )


def test_exactly_one_of_two_candidates_leads() -> None:
    store, clock = MemoryStore(), SimClock()
    a, b = elector(store, clock, "a"), elector(store, clock, "b")
    for _ in range(30):
        a.step()
        b.step()
        assert [a.is_leader(), b.is_leader()].count(True) == 1
        clock.advance(TIMINGS.retry_period)
    assert a.is_leader()
    assert store.get(LEASE, LEASE_NAME, NS)["spec"]["holderIdentity"] == "a"


def test_standby_takes_over_within_the_lease_duration_after_the_leader_stops_renewing() -> None:
    store, clock = MemoryStore(), SimClock()
    a, b = elector(store, clock, "a"), elector(store, clock, "b")
    a.step()
    for _ in range(10):
        clock.advance(TIMINGS.retry_period)
        a.step()
        b.step()
    last_renewal = clock.now()
    takeover = None
    while takeover is None and clock.now() < last_renewal + 60:
        clock.advance(TIMINGS.retry_period)
        if b.step():
            takeover = clock.now()
    assert takeover is not None
    assert TIMINGS.lease_duration <= takeover - last_renewal <= TIMINGS.lease_duration + TIMINGS.retry_period
    assert not a.is_leader()  # a stopped renewing: its own renew deadline has long passed
    spec = store.get(LEASE, LEASE_NAME, NS)["spec"]
    assert spec["holderIdentity"] == "b" and spec["leaseTransitions"] == 1


def test_a_leader_that_sees_its_lease_taken_stops_at_once() -> None:
    store, clock = MemoryStore(), SimClock()
    events: list[str] = []
    a = elector(store, clock, "a", events)
    assert a.step()
    lease = store.get(LEASE, LEASE_NAME, NS)
    lease["spec"]["holderIdentity"] = "intruder"
    store.update(LEASE, lease)
    clock.advance(TIMINGS.retry_period)
    assert a.step() is False
    assert a.is_leader() is False
    assert events == ["a started", "a stopped"]


class FlakyStore(MemoryStore):
    """A store whose API server can be made unreachable."""

    down = False

    def get(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        if self.down:
            raise StoreError("connection refused")
        return super().get(*args, **kwargs)


def test_a_leader_that_cannot_renew_stops_leading_when_the_renew_deadline_passes() -> None:
    store, clock = FlakyStore(), SimClock()
    a = elector(store, clock, "a")
    assert a.step()
    store.down = True
    clock.advance(TIMINGS.renew_deadline - 1)
    assert a.step() is True  # still inside the deadline: keep working
    clock.advance(1)
    assert a.is_leader() is False  # no call needed: the clock alone ends leadership


def test_release_on_shutdown_lets_the_standby_take_over_on_its_next_attempt() -> None:
    store, clock = MemoryStore(), SimClock()
    a, b = elector(store, clock, "a"), elector(store, clock, "b")
    a.step()
    b.step()
    a.release()
    assert not a.is_leader()
    assert store.get(LEASE, LEASE_NAME, NS)["spec"]["holderIdentity"] == ""
    clock.advance(TIMINGS.retry_period)
    assert b.step() is True


@pytest.mark.parametrize(
    ("timings", "fragment"),
    [
        (LeaseTimings(10, 10, 2), "lease-duration"),
        (LeaseTimings(15, 2, 2), "renew-deadline"),
        (LeaseTimings(15, 10, 0), "positive"),
    ],
)
def test_inconsistent_lease_timings_are_explained(timings: LeaseTimings, fragment: str) -> None:
    problem = timings.problem()
    assert problem is not None and fragment in problem
    assert LeaseTimings().problem() is None


def test_leader_election_on_the_real_apiserver_hands_over_after_release(any_store: StoreAndNamespace) -> None:
    """The same algorithm against a real Lease object: create, renew, conflict-free handover."""
    clock = SimClock()
    lease = any_store.unique("lease")

    def make(identity: str) -> LeaderElector:
        return LeaderElector(any_store.store, any_store.namespace, lease, identity, clock, TIMINGS)

    a, b = make("a"), make("b")
    assert a.step() and not b.step()
    clock.advance(TIMINGS.retry_period)
    assert a.step() and not b.step()
    a.release()
    clock.advance(TIMINGS.retry_period)
    assert b.step() and not a.step()
    spec = any_store.store.get(LEASE, lease, any_store.namespace)["spec"]
    assert spec["holderIdentity"] == "b" and spec["leaseTransitions"] == 1
    assert spec["leaseDurationSeconds"] == 15 and spec["renewTime"].endswith("Z")
