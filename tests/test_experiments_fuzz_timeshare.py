"""Fuzzed time-sharing specs (and their scheduling tables) and run directories read back.

Bounded to a few seconds in the test command; `benchmarks/fuzz_parsers.py --only timeshare-spec` runs
the same property far longer. The inputs and the property are in tests/fuzzing.py.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from fuzzing import check, inputs, targets

TARGETS = targets()
FUZZ = settings(max_examples=100, deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@FUZZ
@given(data=inputs(TARGETS["timeshare-spec"]))
def test_timeshare_spec_is_a_valid_object_or_one_line_naming_the_file(tmp_path: Path, data: str) -> None:
    check(TARGETS["timeshare-spec"], tmp_path, data)


@FUZZ
@given(data=inputs(TARGETS["timeshare-run-jobs"]))
def test_timeshare_run_jobs_is_a_valid_object_or_one_line_naming_the_file(tmp_path: Path, data: str) -> None:
    check(TARGETS["timeshare-run-jobs"], tmp_path, data)


@FUZZ
@given(data=inputs(TARGETS["timeshare-run-run"]))
def test_timeshare_run_run_is_a_valid_object_or_one_line_naming_the_file(tmp_path: Path, data: str) -> None:
    check(TARGETS["timeshare-run-run"], tmp_path, data)


@FUZZ
@given(data=inputs(TARGETS["timeshare-run-timeline"]))
def test_timeshare_run_timeline_is_a_valid_object_or_one_line_naming_the_file(tmp_path: Path, data: str) -> None:
    check(TARGETS["timeshare-run-timeline"], tmp_path, data)


@FUZZ
@given(data=inputs(TARGETS["timeshare-run-managers"]))
def test_timeshare_run_managers_is_a_valid_object_or_one_line_naming_the_file(tmp_path: Path, data: str) -> None:
    check(TARGETS["timeshare-run-managers"], tmp_path, data)


def test_a_short_row_in_a_run_file_is_one_line(tmp_path: Path) -> None:
    # found by the fuzzing: a short row gave None to float() (a TypeError)
    from experiments.timeshare_files import RunFilesError, read_rows

    TARGETS["timeshare-run-timeline"].write(tmp_path, "workstation,job,start_s,end_s\nws1,A0.0,0\n")
    with pytest.raises(RunFilesError, match=r"^timeline\.csv line 2: expected 4 columns, got 3$"):
        read_rows(tmp_path)


def test_a_run_file_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    from experiments.timeshare_files import RunFilesError, read_rows

    TARGETS["timeshare-run-skew"].write(tmp_path, b"\xffworkstation,kind,at_s,skew_s,rtt_s\n")
    with pytest.raises(RunFilesError, match=r"^skew\.csv: not UTF-8 text$"):
        read_rows(tmp_path)
