"""The paper-scale run resumes where it stopped: no case lost, none repeated, the same clusters."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from experiments.studies.sanjay_vadhiyar import paper_scale as ps
from nowlab.cli import app

SMALL = ps.PaperScaleSpec(sizes=(6, 8), reps=2, budget_s=1.0, budget_sizes=(8,), budgets_s=(0.5, 1.0),
                          budget_reps=2, setups=3, setup_clusters=(2, 3), setup_procs=(6, 9),
                          algorithms=("DP", "BE"))


def keys(out: Path) -> list[tuple]:
    rows = pd.read_csv(out / ps.CASES_CSV)
    return [(r.part, r.size, r.rep, r.cluster, f"{r.budget_s:g}", r.algorithm) for r in rows.itertuples()]


def test_the_paper_spec_is_the_papers_numbers():
    spec = ps.PaperScaleSpec()
    parts = pd.Series([c.part for c in ps.cases(spec)]).value_counts()
    assert parts["fig8"] == 6 * 50 * 4 and parts["fig9"] == 2 * 5 * 50 * 4
    assert {c.rep for c in ps.cases(spec) if c.part == "setup"} == set(range(1100))
    assert all(4 <= len(ps.setup_plan(spec, s)) <= 15 for s in range(0, 1100, 97))


def test_a_run_stopped_and_resumed_searches_every_case_once_and_the_same_clusters(tmp_path):
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    ps.run(SMALL, whole)
    assert ps.run(SMALL, parts, limit=7) == 7
    with (parts / ps.CASES_CSV).open("a") as fh:
        fh.write("fig9,8,0,0,0.5,DP,12.")  # a row cut off by a kill: dropped, and its case searched again
    while ps.run(SMALL, parts, limit=5):
        pass
    expected = [c.key for c in ps.cases(SMALL)]
    assert sorted(keys(parts)) == sorted(expected) and len(set(keys(parts))) == len(expected)
    # DP and BE finish on these clusters within their budgets, so equal clusters give equal times
    a = pd.read_csv(whole / ps.CASES_CSV).sort_values(["part", "size", "rep", "cluster", "budget_s", "algorithm"])
    b = pd.read_csv(parts / ps.CASES_CSV).sort_values(["part", "size", "rep", "cluster", "budget_s", "algorithm"])
    assert a.finished.all()
    assert a.exec_s.tolist() == b.exec_s.tolist()


def test_the_tables_count_a_setup_only_when_every_search_of_it_is_done(tmp_path):
    n_fig = sum(c.part != "setup" for c in ps.cases(SMALL) if c.rep == 0)
    ps.run(SMALL, tmp_path, limit=n_fig + 1)  # round 0's figures and one search of setup 0
    assert ps.load(SMALL, tmp_path).setups.empty
    ps.run(SMALL, tmp_path)
    result = ps.load(SMALL, tmp_path)
    assert sorted(result.setups.setup.unique()) == [0, 1, 2]
    assert len(result.setups) == 3 * len(SMALL.algorithms)
    assert (result.setups.weight_ratio >= 1).all()
    assert set(result.scalability["size"]) == {6, 8} and set(result.budgets.budget_paper_s) == {0.5, 1.0}


def test_the_command_will_not_append_to_a_run_without_resume(tmp_path):
    (tmp_path / ps.CASES_CSV).write_text(",".join(ps.COLUMNS) + "\nfig8,32,0,0,25,DP,1,1,1,0.1,True,0,1,1\n")
    result = CliRunner().invoke(app, ["study", "sanjay-vadhiyar", "simulate", "--scale", "paper",
                                      "--out", str(tmp_path)])
    assert result.exit_code == 2 and "pass --resume" in result.output


@pytest.mark.parametrize(("field", "value"), [("reps", 0), ("budget_s", 0.0), ("setups", -1)])
def test_bad_spec_is_one_line_naming_the_field(field, value):
    with pytest.raises(ValueError, match=rf"^{field.split('_')[0]}"):
        ps.PaperScaleSpec(**{field: value})


def test_a_second_run_on_the_same_folder_is_refused_while_one_appends(tmp_path):
    import fcntl

    ps.run(SMALL, tmp_path, limit=1)
    with (tmp_path / ps.CASES_CSV).open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(ValueError, match=r"^out: another run is appending to"):
            ps.run(SMALL, tmp_path, limit=1)
        assert len(ps.done_keys(tmp_path / ps.CASES_CSV)) == 1  # reading is still allowed
