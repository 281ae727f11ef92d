"""The in-process EC2 simulator (EC2-SIM-1..6); see simulator.py for how to drive it."""

from reconciler.ec2.sim.calls import TYPICAL_LATENCY, CallRecord, LatencyModel
from reconciler.ec2.sim.simulator import SimulatedEc2
from reconciler.ec2.sim.world import World, build_world

__all__ = ["TYPICAL_LATENCY", "CallRecord", "LatencyModel", "SimulatedEc2", "World", "build_world"]
