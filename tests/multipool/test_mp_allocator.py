"""CIDR-set allocators (MP-POOL-1): never a block twice, never outside the pool, lazy for huge ranges."""

from __future__ import annotations

import tracemalloc

from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.cidr import parse_cidr
from reconciler.multipool.allocator import BlockSet, FamilyAllocator
from reconciler.multipool.intervals import IntervalSet


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["take", "release", "lowest"]), st.integers(0, 40), st.integers(0, 6)))
)
def test_interval_set_matches_a_plain_set(ops: list[tuple[str, int, int]]) -> None:
    size = 40
    ivs = IntervalSet(size)
    model: set[int] = set()
    for op, lo, width in ops:
        hi = min(lo + width, size)
        if op == "take":
            added = ivs.take_range(lo, hi)
            assert added == len(set(range(lo, hi)) - model)
            model |= set(range(lo, hi))
        elif op == "release":
            freed = ivs.release_range(lo, hi)
            assert freed == len(set(range(lo, hi)) & model)
            model -= set(range(lo, hi))
        else:
            got = ivs.take_lowest()
            free = sorted(set(range(size)) - model)
            assert got == (free[0] if free else None)
            if got is not None:
                model.add(got)
        assert ivs.taken == len(model)
        assert all(ivs.contains(i) == (i in model) for i in range(size))
        spans = ivs.intervals()
        assert all(spans[k][1] < spans[k + 1][0] for k in range(len(spans) - 1)), "intervals stay disjoint"


@settings(max_examples=100, deadline=None)
@given(
    pool=st.sampled_from(["10.0.0.0/20", "10.1.0.0/22", "fd00::/116", "fd00:1::/118"]),
    ops=st.lists(st.tuples(st.booleans(), st.integers(0, 10_000)), max_size=120),
)
def test_block_set_never_hands_out_twice_or_outside(pool: str, ops: list[tuple[bool, int]]) -> None:
    """MP-POOL-1: blocks are inside the pool CIDR, of maskSize, and never handed out twice."""
    parent = parse_cidr(pool)
    mask = parent.prefixlen + 4
    bs = BlockSet(parent, mask)
    held: list = []
    for allocate, pick in ops:
        if allocate or not held:
            block = bs.allocate()
            if block is None:
                assert len(held) == 16
                continue
            assert block.prefixlen == mask and block.subnet_of(parent)
            assert block not in held
            held.append(block)
        else:
            block = held.pop(pick % len(held))
            assert bs.release(block) == 1
        assert bs.taken == len(held)


def test_block_set_lowest_free_first_and_reuse_after_release() -> None:
    bs = BlockSet(parse_cidr("10.0.0.0/22"), 24)
    got = [str(bs.allocate()) for _ in range(4)]
    assert got == ["10.0.0.0/24", "10.0.1.0/24", "10.0.2.0/24", "10.0.3.0/24"]
    assert bs.allocate() is None
    bs.release(parse_cidr("10.0.1.0/24"))
    assert str(bs.allocate()) == "10.0.1.0/24"


def test_occupy_supernet_marks_every_block_and_subnet_marks_its_block() -> None:
    bs = BlockSet(parse_cidr("10.0.0.0/16"), 24)
    assert bs.occupy(parse_cidr("10.0.0.0/23")) == 2
    assert bs.occupy(parse_cidr("10.0.2.128/25")) == 1
    assert str(bs.allocate()) == "10.0.3.0/24"


def test_family_allocator_uses_cidrs_in_order_and_update_keeps_state() -> None:
    fam = FamilyAllocator(4, [parse_cidr("10.0.0.0/23"), parse_cidr("10.9.0.0/24")], 24)
    assert [str(fam.allocate()) for _ in range(3)] == ["10.0.0.0/24", "10.0.1.0/24", "10.9.0.0/24"]
    assert fam.allocate() is None
    added, removed = fam.update_cidrs([parse_cidr("10.9.0.0/24"), parse_cidr("10.8.0.0/24")])
    assert [str(s.parent) for s in added] == ["10.8.0.0/24"]
    assert [str(s.parent) for s in removed] == ["10.0.0.0/23"]
    assert str(fam.allocate()) == "10.8.0.0/24", "10.9.0.0/24 stays taken after the update"


def test_huge_ipv6_ranges_are_lazy() -> None:
    """A /32 into /64s is 2^32 blocks and a /8 into /120s 2^112: memory must not depend on that."""
    tracemalloc.start()
    bs = BlockSet(parse_cidr("2001:db8::/32"), 64)
    big = BlockSet(parse_cidr("fd00::/8"), 120)
    blocks = [bs.allocate() for _ in range(1000)] + [big.allocate() for _ in range(1000)]
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len({str(b) for b in blocks}) == 2000
    assert bs.size == 2**32 and big.size == 2**112
    assert peak < 5_000_000
