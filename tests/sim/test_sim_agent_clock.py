"""The simulated agent lives on simulated time: its ENI-REL-1 release idle time must elapse in the
simulation, not on the wall clock (otherwise no run ever releases an address)."""

from __future__ import annotations

from reconciler.model import DEFAULT_POOL, CiliumNode, EniSpec, EniStatus, IpamSpec
from reconciler.sim.agent_sim import SimAgent
from reconciler.sim.loop import EventLoop
from reconciler.sim.metrics import Metrics


def _node_with_addresses(count: int) -> CiliumNode:
    addresses = tuple(f"10.0.1.{10 + i}" for i in range(count))
    eni = EniStatus(id="eni-1", ip="10.0.1.5", number=1, subnet_id="subnet-1", addresses=addresses)
    return CiliumNode(name="n1", eni=EniSpec(first_interface_index=1), enis={"eni-1": eni})


def test_eni_rel_1_idle_release_happens_in_simulated_time() -> None:
    loop = EventLoop(seed=1)
    written: list[IpamSpec] = []
    agent = SimAgent(
        "n1", loop, Metrics("ours"), lambda _a, ipam: written.append(ipam), _node_with_addresses(20)
    )
    agent.on_status(agent.node)  # adopts 20 /32s (ENI-ARCH-4); demand is only pre-allocate (8)
    held = len(written[-1].cidrs_of(DEFAULT_POOL))
    assert held == 20

    loop.run_until(60.0)
    agent.schedule_sync()
    loop.run_until(61.0)
    assert len(written[-1].cidrs_of(DEFAULT_POOL)) == held  # not idle long enough yet

    loop.run_until(3600.0)
    agent.schedule_sync()
    loop.run_until(3601.0)
    assert len(written[-1].cidrs_of(DEFAULT_POOL)) < held  # released once idle in simulated time
