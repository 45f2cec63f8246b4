"""Fuzzed jobs CSVs, live job classes and arrival streams: valid jobs or one line naming the file.

Bounded to a few seconds in the test command; `python -m hardening.fuzz_parsers --only jobs-csv` runs
the same property far longer. The inputs and the property are in tests/fuzzing.py.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzzing import FUZZ, TARGETS, check, inputs



@pytest.mark.parametrize("name", ["jobs-csv", "stream-classes", "stream-csv"])
@FUZZ
@given(data=st.data())
def test_each_parser_gives_a_valid_object_or_one_line_naming_the_file(tmp_path: Path, name: str,
                                                                      data: st.DataObject) -> None:
    check(TARGETS[name], tmp_path, data.draw(inputs(TARGETS[name])))


def test_a_job_id_of_non_ascii_digits_is_a_name_not_a_crash(tmp_path: Path) -> None:
    # '²'.isdigit() is True and int('²') raises: found by the fuzzing, in both readers
    from experiments.traces.jobs_csv import read_jobs
    from experiments.traces.live_inputs import load_classes, read_stream

    (tmp_path / "jobs.csv").write_text("id,arrival,t1\n²,0,1\n7,1,1\n")
    assert [j.id for j in read_jobs(tmp_path / "jobs.csv")] == ["²", 7]
    TARGETS["stream-csv"].write(tmp_path, "id,class,arrival\n²,cg,0\n3,short,1\n")
    arrivals = read_stream(tmp_path / "stream.csv", load_classes(tmp_path / "classes.toml"))
    assert [a.id for a in arrivals] == ["²", 3]
    with pytest.raises(ValueError, match=r"stream\.csv: line 3: duplicate job id '²'$"):
        TARGETS["stream-csv"].write(tmp_path, "id,class,arrival\n²,cg,0\n²,short,1\n")
        read_stream(tmp_path / "stream.csv", load_classes(tmp_path / "classes.toml"))


@pytest.mark.parametrize("name", ["jobs-csv", "stream-classes", "stream-csv"])
def test_a_byte_that_is_not_utf8_is_one_line_naming_the_file(tmp_path: Path, name: str) -> None:
    target = TARGETS[name]
    target.write(tmp_path, b"\xff" + target.seeds[0].encode())
    with pytest.raises(ValueError, match=rf"{target.file}: not UTF-8 text$"):
        target.parse(tmp_path)
