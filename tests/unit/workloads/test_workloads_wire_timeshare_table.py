"""The slot arithmetic of a table in force (workloads/wire/timeshare_table.py), which the office and the agent share."""
from __future__ import annotations

import math

import pytest

from workloads.wire.timeshare_table import (WIDTH_TOLERANCE_S, SlotAt, beta_ok, dispatch_at, is_time,
                                            round_tolerance_s, widths_fill_round)

# A: 0.2 s of its own, then 0.1 s of sequential work; a dummy of 0.3 s; B: 0.4 s. Round 1 s.
TABLE = (("A", 0.2, 0.1), (None, 0.0, 0.3), ("B", 0.4, 0.0))


@pytest.mark.parametrize("now_s, expected", [
    (10.0, SlotAt(0, "A", False, 10.0, 10.2)),    # round 0 begins: A's parallel part
    (10.25, SlotAt(0, "A", True, 10.0, 10.3)),    # A's sequential part: no parallel job until 10.3
    (10.5, SlotAt(1, None, True, 10.3, 10.6)),    # the dummy slot
    (10.8, SlotAt(2, "B", False, 10.6, 11.0)),
    (12.1, SlotAt(0, "A", False, 12.0, 12.2)),    # two rounds later
    (9.7, SlotAt(2, "B", False, 9.6, 10.0)),      # before the anchor: the round before round 0
])
def test_dispatch_names_the_slot_that_holds_a_time(now_s, expected):
    got = dispatch_at(TABLE, 1.0, 10.0, now_s)
    assert (got.index, got.job, got.sequential) == expected[:3]
    assert got.slot_start_s == pytest.approx(expected.slot_start_s) and got.until_s == pytest.approx(expected.until_s)


def test_a_slot_ends_exactly_where_the_next_begins():
    first = dispatch_at(TABLE, 1.0, 0.0, 0.0)
    second = dispatch_at(TABLE, 1.0, 0.0, first.until_s)  # the boundary itself belongs to what follows
    assert (second.index, second.sequential) == (0, True)
    last = dispatch_at(TABLE, 1.0, 0.0, dispatch_at(TABLE, 1.0, 0.0, 0.9).until_s)
    assert (last.index, last.job, last.sequential) == (0, "A", False) and last.slot_start_s == pytest.approx(1.0)


def test_slots_of_no_width_hold_no_time_and_a_table_of_none_is_an_error():
    table = (("A", 0.0, 0.0), ("B", 0.5, 0.0), (None, 0.0, 0.5))
    assert dispatch_at(table, 1.0, 0.0, 0.0).job == "B"
    with pytest.raises(ValueError, match="no slot has a width"):
        dispatch_at((("A", 0.0, 0.0),), 1.0, 0.0, 0.5)


def test_beta_is_in_zero_to_one_and_a_rounding_over_one_only_when_allowed():
    assert beta_ok(0.5) and beta_ok(1) and not beta_ok(0.0) and not beta_ok(-0.1)
    assert not beta_ok(math.nan) and not beta_ok(math.inf) and not beta_ok("0.5")
    assert not beta_ok(1 + 1e-12) and beta_ok(1 + 1e-12, tolerance=WIDTH_TOLERANCE_S)


def test_widths_fill_the_round_up_to_rounding_only():
    assert widths_fill_round([0.1] * 10, 1.0)  # 0.1 ten times is not 1.0 in floats, but is the round
    assert not widths_fill_round([0.5, 0.4], 1.0)
    assert round_tolerance_s(100.0) == pytest.approx(100 * WIDTH_TOLERANCE_S)
    assert round_tolerance_s(0.5) == WIDTH_TOLERANCE_S


def test_a_time_is_a_finite_number_and_not_a_bool():
    assert is_time(0) and is_time(2.5) and not is_time(True) and not is_time(math.inf) and not is_time(None)
