"""Cost of the multi-pool operator allocator at cluster scale (issue 5 target: 5,000 nodes, /24s from a /8).

Run: `.venv/bin/python bench/multipool_alloc.py [--nodes 5000]`. Prints CPU seconds
(time.process_time, measured without tracing) and peak traced memory (tracemalloc, a second run) for:

- cold:     5,000 fresh nodes each requesting 250 IPv4 addresses (one /24 each) from 10.0.0.0/8;
- restart:  a new operator restoring (occupying) those 5,000 nodes' blocks, then one reconcile each;
- 3-blocks: 5,000 nodes requesting 700 addresses (three /24s each, 15,000 blocks);
- fill:     all 65,536 /24 blocks of the /8 handed out (256 nodes x 256 blocks), then one refusal;
- ipv6:     5,000 nodes requesting 250 IPv6 addresses from fd00::/104 in /120s, and from a /48 in /64s.

Node objects are built before timing starts; only the operator's work is measured.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from reconciler.model import CiliumNode, IpamSpec, PoolRequest  # noqa: E402
from reconciler.multipool.operator import MultiPoolOperator  # noqa: E402
from reconciler.multipool.pools import CiliumPodIPPool, PoolFamily  # noqa: E402

V4_POOL = CiliumPodIPPool("default", ipv4=PoolFamily(("10.0.0.0/8",), 24))
V6_POOL = CiliumPodIPPool("v6", ipv6=PoolFamily(("fd00::/104",), 120))
V6_WIDE = CiliumPodIPPool("wide", ipv6=PoolFamily(("fd00:1:2::/48",), 64))


def nodes(count: int, pool: str, v4: int, v6: int) -> list[CiliumNode]:
    ipam = IpamSpec(requested=(PoolRequest(pool, v4, v6),))
    return [CiliumNode(f"node-{i:05d}", resource_version="1", ipam=ipam) for i in range(count)]


def cold(pools: list[CiliumPodIPPool], ns: list[CiliumNode]) -> tuple[MultiPoolOperator, list[CiliumNode]]:
    op = MultiPoolOperator()
    op.restore(pools, [])
    out = []
    for n in ns:
        res = op.reconcile_node(n)
        out.append(replace(n, resource_version="2", ipam=replace(n.ipam, allocated=res.allocated)))
    return op, out


def restart(pools: list[CiliumPodIPPool], ns: list[CiliumNode]) -> MultiPoolOperator:
    op = MultiPoolOperator()
    op.restore(pools, ns)
    for n in ns:
        if op.reconcile_node(n).changed:
            raise AssertionError(f"restart changed {n.name}")
    return op


def measure(label: str, fn: Callable[[], object], blocks: int) -> None:
    start = time.process_time()
    fn()
    cpu = time.process_time() - start
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    per = cpu / blocks * 1e6 if blocks else 0.0
    mib = peak / 2**20
    print(f"{label:<44} {cpu:8.3f} s CPU  {mib:8.1f} MiB peak  {per:7.1f} us/block  ({blocks} blocks)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    args = parser.parse_args()
    n = args.nodes
    one = nodes(n, "default", 250, 0)
    three = nodes(n, "default", 700, 0)
    _, held = cold([V4_POOL], one)
    fill_nodes = nodes(256, "default", 256 * 254, 0)
    v6 = nodes(n, "v6", 0, 250)
    wide = nodes(n, "wide", 0, 250)

    def fill() -> None:
        op, _ = cold([V4_POOL], fill_nodes)
        extra = op.reconcile_node(replace(nodes(1, "default", 1, 0)[0], name="one-more"))
        if "no free /24" not in extra.error:
            raise AssertionError("the /8 should be exhausted")

    print(f"multi-pool operator allocator, {n} nodes (python {sys.version.split()[0]})")
    measure(f"cold: {n} nodes x one /24 from a /8", lambda: cold([V4_POOL], one), n)
    measure(f"restart: occupy {n} nodes' blocks + reconcile", lambda: restart([V4_POOL], held), n)
    measure(f"3-blocks: {n} nodes x three /24s", lambda: cold([V4_POOL], three), 3 * n)
    measure("fill: all 65,536 /24s of the /8 + refusal", fill, 65536)
    measure(f"ipv6: {n} nodes x one /120 from a /104", lambda: cold([V6_POOL], v6), n)
    measure(f"ipv6: {n} nodes x one /64 from a /48", lambda: cold([V6_WIDE], wide), n)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"process max RSS (everything above, incl. inputs): {rss:.0f} MiB")


if __name__ == "__main__":
    main()
