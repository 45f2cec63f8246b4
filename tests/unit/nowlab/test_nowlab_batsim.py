"""`nowlab batsim` as a user runs it: a real process serving a real scheduler process over a socket."""
from __future__ import annotations

import os
import subprocess
import sys

import pandas as pd

from batsim_harness import ROOT, free_port, scheduler, write_workload

# An SWF trace (18 fields a line): 4 processors; job 3 is cancelled (status 5, not replayed),
# job 5 ran past its requested time (stopped at it), job 6 has no requested time (-1).
SWF = """; MaxProcs: 4
; UnixStartTime: 0
1   0 -1 10 2 -1 -1  2  20 -1 1 1 1 -1 1 -1 -1 -1
2   1 -1  5 4 -1 -1  4  10 -1 1 1 1 -1 1 -1 -1 -1
3   2 -1 -1 1 -1 -1  1  10 -1 5 1 1 -1 1 -1 -1 -1
4   2 -1  3 1 -1 -1  1   5 -1 1 1 1 -1 1 -1 -1 -1
5   3 -1  9 2 -1 -1  2   4 -1 0 1 1 -1 1 -1 -1 -1
6   4 -1  2 2 -1 -1  2  -1 -1 1 1 1 -1 1 -1 -1 -1
"""


def nowlab(*args: str, timeout: float = 30) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nowlab", "batsim", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_an_swf_trace_under_a_raw_zmq_fcfs(tmp_path):
    trace = tmp_path / "t.swf"
    trace.write_text(SWF)
    with scheduler("nowlab", "fcfs", tmp_path) as (endpoint, proc):
        done = nowlab(str(trace), "--socket", endpoint, "--out", str(tmp_path / "o"), "--prefix", "swf")
        assert proc.wait(timeout=10) == 0
    assert done.returncode == 0, done.stderr
    jobs = pd.read_csv(tmp_path / "o" / "swf_jobs.csv", dtype={"allocated_resources": str}).set_index("job_id")
    # FCFS on the lowest free resources, the head blocking: 1 at 0 on 0-1 (to 10); 2 (4 wide) waits
    # to 10 (to 15); 4 at 15 on 0 (to 18); 5 at 15 on 1-2, stopped at its walltime 4 (19); 6 at 18 on 0+3.
    got = {i: (r.starting_time, r.allocated_resources, r.finish_time, r.final_state) for i, r in jobs.iterrows()}
    assert got == {1: (0.0, "0-1", 10.0, "COMPLETED_SUCCESSFULLY"), 2: (10.0, "0-3", 15.0, "COMPLETED_SUCCESSFULLY"),
                   4: (15.0, "0", 18.0, "COMPLETED_SUCCESSFULLY"),
                   5: (15.0, "1-2", 19.0, "COMPLETED_WALLTIME_REACHED"),
                   6: (18.0, "0 3", 20.0, "COMPLETED_SUCCESSFULLY")}
    assert jobs.requested_time[6] == -1 and jobs.profile[4] == "delay3"
    assert "wrote" in done.stdout and "swf_schedule.csv" in done.stdout


def test_a_misbehaving_scheduler_is_one_error_line_and_the_files_are_written(tmp_path):
    path = write_workload(tmp_path / "w.json", [{"id": 1, "subtime": 1, "res": 2, "profile": "d"}],
                          {"d": {"type": "delay", "delay": 1}})
    with scheduler("scripted", "outside", tmp_path) as (endpoint, _):
        done = nowlab(str(path), "--socket", endpoint, "--out", str(tmp_path / "o"))
    assert done.returncode == 2
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert errors == ["error: reply 1 (to t=1: JOB_SUBMITTED, NOTIFY): events[0] (EXECUTE_JOB): data.alloc: '2-5' "
                      "in '2-5' is outside the machine (resources 0-3)"]
    assert pd.read_csv(tmp_path / "o" / "out_jobs.csv").final_state.tolist() == ["SUBMITTED"]
    assert (tmp_path / "o" / "out_schedule.csv").is_file()


def test_a_missing_profile_is_one_line_naming_the_job_before_any_socket(tmp_path):
    path = write_workload(tmp_path / "w.json", [{"id": "a", "subtime": 0, "res": 1, "profile": "gone"}],
                          {"d": {"type": "delay", "delay": 1}})
    done = nowlab(str(path), "--socket", f"tcp://127.0.0.1:{free_port()}", "--timeout-s", "0.2")
    assert done.returncode == 2
    assert done.stderr.strip() == (f"error: {path.resolve()}: job 'w0!a' (jobs[0]): profile 'gone' is not among the "
                                   f"workload's profiles (d)")


def test_options_are_checked(tmp_path):
    path = write_workload(tmp_path / "w.json", [], {})
    both = nowlab(str(path), "--resources", "4", "--spec", "compose/specs/demo4.toml")
    assert both.returncode == 2 and both.stderr.strip() == "error: give --resources N or --spec FILE, not both"
    bad = nowlab(str(path), "--timeout-s", "0")
    assert bad.returncode == 2 and bad.stderr.strip() == "error: --timeout-s: must be > 0, got 0.0"
    missing = nowlab(str(tmp_path / "nope.json"))
    assert missing.returncode == 2 and "nope.json: no such workload file" in missing.stderr


def test_live_options_are_checked(tmp_path):
    path = write_workload(tmp_path / "w.json", [], {})
    alone = nowlab(str(path), "--live")
    assert alone.returncode == 2 and alone.stderr.strip() == "error: --live needs --cluster NAME (and --cluster is for --live)"
    sim = nowlab(str(path), "--simulated-socket", "tcp://127.0.0.1:1")
    assert sim.returncode == 2 and sim.stderr.strip() == "error: --simulated-socket: only beside a --live run"
    both = nowlab(str(path), "--live", "--cluster", "x", "--resources", "4")
    assert both.returncode == 2 and "give neither --resources nor --spec" in both.stderr
    assert "600000" in nowlab("--help").stdout  # pybatsim's message timeout, raised for live
