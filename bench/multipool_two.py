"""S5: 5,000 nodes each requesting blocks from two pools; the operator's allocation CPU (median of 5).

Pools: `default` 10.0.0.0/8 in /26 blocks and `blue` 172.16.0.0/12 in /27 blocks. Each node asks
MP-PRE-1 demand for 25 pods + pre-allocation 8 from `default` (roundUp(33, 8) = 40 addresses: one
/26) and 16 addresses from `blue` (one /27). Uses `bench.multipool_alloc.cold` (the multi-pool
helper's harness): a fresh `MultiPoolOperator`, pools restored, one reconcile per node. Node
objects are built before timing starts.
"""

from __future__ import annotations

import contextlib
import statistics
import time
from typing import Any

from bench.multipool_alloc import cold
from reconciler.model import CiliumNode, IpamSpec, PoolRequest
from reconciler.multipool.pools import CiliumPodIPPool, PoolFamily
from reconciler.sim.speedups import memoised_cidr_parsing

DEFAULT = CiliumPodIPPool("default", ipv4=PoolFamily(("10.0.0.0/8",), 26))
BLUE = CiliumPodIPPool("blue", ipv4=PoolFamily(("172.16.0.0/12",), 27))


def two_pool_nodes(count: int) -> list[CiliumNode]:
    ipam = IpamSpec(requested=(PoolRequest("default", 40), PoolRequest("blue", 16)))
    return [CiliumNode(f"node-{i:05d}", resource_version="1", ipam=ipam) for i in range(count)]


def measure(nodes: int = 5000, repeats: int = 5, memo: bool = False) -> dict[str, Any]:
    """`memo`: with the simulator's memoised CIDR parsing (not what the deployed operator runs)."""
    ns = two_pool_nodes(nodes)
    runs: list[float] = []
    blocks = 0
    with memoised_cidr_parsing() if memo else contextlib.nullcontext():
        for _ in range(repeats):
            t = time.process_time()
            _, out = cold([DEFAULT, BLUE], ns)
            runs.append(time.process_time() - t)
            blocks = sum(len(a.cidrs) for n in out for a in n.ipam.allocated)
    if blocks != 2 * nodes:
        raise AssertionError(f"expected one block per pool per node, got {blocks}")
    return {"nodes": nodes, "blocks": blocks, "allocation_cpu_s": statistics.median(runs), "runs": runs}


if __name__ == "__main__":
    print(measure(), measure(memo=True))
