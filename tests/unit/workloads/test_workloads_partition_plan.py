"""Block layout and redistribution plans (pure logic, no MPI)."""
from __future__ import annotations

import itertools

import pytest
from hypothesis import given, strategies as st

from workloads.partition import Block, block_bounds, counts_and_displacements
from workloads.redistribution_plan import (SubsetRestrictionError, layout, plan_moves, resize_kind,
                            rows_over_network)

HOSTS = [f"ws{i}" for i in range(1, 9)]


@given(st.integers(0, 5000), st.integers(1, 64))
def test_blocks_tile_the_rows_and_differ_by_at_most_one(n, p):
    blocks = block_bounds(n, p)
    assert len(blocks) == p
    assert blocks[0].lo == 0 and blocks[-1].hi == n
    assert all(a.hi == b.lo for a, b in zip(blocks, blocks[1:]))
    sizes = [b.rows for b in blocks]
    assert max(sizes) - min(sizes) <= 1
    assert sizes == sorted(sizes, reverse=True)  # the extra rows go to the low ranks


def test_counts_and_displacements_scale_by_row_length():
    counts, displs = counts_and_displacements(10, 3, row_len=4)
    assert counts == [16, 12, 12]
    assert displs == [0, 16, 28]


def test_block_rejects_zero_ranks():
    with pytest.raises(ValueError):
        block_bounds(10, 0)


def test_overlap():
    assert Block(0, 5).overlap(Block(3, 9)) == Block(3, 5)
    assert Block(0, 5).overlap(Block(5, 9)) is None


@pytest.mark.parametrize("old,new,kind", [
    (["ws1", "ws2", "ws3", "ws4"], ["ws1", "ws2"], "loser"),
    (["ws1", "ws2"], ["ws1", "ws2", "ws3"], "winner"),
    (["ws2", "ws3"], ["ws1", "ws2", "ws3"], "winner"),
    (["ws1", "ws2"], ["ws2", "ws1"], "same"),
])
def test_resize_kind(old, new, kind):
    assert resize_kind(old, new) == kind


@pytest.mark.parametrize("old,new", [(["ws1", "ws2"], ["ws2", "ws3"]), (["ws1"], ["ws2"])])
def test_subset_restriction_is_enforced(old, new):
    with pytest.raises(SubsetRestrictionError):
        resize_kind(old, new)
    with pytest.raises(SubsetRestrictionError):
        plan_moves(100, old, new)


def test_duplicates_and_empty_partitions_are_rejected():
    with pytest.raises(ValueError):
        resize_kind(["ws1", "ws1"], ["ws1"])
    with pytest.raises(ValueError):
        resize_kind(["ws1"], [])


def subset_pairs():
    """(old, new) host lists obeying the subset restriction, in assorted orders."""
    @st.composite
    def pair(draw):
        big = draw(st.integers(1, 8))
        small = draw(st.integers(1, big))
        larger = draw(st.permutations(HOSTS[:big]))
        smaller = draw(st.permutations(draw(st.sampled_from(list(itertools.combinations(larger, small))))))
        return (smaller, larger) if draw(st.booleans()) else (larger, smaller)
    return pair()


@given(st.integers(0, 700), subset_pairs())
def test_every_new_row_comes_from_its_old_holder_exactly_once(n, hosts):
    old, new = hosts
    moves = plan_moves(n, old, new)
    old_layout, new_layout = layout(n, old), layout(n, new)
    for dst, block in new_layout.items():
        got = sorted((m.lo, m.hi) for m in moves if m.dst == dst)
        covered = [r for lo, hi in got for r in range(lo, hi)]
        assert covered == list(range(block.lo, block.hi))
    for m in moves:
        src_block = old_layout[m.src]
        assert src_block.lo <= m.lo < m.hi <= src_block.hi
    # a LOSER's released hosts only send; a WINNER's new hosts only receive
    assert not any(m.dst not in new for m in moves)
    assert not any(m.src not in old for m in moves)


def test_shrinking_four_to_two_moves_half_the_rows():
    # ws1 keeps [0,125) and needs [125,250) from ws2; ws3 keeps [250,375) and gets [375,500) from ws4
    moves = plan_moves(500, ["ws1", "ws2", "ws3", "ws4"], ["ws1", "ws3"])
    remote = sorted((m.src, m.dst, m.lo, m.hi) for m in moves if not m.local)
    assert remote == [("ws2", "ws1", 125, 250), ("ws4", "ws3", 375, 500)]
    assert rows_over_network(moves) == 250


def test_same_partition_moves_nothing_over_the_network():
    assert rows_over_network(plan_moves(500, ["ws1", "ws2"], ["ws1", "ws2"])) == 0
