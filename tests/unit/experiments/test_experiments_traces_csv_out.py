"""experiments.traces.csv_out writes the files pandas' to_csv(index=False) writes, byte for byte, without pandas."""
from __future__ import annotations

import math

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from experiments.traces import csv_out
from scheduler.engine import simulate
from scheduler.model import DemandModel, Job, SevcikModel


def pandas_text(columns: dict, tmp_path) -> str:
    path = tmp_path / "pandas.csv"
    pd.DataFrame(columns).to_csv(path, index=False)
    return path.read_text()


def ours_text(columns: dict, tmp_path) -> str:
    path = tmp_path / "ours.csv"
    csv_out.write_columns(path, columns)
    return path.read_text()


def small_run():
    """Overlapping jobs under FOLDING on 8 processors: folds, unfolds, string and int ids."""
    jobs = [Job(0, 0.0, SevcikModel(8, 0, 0.1), phases=4),
            Job("b,1", 0.5, SevcikModel(4, 0, 0.1, pmax=2), phases=4),
            Job(2, 1.0, SevcikModel(6, 0, 0.05), phases=4),
            Job(3, 1.0, DemandModel(0.3), phases=1)]
    return simulate(jobs, "FOLDING", P=8)


def test_a_runs_two_files_are_pandas_files(tmp_path):
    result = small_run()
    for success in (None, [True, False, True, True]):
        result.to_dataframe(success).to_csv(tmp_path / "pd_jobs.csv", index=False)
        csv_out.write_jobs(result, tmp_path / "jobs.csv", success)
        assert (tmp_path / "jobs.csv").read_bytes() == (tmp_path / "pd_jobs.csv").read_bytes()
    result.timeline_dataframe().to_csv(tmp_path / "pd_tl.csv", index=False)
    csv_out.write_timeline(result, tmp_path / "tl.csv")
    assert (tmp_path / "tl.csv").read_bytes() == (tmp_path / "pd_tl.csv").read_bytes()
    text = (tmp_path / "jobs.csv").read_text()
    assert '"b,1"' in text and "COMPLETED_FAILED" in text  # the quoted id and the failed flag made it


def test_the_columns_are_the_frames_columns():
    result = small_run()
    assert list(result.job_columns()) == list(result.to_dataframe().columns)
    assert list(result.timeline_columns()) == list(result.timeline_dataframe().columns)


@pytest.mark.parametrize("columns", [
    {"ints_and_floats": [1, 2.5, 3], "ints": [1, 2, 1], "bools": [True, False, True], "mixed": [1, True, 0]},
    {"with_none": [1, None, 3], "all_none": [None, None, None], "floats_nan": [math.nan, 1.0, -0.0]},
    {"odd_floats": [math.inf, -math.inf, 1e16, 1e-5, 5e-324], "zeros": [0.0, -0.0, 0.0, -0.0, 0.0]},
    {"repeats": [0.1, 0.1, 0.1], "zero_runs": [-0.0, 0.0, -0.0]},
    {"mixed_ids": [1, "x", 3], "strs_none": ["a", None, ""], "obj_float": ["a", 1.5, math.nan]},
    {"quoting": ['a,b', 'say "hi"', "two\nlines"], "plain": ["x", "y", "z"]},
    {"cr": ["a\rb", "c", "d"], "empty": ["", "", ""]},
    {"lone_column": ["", "x", ""]},
    {"no_rows": [], "also_none": []},
    {},
    {"head,er": [1, 2], "b": [3, 4]},
])
def test_tricky_columns_match_pandas(columns, tmp_path):
    assert ours_text(columns, tmp_path) == pandas_text(columns, tmp_path)


numbers = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-2**62, 2**62), st.none())


@settings(max_examples=150, deadline=None)
@given(a=st.lists(st.floats(), min_size=15, max_size=15), b=st.lists(numbers, min_size=30, max_size=30),
       c=st.lists(st.text(max_size=5), min_size=30, max_size=30))
def test_any_numbers_and_text_match_pandas(a, b, c, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("h")
    columns = {"a": [x for x in a for _ in (0, 1)], "b": b, "c": c}  # a: runs of equal floats
    assert ours_text(columns, tmp) == pandas_text(columns, tmp)


def test_unequal_columns_are_refused(tmp_path):
    with pytest.raises(ValueError, match=r"columns of unequal length: \[1, 2\]"):
        csv_out.write_columns(tmp_path / "x.csv", {"a": [1], "b": [1, 2]})


def test_simulate_command_says_in_one_line_when_it_cannot_write(tmp_path):
    from typer.testing import CliRunner

    from nowlab.cli import app

    jobs = tmp_path / "jobs.csv"
    jobs.write_text("id,arrival,t1\n1,0,1\n")
    res = CliRunner().invoke(app, ["simulate", str(jobs), "-p", "RA", "-P", "2", "--timeline",
                                   str(tmp_path / "no" / "such" / "tl.csv"), "--jobs-out", str(tmp_path / "o.csv")])
    assert res.exit_code == 2
    assert "cannot write" in res.output and "tl.csv: No such file or directory" in res.output
    assert "Traceback" not in res.output and len(res.output.strip().splitlines()) == 1
