"""`nowlab batsim --live` with `nowlab` profiles on a 4-workstation local cluster (this host's Open MPI,
no containers): the project's CG, rigid at its allocation's size, and a user's mpi4py command through
mpiexec, driven by experiments.batsim.scripted's FCFS; one command outlives its walltime and is stopped.

Job 1: CG (n 64, 20 iterations) on 2 workstations; job 2: a user's command, every rank joins a barrier
and rank 0 sleeps 0.3 s; job 3: a user's command that would sleep 30 s, walltime 1 s.
Then, under tests/batsim_scripted_scheduler.py's choreo: a CG that would run for hours, killed by
KILL_JOB 4 s after its start, and a user's command that exits with status 3 (COMPLETED_FAILED, 3).
"""
from __future__ import annotations

import pandas as pd
import pytest

from batsim_harness import scheduler, write_workload
from experiments.batsim.platform import from_cluster_spec
from experiments.batsim.run import read_input, serve
from experiments.traces.intervals import parse_intervals
from testbed import lifecycle
from testbed.backends.local import LocalBackend, local_spec

pytestmark = pytest.mark.host_mpi  # real jobs on this host's Open MPI

BARRIER = ("from mpi4py import MPI; import time; c = MPI.COMM_WORLD; c.Barrier(); "
           "time.sleep(0.3 if c.Get_rank() == 0 else 0); c.Barrier()")
PROFILES = {"cg": {"type": "nowlab", "program": "cg", "args": ["--n", "64", "--iterations", "20"]},
            "mine": {"type": "nowlab", "program": "command", "args": ["python3", "-c", BARRIER], "runtime_s": 0.3},
            "long": {"type": "nowlab", "program": "command", "args": ["python3", "-c", "import time; time.sleep(30)"]}}
JOBS = [{"id": 1, "subtime": 0.1, "res": 2, "profile": "cg", "walltime": 15},
        {"id": 2, "subtime": 0.1, "res": 2, "profile": "mine", "walltime": 15},
        {"id": 3, "subtime": 0.2, "res": 1, "profile": "long", "walltime": 1}]
LAUNCH_SLACK_S = 5.0
"""What a live job may take beyond its model: an mpiexec's start (1-2 s on this host) and exit."""


@pytest.fixture(scope="module")
def local4(tmp_path_factory):
    """One 4-workstation local cluster for the module's runs."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NOWLAB_HOME", str(tmp_path_factory.mktemp("home")))
        with lifecycle.cluster(local_spec(4, name="batsim-nowlab"), backend=LocalBackend()) as c:
            yield c


def test_cg_and_a_users_command_run_live_and_a_walltime_stops_one(tmp_path, local4):
    w = read_input(write_workload(tmp_path / "w.json", JOBS, PROFILES))
    platform = from_cluster_spec(local4.state.cluster_spec, capped=False)
    with scheduler("nowlab", "fcfs", tmp_path) as (endpoint, proc):
        live = serve(w, platform, endpoint=endpoint, timeout_s=15, out_dir=tmp_path / "o",
                     launcher=local4.job_launcher())
        assert proc.wait(timeout=10) == 0
    assert live.error is None, live.error
    jobs = pd.read_csv(live.jobs_csv, dtype={"allocated_resources": str}).set_index("job_id")
    print("\n" + jobs[["final_state", "allocated_resources", "starting_time", "execution_time",
                       "finish_time"]].to_string())
    assert jobs.final_state.to_dict() == {1: "COMPLETED_SUCCESSFULLY", 2: "COMPLETED_SUCCESSFULLY",
                                          3: "COMPLETED_WALLTIME_REACHED"}
    assert {r.id: r.return_code for r in live.records} == {"w0!1": 0, "w0!2": 0, "w0!3": -1}
    assert [len(parse_intervals(jobs.allocated_resources[j])) for j in (1, 2, 3)] == [2, 2, 1]
    assert (jobs.execution_time > 0).all() and (jobs.starting_time >= 0.1).all()
    assert 0.3 <= jobs.execution_time[2] < 0.3 + LAUNCH_SLACK_S  # measured, at least the command's sleep
    assert 1.0 <= jobs.execution_time[3] < 1.0 + LAUNCH_SLACK_S  # stopped at its walltime, not after 30 s
    assert live.simulated_run_s == {"w0!2": 0.3}  # CG and the long command state no time: none beside them


def test_a_kill_job_stops_a_running_cg_and_a_failing_command_keeps_its_exit_code(tmp_path, local4):
    profiles = {"cg-long": {"type": "nowlab", "program": "cg", "args": ["--n", "64", "--iterations", "100000000"]},
                "fails": {"type": "nowlab", "program": "command", "args": ["python3", "-c", "raise SystemExit(3)"]}}
    jobs = [{"id": 1, "subtime": 0.1, "res": 2, "profile": "cg-long"},
            {"id": 2, "subtime": 0.1, "res": 1, "profile": "fails"},
            {"id": 3, "subtime": 0.1, "res": 5, "profile": "fails"}]
    w = read_input(write_workload(tmp_path / "w.json", jobs, profiles))
    platform = from_cluster_spec(local4.state.cluster_spec, capped=False)
    with scheduler("scripted", "choreo", tmp_path) as (endpoint, _):
        live = serve(w, platform, endpoint=endpoint, timeout_s=15, out_dir=tmp_path / "o",
                     launcher=local4.job_launcher())
    assert live.error is None, live.error
    got = {r.id: r for r in live.records}
    cg, fails = got["w0!1"], got["w0!2"]
    print(f"\nkilled CG ran {cg.finish_s - cg.start_s:.3f} s; "
          f"the failing command {fails.finish_s - fails.start_s:.3f} s")
    assert cg.final_state == "COMPLETED_KILLED" and 4.0 <= cg.finish_s - cg.start_s < 4.0 + LAUNCH_SLACK_S
    assert (fails.final_state, fails.return_code) == ("COMPLETED_FAILED", 3)
    assert got["w0!3"].final_state == "REJECTED"
