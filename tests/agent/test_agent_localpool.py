"""Local allocation from the node's CIDRs (MP-POOL-4) and CIDR release (ENI-REL-1)."""

from __future__ import annotations

import ipaddress

from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.agent.localpool import LocalPool
from reconciler.cidr import parse_cidr, usable_bounds


def nets(*texts: str) -> list:
    return [parse_cidr(t) for t in texts]


def test_mp_pool_4_first_and_last_reserved_unless_allowed() -> None:
    lp = LocalPool()
    lp.update(nets("10.0.0.0/30"))
    assert [lp.allocate("x"), lp.allocate("y"), lp.allocate("z")] == ["10.0.0.1", "10.0.0.2", None]
    open_pool = LocalPool(allow_first=True, allow_last=True)
    open_pool.update(nets("10.0.0.0/30"))
    assert [open_pool.allocate(str(i)) for i in range(5)] == [
        "10.0.0.0",
        "10.0.0.1",
        "10.0.0.2",
        "10.0.0.3",
        None,
    ]
    exempt = LocalPool()
    exempt.update(nets("10.0.0.8/31", "10.0.0.12/32"))
    assert [exempt.allocate(str(i)) for i in range(4)] == ["10.0.0.8", "10.0.0.9", "10.0.0.12", None]


def test_addresses_come_from_the_first_cidr_with_room() -> None:
    lp = LocalPool()
    lp.update(nets("10.0.1.0/30", "10.0.0.0/30"))
    assert [lp.allocate(str(i)) for i in range(3)] == ["10.0.1.1", "10.0.1.2", "10.0.0.1"]
    lp.release("10.0.1.1")
    assert lp.allocate("again") == "10.0.1.1"


def test_eni_rel_1_release_only_wholly_unused_cidrs_with_spare_capacity() -> None:
    lp = LocalPool()
    lp.update(nets("10.0.0.0/28", "10.0.0.16/28", "10.0.0.32/28"))  # 14 usable each
    lp.allocate("a")
    assert lp.release_excess(free_needed=14) == ["10.0.0.32/28"], "13 + 14 left >= 14: drop the last one"
    assert lp.release_excess(free_needed=14) == [], "dropping 10.0.0.16 would leave 13 < 14"
    assert lp.cidrs() == ["10.0.0.0/28", "10.0.0.16/28"]
    assert lp.release_excess(free_needed=0) == ["10.0.0.16/28"]
    assert lp.cidrs() == ["10.0.0.0/28"], "the CIDR in use is never released"


def test_eni_rel_1_released_cidr_not_re_added_while_still_offered() -> None:
    lp = LocalPool()
    lp.update(nets("10.0.0.0/28", "10.0.0.16/28"))
    lp.allocate("a")
    lp.release_excess(0)
    lp.update(nets("10.0.0.0/28", "10.0.0.16/28"))
    assert lp.cidrs() == ["10.0.0.0/28"], "still advertised: stays released"
    lp.update(nets("10.0.0.0/28"))
    lp.update(nets("10.0.0.0/28", "10.0.0.16/28"))
    assert lp.cidrs() == ["10.0.0.0/28", "10.0.0.16/28"], "handed out anew after it was gone"


def test_cidr_removed_while_in_use_keeps_pods_but_gives_no_new_ips() -> None:
    lp = LocalPool()
    lp.update(nets("10.0.0.0/30", "10.0.1.0/24"))
    ip = lp.allocate("a")
    assert ip == "10.0.0.1"
    lp.update(nets("10.0.1.0/24"))
    assert lp.cidrs() == ["10.0.1.0/24", "10.0.0.0/30"], "kept for the pod"
    assert lp.allocate("b") == "10.0.1.1"
    assert lp.capacity == 254
    assert lp.release(ip)
    assert lp.cidrs() == ["10.0.1.0/24"], "gone with its last pod"


@settings(max_examples=80, deadline=None)
@given(
    cidrs=st.lists(
        st.sampled_from(["10.0.0.0/29", "10.0.0.8/30", "10.0.0.12/31", "10.0.0.16/32", "fd00::/126"]),
        min_size=1,
        max_size=5,
        unique=True,
    ),
    allow=st.tuples(st.booleans(), st.booleans()),
    ops=st.lists(st.integers(0, 30), max_size=60),
)
def test_local_addresses_unique_and_usable(
    cidrs: list[str], allow: tuple[bool, bool], ops: list[int]
) -> None:
    lp = LocalPool(*allow)
    lp.update(nets(*cidrs))
    held: list[str] = []
    for op in ops:
        if op % 3 and held:
            assert lp.release(held.pop(op % len(held)))
            continue
        ip = lp.allocate(f"p{op}")
        if ip is None:
            assert lp.free == 0
            continue
        assert ip not in held
        addr = int(ipaddress.ip_address(ip))
        assert any(lo <= addr <= hi for lo, hi in (usable_bounds(n, *allow) for n in nets(*cidrs)))
        held.append(ip)
    assert lp.in_use == len(held)
