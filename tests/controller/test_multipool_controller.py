"""The multi-pool controller on a MemoryStore, stepped on a SimClock (SPEC section 2).

MP-CFG-1 (auto-create pools), MP-CRD-1 (the operator only adds to `allocated`, the agent owns
`requested` and removals), restore on a new leadership term (no block handed out twice),
ENI-NODE-1 in multi-pool mode too.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from reconciler.clock import SimClock
from reconciler.cluster.memory import MemoryStore
from reconciler.cluster.store import CILIUM_NODE, CILIUM_POD_IP_POOL, NODE, Conflict, NotFound
from reconciler.controller.multipool_controller import MultiPoolController
from reconciler.model import CiliumNode

AUTO = "default=ipv4-cidrs:10.10.0.0/16;ipv4-mask-size:24"


class Leader:
    leading = True

    def __call__(self) -> bool:
        return self.leading


def controller(store: MemoryStore, clock: SimClock, leader: Leader | None = None) -> MultiPoolController:
    return MultiPoolController(store, clock, leader or Leader(), auto_create=AUTO)


def step(ctl: MultiPoolController, clock: SimClock, times: int = 3) -> None:
    for _ in range(times):
        ctl.poll_informers(0)
        ctl.step()
        clock.advance(0.05)


def add_node(store: MemoryStore, name: str) -> None:
    store.create(NODE, {"metadata": {"name": name}})
    store.create(CILIUM_NODE, {"metadata": {"name": name}, "spec": {"ipam": {}}})


def request(store: MemoryStore, name: str, pool: str, ipv4: int) -> None:
    """The agent's write (MP-CRD-1): requested only, with the version it read, retried on 409."""
    while True:
        obj = store.get(CILIUM_NODE, name)
        pools = obj["spec"].setdefault("ipam", {}).setdefault("pools", {})
        pools["requested"] = [{"pool": pool, "needed": {"ipv4-addrs": ipv4}}]
        try:
            store.update(CILIUM_NODE, obj)
            return
        except Conflict:
            continue


def blocks(store: MemoryStore, name: str) -> list[str]:
    return list(CiliumNode.from_obj(store.get(CILIUM_NODE, name)).ipam.cidrs_of("default"))


def test_auto_created_pool_serves_a_node_request_MP_CFG_1_MP_CRD_1() -> None:
    store, clock = MemoryStore(), SimClock()
    ctl = controller(store, clock)
    add_node(store, "n1")
    step(ctl, clock)
    pool: Any = store.get(CILIUM_POD_IP_POOL, "default")
    assert pool["spec"]["ipv4"] == {"cidrs": ["10.10.0.0/16"], "maskSize": 24}
    request(store, "n1", "default", 300)
    step(ctl, clock)
    got = blocks(store, "n1")
    assert len(got) == 2 and all(ipaddress.ip_network(c).prefixlen == 24 for c in got)
    obj = store.get(CILIUM_NODE, "n1")
    assert obj["spec"]["ipam"]["pools"]["requested"] == [{"pool": "default", "needed": {"ipv4-addrs": 300}}]


def test_an_existing_pool_is_never_overwritten_by_auto_create() -> None:
    store, clock = MemoryStore(), SimClock()
    store.create(
        CILIUM_POD_IP_POOL,
        {"metadata": {"name": "default"}, "spec": {"ipv4": {"cidrs": ["10.99.0.0/16"], "maskSize": 26}}},
    )
    step(controller(store, clock), clock)
    pool: Any = store.get(CILIUM_POD_IP_POOL, "default")
    assert pool["spec"]["ipv4"]["cidrs"] == ["10.99.0.0/16"]


def test_a_new_leader_restores_blocks_before_handing_out_new_ones() -> None:
    store, clock = MemoryStore(), SimClock()
    first = controller(store, clock)
    for name in ("n1", "n2"):
        add_node(store, name)
    step(first, clock)
    for name in ("n1", "n2"):
        request(store, name, "default", 200)
    step(first, clock)
    held = blocks(store, "n1") + blocks(store, "n2")
    assert len(held) == 2
    # first leader gone; a fresh controller (new term, empty memory) takes over
    second = controller(store, clock)
    add_node(store, "n3")
    request(store, "n3", "default", 200)
    step(second, clock)
    everything = held + blocks(store, "n3")
    assert len(blocks(store, "n3")) == 1 and len(set(everything)) == 3


def test_a_standby_writes_nothing_and_deleted_nodes_free_their_cilium_node() -> None:
    store, clock = MemoryStore(), SimClock()
    leader = Leader()
    leader.leading = False
    ctl = controller(store, clock, leader)
    add_node(store, "n1")
    request(store, "n1", "default", 10)
    step(ctl, clock)
    try:
        store.get(CILIUM_POD_IP_POOL, "default")
        raise AssertionError("a standby created a pool")
    except NotFound:
        pass
    assert blocks(store, "n1") == []
    leader.leading = True
    step(ctl, clock)
    assert len(blocks(store, "n1")) == 1
    store.delete(NODE, "n1")
    step(ctl, clock)
    try:
        store.get(CILIUM_NODE, "n1")
        raise AssertionError("CiliumNode survived its Node (ENI-NODE-1)")
    except NotFound:
        pass
