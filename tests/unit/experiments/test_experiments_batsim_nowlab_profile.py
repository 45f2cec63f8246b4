"""The `nowlab` profile (one of the project's programs, or a user's command): simulated for the time it
states (platform.run_time_s), run live as the command live.job_argv builds; bad fields one line naming
the profile and the field.

The simulated workload, under experiments.batsim.scripted's FCFS (lowest-numbered free resources, the
queue's head blocks), on ws0-ws1 at 1 reference core and ws2-ws3 at 0.5:
  job 1: CG, runtime_s 3, on 0-1 at 0: ends at 3;
  job 2: stencil, work_ref_s 2 per process, on 2-3 at 0: 2 / 0.5 = 4 s, ends at 4;
  job 3: a user's command, runtime_s 4, all four, submitted at 1: starts at 4 (job 2's end), ends at 8;
  job 4: CG, runtime_s 5 but walltime 2, one resource, submitted at 1 behind job 3: 8 to 10, walltime reached.
"""
from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

from batsim_harness import ROOT, free_port, scheduler, write_workload
from experiments.batsim.live import job_argv
from experiments.batsim.platform import Host, Platform, PlatformError
from experiments.batsim.run import read_input, serve
from experiments.batsim.server import BatsimServer
from experiments.batsim.workload import NowlabProfile, WorkloadError, read_workload

MIXED4 = Platform((Host("ws0", 1.0, 100_000_000), Host("ws1", 1.0, 100_000_000),
                   Host("ws2", 0.5, 100_000_000), Host("ws3", 0.5, 100_000_000)))
PROFILES = {"cg3": {"type": "nowlab", "program": "cg", "args": ["--n", "64"], "runtime_s": 3},
            "stencil": {"type": "nowlab", "program": "stencil", "args": [], "work_ref_s": 2},
            "mine": {"type": "nowlab", "program": "command", "args": ["./ring", "--laps", "3"], "runtime_s": 4},
            "cg5": {"type": "nowlab", "program": "cg", "args": [], "runtime_s": 5}}
JOBS = [{"id": 1, "subtime": 0, "res": 2, "profile": "cg3"}, {"id": 2, "subtime": 0, "res": 2, "profile": "stencil"},
        {"id": 3, "subtime": 1, "res": 4, "profile": "mine"},
        {"id": 4, "subtime": 1, "res": 1, "profile": "cg5", "walltime": 2}]
OK, WALLTIME = "COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED"
EXPECTED = {1: (0, "0-1", 3, OK), 2: (0, "2-3", 4, OK), 3: (4, "0-3", 8, OK), 4: (8, "0", 10, WALLTIME)}


def test_nowlab_profiles_under_fcfs_take_the_times_they_state(tmp_path):
    w = read_input(write_workload(tmp_path / "w.json", JOBS, PROFILES))
    with scheduler("nowlab", "fcfs", tmp_path) as (endpoint, proc):
        out = serve(w, MIXED4, endpoint=endpoint, timeout_s=10, out_dir=tmp_path / "o")
        assert proc.wait(timeout=10) == 0
    assert out.error is None
    jobs = pd.read_csv(out.jobs_csv, dtype={"allocated_resources": str}).set_index("job_id")
    got = {j: (r.starting_time, r.allocated_resources, r.finish_time, r.final_state) for j, r in jobs.iterrows()}
    assert got == EXPECTED


def test_a_nowlab_profile_without_a_time_cannot_be_simulated(tmp_path):
    profiles = {"mine": {"type": "nowlab", "program": "command", "args": ["./ring"]}}
    w = read_workload(write_workload(tmp_path / "w.json", [{"id": 1, "subtime": 0, "res": 1, "profile": "mine"}],
                                     profiles))
    with pytest.raises(PlatformError, match=r"^profile 'mine' \(type nowlab, a user's command, used by job 'w0!1'\): "
                                            r"runtime_s: missing; a command is simulated for the run time its "
                                            r"profile states$"):
        BatsimServer(w, MIXED4, channel=None)
    # as a user meets it: one line, before any message
    done = subprocess.run([sys.executable, "-m", "nowlab", "batsim", str(tmp_path / "w.json"), "--socket",
                           f"tcp://127.0.0.1:{free_port()}", "--out", str(tmp_path / "o")], cwd=ROOT,
                          capture_output=True, text=True, timeout=30)
    assert done.returncode != 0
    assert "profile 'mine' (type nowlab, a user's command, used by job 'w0!1'): runtime_s: missing" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


@pytest.mark.parametrize(("body", "message"), [
    ({"program": "command"},
     r"profile 'x': args: a command profile needs its argv \(the executable first\), got \[\]$"),
    ({"program": "cg", "args": ["--n", "64", "--hosts", "ws1"]},
     r"profile 'x': args: --hosts is given by nowlab \(the job's key and its allocated workstations\), not by the "
     r"profile$"),
    ({"program": "cg", "args": ["--job=a"]}, r"profile 'x': args: --job is given by nowlab"),
    ({"program": "cg", "runtime_s": -1}, r"profile 'x': runtime_s: must be a number >= 0, got -1$"),
    ({"program": "stencil", "work_ref_s": "2"}, r"profile 'x': work_ref_s: must be a number >= 0, got '2'$"),
    ({"program": "cg", "runtime_s": 1, "work_ref_s": 1}, r"profile 'x': work_ref_s: give runtime_s or work_ref_s, "
                                                         r"not both$"),
    ({"program": "command", "args": ["./a"], "work_ref_s": 1},
     r"profile 'x': work_ref_s: a user's command states its time as runtime_s"),
])
def test_a_bad_nowlab_profile_is_one_line_naming_the_profile_and_field(tmp_path, body, message):
    path = write_workload(tmp_path / "w.json", [], {"x": {"type": "nowlab", **body}})
    with pytest.raises(WorkloadError, match=message) as info:
        read_workload(path)
    assert "\n" not in str(info.value)


def test_live_a_project_program_gets_its_key_and_workstations_and_a_command_runs_as_given():
    cg = NowlabProfile("cg", "cg", ("--n", "64", "--iterations", "5"))
    assert job_argv(cg, 1e9, ["ws1", "ws2"], key="batsim-w0-1-7") == [
        "python3", "-m", "workloads.cg", "--n", "64", "--iterations", "5", "--job", "batsim-w0-1-7",
        "--hosts", "ws1,ws2"]
    mine = NowlabProfile("mine", "command", ("python3", "-c", "print(1)"))
    assert job_argv(mine, 1e9, ["ws1"], key="k") == ["python3", "-c", "print(1)"]
