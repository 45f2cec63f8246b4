"""experiments.traces.jobs_csv: ragged rows, blank lines and padded fields read as a spreadsheet's user means them."""
from __future__ import annotations

import pytest

from experiments.traces.jobs_csv import read_jobs
from scheduler.model import DemandModel, Job, SevcikModel


def read(tmp_path, text: str) -> list[Job]:
    path = tmp_path / "jobs.csv"
    path.write_text(text)
    return read_jobs(path)


def test_short_rows_long_rows_and_blank_lines(tmp_path):
    jobs = read(tmp_path, " id , arrival ,t1,pmax\n\n1, 0 ,5\n\n2,1,2,3,9,9\n")
    assert jobs == [Job(1, 0.0, DemandModel(5.0, None), 1, 0.0), Job(2, 1.0, DemandModel(2.0, 3), 1, 0.0)]


def test_optional_columns_blank_or_absent(tmp_path):
    jobs = read(tmp_path, "id,arrival,W,alpha,beta,pmax,phases,reconfig_cost\nx,0,16,1,1,,3,\ny,0,4,0,0,2.0,1,0.5\n")
    assert jobs == [Job("x", 0.0, SevcikModel(16.0, 1.0, 1.0), 3, 0.0),
                    Job("y", 0.0, SevcikModel(4.0, 0.0, 0.0, 2), 1, 0.5)]
    assert jobs[0].model.pmax == 4 and isinstance(jobs[1].model.pmax, int)


@pytest.mark.parametrize("field, message", [
    ("nan", "line 2: column 't1' is not finite: 'nan'"),
    ("-inf", "line 2: column 't1' is not finite: '-inf'"),
    ("1e400", "line 2: column 't1' is not finite: '1e400'"),
    (" ", "line 2: column 't1' is empty"),
    ("-2", "line 2: column 't1' is negative: -2"),
])
def test_each_bad_number_is_named(tmp_path, field, message):
    with pytest.raises(ValueError, match=message):
        read(tmp_path, f"id,arrival,t1\n1,0,{field}\n")


def test_a_fractional_count_is_refused(tmp_path):
    with pytest.raises(ValueError, match="line 3: column 'pmax' must be a whole number: '2.5'"):
        read(tmp_path, "id,arrival,t1,pmax\n1,0,1,2\n2,0,1,2.5\n")
