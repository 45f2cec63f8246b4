"""`nowlab taskgraph`: show, place and predict print their tables; bad input is one line, exit 2."""
from __future__ import annotations

import pytest
from typer.testing import CliRunner

from nowlab.cli import app

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, ["taskgraph", *args])


def test_show_lists_tasks_arcs_and_levels():
    r = run("show", "wavefront")
    assert r.exit_code == 0, r.output
    assert "parallelism by level: 1 -> 2 -> 3 -> 2 -> 1" in r.output
    assert "T5->T8" in r.output and "40,000" in r.output


def test_place_prints_every_task_on_a_workstation():
    r = run("place", "wavefront", "-w", "menasce-rao-classes", "-p", "pvm-default", "--kind", "LX", "--count", "3")
    assert r.exit_code == 0, r.output
    assert "TGS execution time: 34.13 s" in r.output  # 5 tasks x 6.8 s + 4 messages of 40,000 B at 10 Mbit/s
    assert all(f"T{i}" in r.output for i in range(1, 10))


def test_predict_gives_tgs_and_a_converged_monte_carlo():
    r = run("predict", "wavefront", "-w", "menasce-rao-classes", "-p", "workstation-load-speed",
            "--count", "3", "--owners", "2,1,0.2", "--width", "0.05", "--seed", "1")
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())  # rich wraps lines at the terminal's width
    assert "TGS (eq. 7):" in text and "converged, seed 1" in text


@pytest.mark.parametrize("args, message", [
    (("place", "wavefront", "-w", "menasce-rao-classes", "-p", "fastest"),
     "error: policy: unknown 'fastest' (known: pvm-default, workstation-speed, parallel-load-speed, "
     "workstation-load-speed)"),
    (("place", "wavefront", "-w", "menasce-rao-classes", "-p", "pvm-default", "--kind", "LX", "--count", "4"),
     "error: count: asked for 4 workstations of kind 'LX', the cluster has 3"),
    (("predict", "wavefront", "-w", "menasce-rao-classes", "-p", "pvm-default", "--owners", "2,1"),
     "error: --owners: expected N,Z,D (e.g. 2,1.0,0.2), got '2,1'"),
    (("show", "no-such-graph"), "no such task graph"),
])
def test_bad_input_is_one_line(args, message):
    r = run(*args)
    assert r.exit_code == 2
    lines = [line for line in r.output.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0]


def test_predict_writes_the_timeline_a_live_runner_reads(tmp_path):
    import csv

    out = tmp_path / "wave.csv"
    r = run("predict", "wavefront", "-w", "menasce-rao-classes", "-p", "pvm-default", "--kind", "SPARC5",
            "--count", "2", "--csv", str(out))
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader(out.open()))
    assert [row["task"] for row in rows][0] == "T1" and len(rows) == 9
    assert {row["workstation"] for row in rows} == {"sparc5-1", "sparc5-2"}
    # no owners: the Monte Carlo means are the TGS times
    assert all(float(row["mc_finish_s"]) == pytest.approx(float(row["finish_s"])) for row in rows)
