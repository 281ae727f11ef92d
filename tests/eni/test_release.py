"""ENI-REL-1..4: agent-driven release, delay, /32 vs /28 calls, cap by excess, never release covered."""

from __future__ import annotations

import dataclasses

from reconciler.ec2.api import NetworkInterface
from reconciler.eni.config import EniOperatorConfig
from reconciler.eni.operator import EniOperator
from reconciler.eni.release import CidrTracker, covered, plan_release
from reconciler.model import PoolAllocation

from .helpers import SimpleAgent, node_for, sim_world


def test_eni_rel_2_tracker_counts_absence_and_forgets_a_cidr_that_reappears() -> None:
    tracker = CidrTracker()
    offered = {"10.0.0.1/32", "10.0.0.2/32", "10.0.1.0/28", "2600::/80"}
    tracker.observe("n", offered, offered, 0.0)
    tracker.observe("n", offered, {"10.0.0.1/32", "2600::/80"}, 10.0)
    assert tracker.due("n", 100.0, 180.0) == []
    assert sorted(tracker.due("n", 190.0, 180.0)) == ["10.0.0.2/32", "10.0.1.0/28"]
    # 10.0.0.2 reappears before its delay would end in a fresh window: no longer due.
    tracker.observe("n", offered, {"10.0.0.1/32", "10.0.0.2/32", "2600::/80"}, 191.0)
    assert tracker.due("n", 191.0, 180.0) == ["10.0.1.0/28"]
    # It vanishes again: the delay starts over.
    tracker.observe("n", offered, {"10.0.0.1/32", "2600::/80"}, 200.0)
    assert tracker.due("n", 379.0, 180.0) == ["10.0.1.0/28"]
    assert tracker.due("n", 380.0, 180.0) == ["10.0.1.0/28", "10.0.0.2/32"]


def test_eni_rel_2_ipv6_is_never_tracked() -> None:
    """ENI-V6-3: an /80 missing from allocated is never a release candidate."""
    tracker = CidrTracker()
    tracker.observe("n", {"2600::/80"}, set(), 0.0)
    assert tracker.due("n", 10_000.0, 180.0) == []


def test_in_flight_counts_only_never_adopted_recent_addresses() -> None:
    tracker = CidrTracker()
    tracker.observe("n", {"10.0.0.1/32", "10.0.2.0/28"}, set(), 0.0)
    assert tracker.in_flight("n", 5.0, 30.0) == 17
    assert tracker.in_flight("n", 31.0, 30.0) == 0
    tracker.observe("n", {"10.0.0.1/32", "10.0.2.0/28"}, {"10.0.0.1/32"}, 32.0)
    tracker.observe("n", {"10.0.0.1/32", "10.0.2.0/28"}, set(), 33.0)  # released by the agent
    assert tracker.in_flight("n", 34.0, 30.0) == 0


ENIS = [
    NetworkInterface(
        "e1",
        "s1",
        "v",
        "az",
        "in-use",
        "m",
        "10.0.0.1",
        ("10.0.0.1", "10.0.0.2", "10.0.0.3"),
        ("10.0.1.0/28",),
        device_index=1,
    ),
    NetworkInterface(
        "e2", "s2", "v", "az", "in-use", "m", "10.0.3.1", ("10.0.3.1", "10.0.3.2"), device_index=2
    ),
]


def test_eni_rel_2_calls_per_eni_and_kind() -> None:
    """/32s -> UnassignPrivateIpAddresses(PrivateIpAddresses); /28 -> (Ipv4Prefixes), whole."""
    due = ["10.0.0.2/32", "10.0.1.0/28", "10.0.3.2/32", "10.0.0.3/32"]
    actions = plan_release(due, [], ENIS, excess=100, delay=180)
    shapes = sorted((a.eni_id, a.private_ips, a.ipv4_prefixes) for a in actions)
    assert shapes == [
        ("e1", (), ("10.0.1.0/28",)),
        ("e1", ("10.0.0.2", "10.0.0.3"), ()),
        ("e2", ("10.0.3.2",), ()),
    ]


def test_eni_rel_2_capped_by_excess_skipping_a_prefix_that_overshoots() -> None:
    due = ["10.0.1.0/28", "10.0.0.2/32", "10.0.0.3/32", "10.0.3.2/32"]
    actions = plan_release(due, [], ENIS, excess=2, delay=180)
    assert sum(a.addresses for a in actions) == 2
    assert all(not a.ipv4_prefixes for a in actions)
    assert plan_release(due, [], ENIS, excess=0, delay=180) == []


def test_eni_rel_2_a_prefix_larger_than_a_positive_cap_still_goes_alone() -> None:
    """CIDRs go whole: with excessIPs 14 and only a /28 due, that /28 is released (else never)."""
    actions = plan_release(["10.0.1.0/28"], [], ENIS, excess=14, delay=180)
    assert [(a.eni_id, a.ipv4_prefixes) for a in actions] == [("e1", ("10.0.1.0/28",))]


def test_eni_rel_4_never_release_what_an_allocated_cidr_covers() -> None:
    due = ["10.0.0.2/32", "10.0.1.0/28"]
    allocated = ["10.0.1.4/32", "10.0.0.0/30"]  # overlaps the /28 and covers 10.0.0.2
    assert covered("10.0.1.0/28", allocated) and covered("10.0.0.2/32", allocated)
    assert plan_release(due, allocated, ENIS, excess=100, delay=180) == []


def test_eni_rel_2_primary_address_is_never_released() -> None:
    assert plan_release(["10.0.0.1/32"], [], ENIS, excess=100, delay=180) == []


# --- against SimulatedEc2 with the simple agent --------------------------------------------------


def _world(**cfg: object):  # type: ignore[no-untyped-def]
    clock, sim, world = sim_world(instance_type="m5.xlarge")
    config = EniOperatorConfig(**{"aws_release_excess_ips": True, **cfg})  # type: ignore[arg-type]
    op = EniOperator(sim, config, clock)
    op.refresh(force=True)
    agent = SimpleAgent(
        node_for("n", world.instance_ids[0], world, instance_type="m5.xlarge", first_interface_index=1)
    )
    return clock, sim, op, agent


def _cycle(op: EniOperator, agent: SimpleAgent, clock, scan: bool) -> None:  # type: ignore[no-untyped-def]
    clock.advance(1.0)
    node = agent.step()
    if scan:
        plan = op.resync([node])
        for r in op.run_release(plan).values():
            agent.apply(r)
    op.on_node_changed(node)
    for r in op.run_allocations().values():
        agent.apply(r)
    for r in op.publish().values():
        agent.apply(r)


def _secondaries(sim, instance_id: str) -> int:  # type: ignore[no-untyped-def]
    return sum(
        len(e.secondary_ips)
        for e in sim.enis.values()
        if e.attachment and e.attachment.instance_id == instance_id and e.attachment.device_index
    )


def test_eni_rel_1_2_release_after_delay_only() -> None:
    clock, sim, op, agent = _world(excess_ip_release_delay=180)
    agent.pods = 20
    for _ in range(5):
        _cycle(op, agent, clock, scan=False)
    assert _secondaries(sim, agent.node.instance_id) == 28
    agent.pods = 0
    for i in range(170):
        _cycle(op, agent, clock, scan=(i % 10 == 0))
    assert not [c for c in sim.calls if c.action == "UnassignPrivateIpAddresses"]
    for i in range(15):
        _cycle(op, agent, clock, scan=(i % 10 == 0))
    first = [c for c in sim.calls if c.action == "UnassignPrivateIpAddresses"]
    assert sum(int(c.params["ips"]) for c in first) == 8  # capped by excessIPs per scan (ENI-CALC-2)
    for i in range(30):
        _cycle(op, agent, clock, scan=(i % 10 == 0))
    # The agent keeps pre-allocate (8) free, everything else is released; ENIs stay attached (ENI-REL-3).
    assert _secondaries(sim, agent.node.instance_id) == 8
    attached = [
        e for e in sim.enis.values() if e.attachment and e.attachment.instance_id == agent.node.instance_id
    ]
    assert len(attached) == 3  # eth0 + the two pod ENIs


def test_eni_rel_3_nothing_released_without_the_flag() -> None:
    clock, sim, op, agent = _world(aws_release_excess_ips=False, excess_ip_release_delay=5)
    agent.pods = 20
    for _ in range(5):
        _cycle(op, agent, clock, scan=False)
    agent.pods = 0
    for _ in range(40):
        _cycle(op, agent, clock, scan=True)
    assert not [c for c in sim.calls if c.action == "UnassignPrivateIpAddresses"]
    assert _secondaries(sim, agent.node.instance_id) == 28


def test_eni_rel_2_cidr_that_reappears_is_not_released() -> None:
    clock, sim, op, agent = _world(excess_ip_release_delay=60)
    agent.pods = 20
    for _ in range(5):
        _cycle(op, agent, clock, scan=False)
    agent.pods = 0
    for _ in range(30):
        _cycle(op, agent, clock, scan=True)
    # The agent takes its released CIDRs back (e.g. a restarted agent re-adopts everything offered).
    agent.released.clear()
    agent.releases_enabled = False
    for _ in range(60):
        _cycle(op, agent, clock, scan=True)
    assert not [c for c in sim.calls if c.action == "UnassignPrivateIpAddresses"]


def test_eni_rel_4_address_in_allocated_of_the_node_is_not_released_even_if_due() -> None:
    """A stale tracker entry (e.g. the agent re-added the CIDR in another spelling) is re-checked."""
    clock, sim, op, agent = _world(excess_ip_release_delay=5)
    agent.pods = 2
    for _ in range(5):
        _cycle(op, agent, clock, scan=False)
    node = agent.node
    cidrs = node.ipam.cidrs_of("default")
    # Remove all from the default pool but list them under a second pool entry: still "allocated".
    ipam = dataclasses.replace(
        node.ipam, allocated=(PoolAllocation("default", ()), PoolAllocation("x", cidrs))
    )
    node = dataclasses.replace(node, ipam=ipam)
    for _ in range(10):
        clock.advance(1)
        plan = op.resync([node])
        op.run_release(plan)
    assert not [c for c in sim.calls if c.action == "UnassignPrivateIpAddresses"]
