"""S4: one full scan of a 5,000-node steady state (EC2 cache refresh + planning), CPU and RSS.

Run alone (`python -m bench.scale --json`) so the peak RSS is this scenario's, not the bench's.
The world is built with the simulator's admin calls (not throttled, not timed): every node holds
eth0 + 2 ENIs with 14 secondaries each, and its CiliumNode already lists them (status and
allocated), demand 25 pods + pre-allocate 8 -- nothing to do, which is what a steady scan costs.
Timed, median of 5: `refresh(force=True)` + `resync()` + `publish()` of the real `EniOperator`
with a sequential runner. The part spent inside SimulatedEc2 building Describe answers is measured
separately and reported, because on real AWS that is the network's time, not our CPU.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import resource
import statistics
import sys
import time
from typing import Any

from reconciler.clock import SimClock
from reconciler.ec2.sim import LatencyModel, SimulatedEc2
from reconciler.eni.config import EniOperatorConfig
from reconciler.eni.operator import EniOperator
from reconciler.model import CiliumNode, EniSpec, IpamSpec, PoolAllocation, PoolRequest
from reconciler.sim.scenario import SCENARIOS
from reconciler.sim.speedups import memoised_cidr_parsing
from reconciler.sim.workload import node_name
from reconciler.sim.world import build_cluster_world

GC_TAGS = {"io.cilium/cilium-managed": "true", "io.cilium/cluster-name": "sim"}


def build(nodes: int) -> tuple[EniOperator, SimulatedEc2, list[CiliumNode]]:
    scenario = SCENARIOS["s4-scale"].with_overrides(nodes=nodes)
    clock = SimClock()
    ec2 = SimulatedEc2(clock, latency=LatencyModel(), throttling=False, record_calls=False)
    world = build_cluster_world(ec2, scenario)
    config = EniOperatorConfig(cluster_name="sim")
    op = EniOperator(ec2, config, clock)
    instances: list[tuple[int, str]] = []
    for i in range(nodes):
        iid = world.launch(i)
        instances.append((i, iid))
        eth0 = ec2.instances[iid].enis_by_index[0]
        ec2.assign_ipv4(eth0, 14, [], None, [])
        for index in (1, 2):
            eni = ec2.new_eni(
                world.subnet_for(i),
                security_group_ids=(world.security_group_id,),
                description=f"Cilium-CNI ({iid})",
                secondary_count=14,
                tags=GC_TAGS,
            )
            ec2.attach(eni.id, iid, index)
    op.refresh(force=True)
    cns: list[CiliumNode] = []
    for i, iid in instances:
        spec = EniSpec(
            instance_type=world.instance_type,
            vpc_id=world.vpc_id,
            availability_zone=world.az_for(i),
            node_subnet_id=world.subnet_for(i),
        )
        bare = CiliumNode(node_name(i), instance_id=iid, resource_version="1", eni=spec)
        published = op.published_enis(bare)
        cidrs = tuple(f"{a}/32" for s in published.values() for a in s.addresses)
        ipam = IpamSpec(
            requested=(PoolRequest("default", 33),), allocated=(PoolAllocation("default", cidrs),)
        )
        cns.append(
            CiliumNode(bare.name, instance_id=iid, resource_version="1", eni=spec, ipam=ipam, enis=published)
        )
    op.resync(cns, {})
    return op, ec2, cns


def measure(nodes: int, repeats: int = 5, memo: bool = False) -> dict[str, Any]:
    """`memo`: with the simulator's memoised CIDR parsing (not what the deployed operator runs)."""
    with memoised_cidr_parsing() if memo else contextlib.nullcontext():
        t0 = time.process_time()
        op, ec2, _ = build(nodes)
        build_cpu = time.process_time() - t0
        scans: list[float] = []
        describes: list[float] = []
        for _ in range(repeats):
            t = time.process_time()
            op.refresh(force=True)
            plan = op.resync()
            published = op.publish()
            scans.append(time.process_time() - t)
            t = time.process_time()
            ec2.describe_network_interfaces()
            ec2.describe_subnets()
            describes.append(time.process_time() - t)
        if plan.nodes_in_deficit or published:
            raise AssertionError("the steady state should need no work")
    scan = statistics.median(scans)
    ec2_side = statistics.median(describes)
    return {
        "nodes": nodes,
        "enis": len(ec2.enis),
        "scan_cpu_s": scan,
        "scan_cpu_s_all": scans,
        "simulator_describe_cpu_s": ec2_side,
        "scan_cpu_s_without_simulator": max(scan - ec2_side, 0.0),
        "memoised_cidr_parsing": memo,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "build_cpu_s": build_cpu,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    parser.add_argument("--memo", action="store_true", help="memoise CIDR parsing (simulator speed-up)")
    args = parser.parse_args(argv)
    result = measure(args.nodes, memo=args.memo)
    print(json.dumps(result) if args.json else result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
