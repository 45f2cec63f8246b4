"""`nowlab replay --live` on a 4-workstation local cluster: a handful of an archive-style trace's jobs,
time scaled to seconds, measured beside simulated, with the counts and the Batsim jobs file."""
from __future__ import annotations

import csv

import pytest
from typer.testing import CliRunner

from nowlab.cli import app

pytestmark = pytest.mark.host_mpi  # real jobs on this host's Open MPI

TRACE = """; Version: 2.2
; Computer: an 8-processor test machine
; MaxProcs: 8
;
1   0  -1 100 2 -1 -1 2 200 -1 1 1 1 -1 1 -1 -1 -1
2  10  -1  50 4 -1 -1 4  60 -1 1 2 1 -1 1 -1 -1 -1
3  20  -1  30 1 -1 -1 1  -1 -1 1 3 1 -1 1 -1 -1 -1
4  30  -1  80 8 -1 -1 8 100 -1 1 5 1 -1 1 -1 -1 -1
5  40  -1 300 1 -1 -1 1  50 -1 1 6 1 -1 1 -1 -1 -1
6  50  -1  20 2 -1 -1 2  40 -1 1 7 1 -1 1 -1 -1 -1
"""


@pytest.mark.parametrize("wide, scaled, skipped", [("scale", 1, 0), ("skip", 0, 1)])
def test_a_window_replays_live_beside_its_simulation(tmp_path, monkeypatch, wide, scaled, skipped):
    from testbed import lifecycle
    from testbed.backends.local import LocalBackend, local_spec

    monkeypatch.setenv("NOWLAB_HOME", str(tmp_path / "home"))
    trace = tmp_path / "t.swf"
    trace.write_text(TRACE)
    out = tmp_path / "out"
    with lifecycle.cluster(local_spec(4), backend=LocalBackend()) as here:
        got = CliRunner().invoke(app, ["replay", str(trace), "--policy", "EASY", "--live", "--cluster", here.name,
                                       "--scale-time", "0.01", "--max-procs", "4", "--wide", wide, "--out", str(out)])
    assert got.exit_code == 0, got.output
    text = " ".join(got.output.replace("│", " ").replace("┃", " ").split())
    assert "mean bounded slowdown" in text and "utilisation" in text and "measured simulated" in text
    assert "audit problems 0" in text
    assert f"wider than P, scaled down to P {scaled}" in text and f"wider than P, skipped {skipped}" in text
    with open(out / "jobs.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 6 - skipped
    by_id = {int(r["job_id"]): r for r in rows}
    assert by_id[5]["final_state"] == "COMPLETED_WALLTIME_REACHED"  # ran 300 s, asked 50: killed at 0.5 s
    # no walltime, and one twice its run: these end on their own (the others' margins, 0.1-0.2 s at
    # F = 0.01, are near what a pool job's teardown takes on 2 cores: they may be killed, as the report shows)
    assert by_id[3]["final_state"] == by_id[1]["final_state"] == "COMPLETED_SUCCESSFULLY"
    assert all(r["launch_via"] == "pool" for r in rows)
    if wide == "scale":
        assert by_id[4]["requested_number_of_resources"] == "4"
    with open(out / "jobs-simulated.csv") as f:
        assert [int(r["job_id"]) for r in csv.DictReader(f)] == sorted(by_id)


def test_live_options_without_live_are_one_line(tmp_path):
    trace = tmp_path / "t.swf"
    trace.write_text(TRACE)
    got = CliRunner().invoke(app, ["replay", str(trace), "--policy", "EASY", "--scale-time", "0.1"])
    assert got.exit_code == 2 and "--scale-time: only with --live" in got.output
    got = CliRunner().invoke(app, ["replay", str(trace), "--policy", "EASY", "--live"])
    assert got.exit_code == 2 and "--cluster: --live runs on a cluster" in got.output
