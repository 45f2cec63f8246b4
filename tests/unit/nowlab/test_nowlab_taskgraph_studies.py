"""`nowlab taskgraph figures` and `placements`: bad input is one line naming the option, before any
cluster is looked for; --predict-only writes the report without one."""
from __future__ import annotations

import pytest
from typer.testing import CliRunner

from nowlab.cli import app

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, ["taskgraph", *args])


@pytest.mark.parametrize("args, message", [
    (("figures", "--figures", "4,7"), "error: --figures: 7 is not one of the §5 figures (4, 5, 6)"),
    (("figures", "--reps", "0"), "error: --reps: at least 1, got 0"),
    (("figures", "--task-reps", "-1"), "error: --task-reps: at least 0, got -1"),
    (("placements", "--owners-on", "SPARC10"), "error: --owners-on: 'SPARC10' is not a class"),
    (("placements", "--graphs", "wavefront,nope"), "no such task graph"),
    (("placements", "--graphs", ","), "error: --graphs: at least one task graph, got ','"),
    (("placements", "--reps", "0", "--predict-only"), "error: --reps: at least 1, got 0"),
])
def test_bad_input_is_one_line(args, message):
    r = run(*args)
    assert r.exit_code == 2
    lines = [line for line in r.output.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], r.output


def test_figures_predict_only_writes_the_report(tmp_path):
    r = run("figures", "--figures", "6", "--predict-only", "--out", str(tmp_path))
    assert r.exit_code == 0, r.output
    assert "9 points; live at --reps 2: about" in r.output
    md = (tmp_path / "figures.md").read_text()
    assert "Figs. 6, predicted only" in md and "dramatic decrease" in md
    assert (tmp_path / "figures.csv").read_text().count("\n") == 10


def test_placements_predict_only_writes_the_report(tmp_path):
    r = run("placements", "--graphs", "small-then-large", "--owners-on", "all", "--predict-only", "--out", str(tmp_path))
    assert r.exit_code == 0, r.output
    assert "8 cases; live at --reps 2: about" in r.output
    md = (tmp_path / "placements.md").read_text()
    assert "on every workstation." in md and md.count("| yes |") == 4
