"""Batsim interval sets (docs/interval-set.rst, Batsim v4.2.1): every representation the
documentation lists reads to the same set; the canonical one is what is written."""
from __future__ import annotations

import pytest

from experiments.traces.intervals import IntervalError, format_intervals, interval_count, parse_intervals


@pytest.mark.parametrize("text", ["1-3 5 7", "1-2 3 5 7", "1 2 3 5 7", "1-2 1-3 5 7", "5 2-2 7 1-3"])
def test_the_documented_representations_of_one_set(text):
    # "{1, 2, 3, 5, 7} can be represented as 1-3 5 7, 1-2 3 5 7, 1 2 3 5 7, 1-2 1-3 5 7 or even 5 2-2 7 1-3"
    assert parse_intervals(text) == (1, 2, 3, 5, 7)
    assert format_intervals(parse_intervals(text)) == "1-3 5 7"  # the canonical representation


def test_canonical_round_trip_and_count():
    assert format_intervals([37, 38, 39, 40, 41, 42]) == "37-42"
    assert format_intervals([0]) == "0" and format_intervals([]) == "" and parse_intervals("") == ()
    for text in ("0-3 5 7-9", "0", "2-3", "0 2 4-6"):
        assert format_intervals(parse_intervals(text)) == text
    assert interval_count("0-2 5") == 4


@pytest.mark.parametrize(("text", "message"), [
    ("3-1", r"^'3-1' in '3-1' ends before it starts$"),
    ("0-3  5", r"^'' in '0-3  5' is not an interval"),
    ("0,1", r"^'0,1' in '0,1' is not an interval"),
    ("-1", r"^'-1' in '-1' is not an interval"),
    ("a-b", r"^'a-b' in 'a-b' is not an interval"),
    ("0-3 4-8", r"^'4-8' in '0-3 4-8' is outside the machine \(resources 0-7\)$"),
    (3, r"^must be a string like '0-3 5', got 3$"),
])
def test_a_bad_interval_set_names_the_interval(text, message):
    with pytest.raises(IntervalError, match=message):
        parse_intervals(text, machine_size=8)


def test_the_machine_size_bounds_every_resource():
    assert parse_intervals("0-7", machine_size=8) == tuple(range(8))
    with pytest.raises(IntervalError, match=r"'8' in '0 8' is outside the machine"):
        parse_intervals("0 8", machine_size=8)


@pytest.mark.parametrize("bad", [[-1], [1.5], [True]])
def test_format_refuses_what_is_not_a_resource_number(bad):
    with pytest.raises(IntervalError, match=r"resource numbers must be integers >= 0"):
        format_intervals(bad)
