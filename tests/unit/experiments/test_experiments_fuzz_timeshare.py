"""Fuzzed time-sharing specs (and their scheduling tables) and run directories read back.

Bounded to a few seconds in the test command; `python -m hardening.fuzz_parsers --only timeshare-spec` runs
the same property far longer. The inputs and the property are in tests/fuzzing.py.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzzing import FUZZ, TARGETS, check, inputs



@pytest.mark.parametrize("name", ["timeshare-spec", "timeshare-run-jobs", "timeshare-run-run", "timeshare-run-timeline",
                                  "timeshare-run-managers"])
@FUZZ
@given(data=st.data())
def test_each_parser_gives_a_valid_object_or_one_line_naming_the_file(tmp_path: Path, name: str,
                                                                      data: st.DataObject) -> None:
    check(TARGETS[name], tmp_path, data.draw(inputs(TARGETS[name])))


def test_a_short_row_in_a_run_file_is_one_line(tmp_path: Path) -> None:
    # found by the fuzzing: a short row gave None to float() (a TypeError)
    from experiments.studies.zhou_brent.files import RunFilesError, read_rows

    TARGETS["timeshare-run-timeline"].write(tmp_path, "workstation,job,start_s,end_s\nws1,A0.0,0\n")
    with pytest.raises(RunFilesError, match=r"^timeline\.csv line 2: expected 4 columns, got 3$"):
        read_rows(tmp_path)


def test_a_run_file_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    from experiments.studies.zhou_brent.files import RunFilesError, read_rows

    TARGETS["timeshare-run-skew"].write(tmp_path, b"\xffworkstation,kind,at_s,skew_s,rtt_s\n")
    with pytest.raises(RunFilesError, match=r"^skew\.csv: not UTF-8 text$"):
        read_rows(tmp_path)
