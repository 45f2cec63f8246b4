"""Slot widths of Zhou & Brent's eqs. 7-14 against values worked by hand."""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.timeshare.slots import (Distribution, Share, SlotError, check_beta, check_round, check_widths,
                                       integrated_widths_s, layout_round, parallel_width_s, sequential_ratio,
                                       sequential_time_s, sequential_widths_s, shortest_round_s)

# By hand: β_p = 0.2 and 0.3, ΔT = 10 s. Δt_p = 2 s and 3 s (eq. 8); β_s = 0.5 (eq. 13), ΔT_s = 5 s (eq. 9);
# uniform Δt_s = 5/2 = 2.5 s each (eq. 10); proportional 5*0.2/0.5 = 2 s and 5*0.3/0.5 = 3 s (eq. 11);
# integrated Δt = 2+2 = 4 s and 3+3 = 6 s (eq. 12), = 0.2/0.5*10 and 0.3/0.5*10 (eq. 14).
BETAS = (0.2, 0.3)


def test_parallel_and_sequential_widths_by_hand():
    assert [parallel_width_s(b, 10.0) for b in BETAS] == pytest.approx([2.0, 3.0])
    assert sequential_ratio(BETAS) == pytest.approx(0.5)
    assert sequential_time_s(BETAS, 10.0) == pytest.approx(5.0)


def test_uniform_and_proportional_spread_by_hand():
    assert sequential_widths_s(BETAS, 10.0, Distribution.UNIFORM) == pytest.approx((2.5, 2.5))
    assert sequential_widths_s(BETAS, 10.0, Distribution.PROPORTIONAL) == pytest.approx((2.0, 3.0))


def test_integrated_slots_are_eq_14_and_eq_12():
    assert integrated_widths_s(BETAS, 10.0) == pytest.approx((4.0, 6.0))
    slots = layout_round([Share("J1", 0.2), Share("J2", 0.3)], 10.0, Distribution.PROPORTIONAL)
    assert [s.width_s for s in slots] == pytest.approx([4.0, 6.0])
    assert [x for s in slots for x in (s.parallel_s, s.sequential_s)] == pytest.approx([2.0, 2.0, 3.0, 3.0])


def test_a_full_round_leaves_no_sequential_time():
    assert sequential_widths_s((0.5, 0.5), 4.0, Distribution.UNIFORM) == (0.0, 0.0)
    assert integrated_widths_s((0.5, 0.5), 4.0) == pytest.approx((2.0, 2.0))


@pytest.mark.parametrize("beta", [0.0, -0.1, 1.5, math.nan, math.inf])
def test_beta_outside_0_1_is_one_line(beta):
    with pytest.raises(SlotError, match=r"must be in \(0, 1\], got") as err:
        check_beta(beta, "job J1: beta")
    assert "\n" not in str(err.value) and str(err.value).startswith("job J1: beta")


def test_shares_over_the_round_and_widths_off_the_round_are_errors():
    with pytest.raises(SlotError, match="add up to 1.1 > 1"):
        sequential_ratio((0.6, 0.5))
    with pytest.raises(SlotError, match=r"widths add up to 9 s, not the round of 10 s"):
        check_widths([2.0, 3.0, 4.0], 10.0)
    with pytest.raises(SlotError, match="slot 1: width must be a time >= 0"):
        check_widths([11.0, -1.0], 10.0)


def test_a_round_longer_than_its_bound_is_an_error():
    assert check_round(5.0, 5.0) == 5.0
    with pytest.raises(SlotError, match="longer than the bound max_round_s = 4 s"):
        check_round(5.0, 4.0)
    with pytest.raises(SlotError, match="longer than the bound"):
        layout_round([Share("J1", 0.5)], 20.0, Distribution.UNIFORM, max_round_s=10.0)


def test_shortest_round_gives_every_slot_its_minimum():
    # β = 0.25 and 0.5, slots of at least 1 s: the 0.25 slot sets ΔT = 4 s.
    assert shortest_round_s((0.25, 0.5), 1.0, 10.0) == pytest.approx(4.0)
    with pytest.raises(SlotError, match="longer than the bound"):
        shortest_round_s((0.25, 0.5), 1.0, 3.0)


def test_a_repeated_process_is_an_error():
    with pytest.raises(SlotError, match=r"repeat"):
        layout_round([Share("J1", 0.2), Share("J1", 0.3)], 10.0, Distribution.UNIFORM)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.01, 1.0), min_size=1, max_size=6).filter(lambda bs: sum(bs) <= 1.0),
       st.floats(0.1, 100.0), st.sampled_from(list(Distribution)))
def test_every_layout_fills_the_round(betas, round_s, distribution):
    slots = layout_round([Share(f"J{i}", b) for i, b in enumerate(betas)], round_s, distribution)
    assert math.fsum(s.width_s for s in slots) == pytest.approx(round_s)
    assert [s.parallel_s for s in slots] == pytest.approx([b * round_s for b in betas])
    if distribution is Distribution.PROPORTIONAL:
        assert [s.width_s for s in slots] == pytest.approx(list(integrated_widths_s(betas, round_s)))
