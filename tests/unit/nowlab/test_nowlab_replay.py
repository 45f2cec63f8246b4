"""`nowlab replay`: a small archive-style trace simulated as it was, against times, metrics and counts
worked by hand; the jobs CSV as evalys reads it; bad input as one line."""
from __future__ import annotations

import importlib.util
import json

import pytest
from typer.testing import CliRunner

from experiments import trace_replay
from experiments.traces.swf_rigid import read_rigid
from nowlab.cli import app
from scheduler.invariants import check_timeline
from scheduler.registry import get_policy

HEADER = """; Version: 2.2
; Computer: a 4-processor test machine
; Information: http://www.cs.huji.ac.il/labs/parallel/workload/
;              http://example.org/continuation-line
; MaxProcs: 4
; Note: one cancelled job, one without a run time, one partial-execution line,
;       one without a requested time, one wider than the machine, one overrun.
;
"""
# job submit wait run procs cpu mem req_procs req_time req_mem status user group app queue partition prec think
LINES = """\
1   0  -1 100 2 -1 -1 2 200 -1 1 1 1 -1 1 -1 -1 -1
2  10  -1  50 4 -1 -1 4  60 -1 1 2 1 -1 1 -1 -1 -1
3  20  -1  30 1 -1 -1 1  -1 -1 1 3 1 -1 1 -1 -1 -1
4  30  -1  -1 2 -1 -1 2 100 -1 5 4 1 -1 1 -1 -1 -1
5  40  -1  80 8 -1 -1 8 100 -1 1 5 1 -1 1 -1 -1 -1
6  50  -1 500 3 -1 -1 3 100 -1 1 6 1 -1 1 -1 -1 -1
7  60  -1   5 1 -1 -1 1  20 -1 2 7 1 -1 1 -1 -1 -1
7  60  -1  10 1 -1 -1 1  20 -1 1 7 1 -1 1 -1 -1 -1
8 400  -1   0 1 -1 -1 1  10 -1 1 8 1 -1 1 -1 -1 -1
9 410  -1  -1 1 -1 -1 1  10 -1 1 9 1 -1 1 -1 -1 -1
"""
# Kept: 1, 2, 3, 5, 6, 7, 8 (4 cancelled, 9 no run time, the first line of 7 a partial execution);
# 5 asks for 8 of 4 processors: skipped. Replayed: 1, 2, 3, 6, 7, 8.
#
# FCFS on P=4, by hand:
#   1 (2 procs) at 0: runs 0-100.          2 (4 procs) at 10: waits for 1, runs 100-150.
#   3 (1) at 20, 6 (3) at 50, 7 (1) at 60 queue behind 2. At 150: 3 and 6 start (1 + 3 = 4);
#   6 runs 500 s but asked 100: killed at 250. 3 ends at 180: 7 starts, ends 190. 8 (run 0) at 400: 400-400.
FCFS = {1: (0, 100), 2: (100, 150), 3: (150, 180), 6: (150, 250), 7: (180, 190), 8: (400, 400)}
# EASY: at 10 the head 2 gets a reservation at 1's requested end, 0 + 200 = 200 (extra 0).
#   3 at 20 asks nothing: planned at its run time, 20 + 30 = 50 <= 200: runs 20-50.
#   6 at 50 needs 3 of 2 free: waits. 7 at 60: 60 + 20 = 80 <= 200: runs 60-70.
#   1 ends at 100: 2 runs 100-150; then 6 150-250 (killed), 8 400-400.
EASY = {1: (0, 100), 2: (100, 150), 3: (20, 50), 6: (150, 250), 7: (60, 70), 8: (400, 400)}


@pytest.fixture
def trace(tmp_path):
    path = tmp_path / "tiny.swf"
    path.write_text(HEADER + LINES)
    return path


@pytest.mark.parametrize("policy, expected", [("FCFS", FCFS), ("EASY", EASY)])
def test_replay_reproduces_the_hand_worked_times(trace, policy, expected):
    done = trace_replay.replay(read_rigid(trace), get_policy(policy))
    assert done.P == 4 and done.skipped_wide == 1
    assert {r.id: (r.start, r.finish) for r in done.result.jobs} == expected
    killed = [r.id for r in done.result.jobs if r.final_state == "COMPLETED_WALLTIME_REACHED"]
    assert killed == [6]


def test_fcfs_metrics_by_hand(trace):
    m = trace_replay.replay(read_rigid(trace), get_policy("FCFS")).metrics
    # waits 0, 90, 130, 100, 120, 0; responses 100, 140, 160, 200, 130, 0
    assert m.jobs == 6 and m.killed_at_walltime == 1
    assert m.mean_wait_s == pytest.approx(440 / 6)
    assert m.mean_response_s == pytest.approx(730 / 6)
    # bounded slowdown max(1, response / max(run, 10)): 100/100, 140/50, 160/30, 200/100, 130/10, 1 (run 0)
    assert m.mean_bounded_slowdown == pytest.approx((1 + 2.8 + 160 / 30 + 2 + 13 + 1) / 6)
    # processor-seconds 2*100 + 4*50 + 1*30 + 3*100 + 1*10 + 0 = 740 over 4 x (400 - 0)
    assert m.utilisation == pytest.approx(740 / 1600)
    assert m.span_s == 400


def test_the_replayed_run_keeps_the_rules(trace):
    read = read_rigid(trace)
    jobs, _ = trace_replay.rigid_jobs(read, 4)
    from scheduler.engine import simulate
    for policy in ("FCFS", "EASY", "EASY-CONSERVATIVE"):
        result = simulate(jobs, policy, 4)
        assert check_timeline(result.timeline, 4, {j.id: j.size for j in jobs}, [j.id for j in jobs],
                              {j.id: j.size for j in jobs}, {j.id: j.walltime for j in jobs if j.walltime}) == []


def test_command_prints_metrics_and_counts_and_writes_the_jobs_csv(trace, tmp_path):
    out_dir = tmp_path / "out"
    out = CliRunner().invoke(app, ["replay", str(trace), "--policy", "easy", "--out", str(out_dir)],
                             terminal_width=200)
    assert out.exit_code == 0, out.output
    for words in ("EASY on P=4", "mean bounded slowdown (tau = 10 s)", "cancelled (status 5)",
                  "partial-execution lines (status 2-4)", "skipped: wider than the machine", "jobs.csv"):
        assert words in out.output
    summary = json.loads((out_dir / "summary.json").read_text())
    assert summary["parse"]["cancelled (status 5)"] == 1 and summary["parse"]["no run time"] == 1
    assert summary["parse"]["partial-execution lines (status 2-4)"] == 1
    assert summary["parse"]["kept without a requested time"] == 1
    assert summary["skipped wider than the machine"] == 1 and summary["metrics"]["jobs"] == 6
    rows = (out_dir / "jobs.csv").read_text().splitlines()
    assert rows[0].startswith("job_id,workload_name,profile,submission_time,requested_number_of_resources,"
                              "requested_time,success,final_state,starting_time,execution_time,finish_time,"
                              "waiting_time,turnaround_time,stretch,allocated_resources,consumed_energy,metadata")
    by_id = {row.split(",")[0]: row.split(",") for row in rows[1:]}
    assert by_id["6"][5:8] == ["100.0", "0", "COMPLETED_WALLTIME_REACHED"]
    assert by_id["3"][5:8] == ["-1.0", "1", "COMPLETED_SUCCESSFULLY"]  # asked no time: Batsim's -1


@pytest.mark.skipif(importlib.util.find_spec("evalys") is None, reason="evalys not installed")
def test_evalys_reads_the_replays_jobs_csv(trace, tmp_path):
    from evalys.jobset import JobSet

    assert CliRunner().invoke(app, ["replay", str(trace), "-p", "FCFS", "--out", str(tmp_path)]).exit_code == 0
    js = JobSet.from_csv(str(tmp_path / "jobs.csv"))
    assert sorted(js.df.jobID.tolist()) == ["1", "2", "3", "6", "7", "8"]
    assert dict(zip(js.df.jobID, (len(p) for p in js.df.allocated_resources))) == {
        "1": 2, "2": 4, "3": 1, "6": 3, "7": 1, "8": 1}
    assert js.utilisation is not None  # evalys computed its utilisation from our intervals


@pytest.mark.parametrize("args, line", [
    (["--policy", "LIFO"], "error: unknown policy 'LIFO'"),
    (["--policy", "EASY", "--max-procs", "0"], "error: --max-procs must be >= 1, got 0"),
])
def test_bad_options_are_one_line(trace, args, line):
    out = CliRunner().invoke(app, ["replay", str(trace), *args])
    assert out.exit_code == 2 and len(out.output.strip().splitlines()) == 1
    assert out.output.startswith(line)


def test_a_trace_without_machine_size_asks_for_max_procs(tmp_path):
    path = tmp_path / "bare.swf"
    path.write_text(LINES)
    out = CliRunner().invoke(app, ["replay", str(path), "--policy", "EASY"])
    assert out.exit_code == 2
    assert out.output.strip() == f"error: --max-procs: {path} has no MaxProcs or MaxNodes in its header; give the machine's size"
    assert CliRunner().invoke(app, ["replay", str(path), "--policy", "EASY", "-P", "8"]).exit_code == 0


def test_a_missing_file_is_one_line(tmp_path):
    out = CliRunner().invoke(app, ["replay", str(tmp_path / "none.swf"), "--policy", "EASY"])
    assert out.exit_code == 2 and out.output.strip().splitlines() == [f"error: {tmp_path / 'none.swf'}: No such file or directory"]
