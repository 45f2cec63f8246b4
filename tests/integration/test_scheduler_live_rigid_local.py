"""Rigid jobs in the live executor on the local backend (this host's Open MPI, no containers): a C MPI
binary (through mpiexec) and an mpi4py program (on the resident pool) at p = 1, 2 and 4 on a
4-workstation cluster, a mixed rigid + malleable stream under EASY, and jobs killed at their
walltime on both launch paths."""
from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path

import pytest

from experiments.traces.live_inputs import job_class
from scheduler.jobs import FinalState, Outcome
from scheduler.live import Arrival, LiveExecutor
from scheduler.live.audit import audit, check_rigid
from scheduler.live.stream import JobClass
from scheduler.model import RuntimeModel

pytestmark = pytest.mark.host_mpi  # real jobs on this host's Open MPI

RING_C = Path(__file__).resolve().parents[2] / "containers" / "kernels" / "ring.c"
SHORT = job_class("short", {
    "argv": ["python3", "-m", "workloads.synthetic", "--phases", "4", "--mults", "1000000"],
    "W": 2.0, "alpha": 0.3, "beta": 0.1, "pmax": 2,
})


@pytest.fixture(scope="module")
def ring_binary(tmp_path_factory) -> str:
    """The image's C kernel, built here with the host's mpicc."""
    mpicc = shutil.which("mpicc")
    if mpicc is None:
        pytest.skip("no mpicc on this host (apt-get install libopenmpi-dev)")
    out = tmp_path_factory.mktemp("kernels") / "nowlab-ring"
    subprocess.run([mpicc, "-O2", "-o", str(out), str(RING_C)], check=True, capture_output=True, text=True)
    return str(out)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """One 4-workstation local cluster (its resident pool) for the module's runs."""
    from testbed import lifecycle
    from testbed.backends.local import LocalBackend, local_spec

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NOWLAB_HOME", str(tmp_path_factory.mktemp("home")))
        with lifecycle.cluster(local_spec(4), backend=LocalBackend()) as here:
            here.job_launcher()  # the pool up before any timing
            yield here


def rigid(name: str, argv: list[str], runtime_s: float) -> JobClass:
    return JobClass(name, tuple(argv), RuntimeModel(runtime_s), rigid=True)


def run(cluster, arrivals, policy="FCFS"):
    return LiveExecutor(arrivals, policy, cluster.job_launcher(), cluster.workstations, cluster.controller_address,
                        run_timeout_s=60, connect_timeout_s=30, job_timeout_s=30,
                        allowed_networks=[cluster.control_network]).run()


def report(state) -> dict:
    return json.loads(state.report["stdout"].strip().splitlines()[-1])


@pytest.mark.parametrize("p", [1, 2, 4])
def test_a_c_binary_and_an_mpi4py_job_run_rigid_on_exactly_their_size(cluster, ring_binary, p):
    c_job = rigid("ring.c", [ring_binary, "0.2", "8"], 0.5)
    py_job = rigid("ring.py", ["python3", "-m", "workloads.rigid", "--work", "0.2", "--iterations", "8"], 0.5)
    arrivals = [Arrival(0, c_job, 0.0, size=p), Arrival(1, py_job, 0.0, size=p)]
    result = run(cluster, arrivals)
    assert audit(result, arrivals) == []
    by_id = {s.id: s for s in result.states}
    assert by_id[0].launch_via == "mpiexec" and by_id[1].launch_via == "pool"
    for s in result.states:
        assert s.status == Outcome.DONE and s.launches == 1
        assert 0 <= s.launch_s < 10, s.launch_s  # measured from its start line, on one clock
        got = report(s)
        assert got["ranks"] == p and got["token"] == p * 8  # every rank passed the token every step
    assert [len(r.hosts) for r in result.runs] == [p, p]
    frame = result.to_dataframe()
    assert (frame.final_state == FinalState.COMPLETED_SUCCESSFULLY).all() and frame.launch_s.notna().all()


def test_a_mixed_stream_under_easy_keeps_every_rule(cluster, ring_binary):
    """Rigid jobs of both launch paths and malleable jobs in one stream under EASY: the audit (which
    replays EASY's every decision from the recorded states) finds nothing."""
    wide = rigid("wide", ["python3", "-m", "workloads.rigid", "--sleep", "1.0"], 1.0)
    c_job = rigid("ring.c", [ring_binary, "0.1", "4"], 0.3)
    arrivals = [Arrival(0, wide, 0.0, size=3, walltime_s=5.0), Arrival(1, SHORT, 0.1),
                Arrival(2, c_job, 0.2, size=4, walltime_s=5.0), Arrival(3, c_job, 0.3, size=1, walltime_s=3.0),
                Arrival(4, SHORT, 0.4)]
    result = run(cluster, arrivals, "EASY")
    assert audit(result, arrivals) == []
    frame = result.to_dataframe().set_index("job_id")
    assert (frame.status == "done").all()
    # the 4-wide job waits for the 3-wide one; the 1-wide one backfills beside it, not delaying it
    assert frame.starting_time[2] >= frame.finish_time[0] - 1e-6
    assert frame.starting_time[3] < frame.starting_time[2]


@pytest.mark.parametrize("via", ["pool", "mpiexec"])
def test_a_job_past_its_walltime_is_killed_and_recorded_so(cluster, ring_binary, via):
    argv = (["python3", "-m", "workloads.rigid", "--sleep", "30"] if via == "pool"
            else [ring_binary, "1000", "1000"])  # ~250 s of work at 2 ranks
    long = rigid("long", argv, 30.0)
    short = rigid("short", ["python3", "-m", "workloads.rigid", "--sleep", "0.1"], 0.1)
    arrivals = [Arrival(0, long, 0.0, size=2, walltime_s=1.0), Arrival(1, short, 0.0, size=2, walltime_s=5.0)]
    result = run(cluster, arrivals)
    assert audit(result, arrivals) == [] and check_rigid(result, arrivals) == []
    by_id = {s.id: s for s in result.states}
    assert by_id[0].status == Outcome.WALLTIME and by_id[0].killed and by_id[0].launch_via == via
    assert by_id[1].status == Outcome.DONE and not by_id[1].killed
    frame = result.to_dataframe().set_index("job_id")
    assert frame.final_state[0] == FinalState.COMPLETED_WALLTIME_REACHED and frame.success[0] == 0
    ran = frame.finish_time[0] - frame.starting_time[0]
    # stopped at start + walltime, its processors back soon after: mpiexec takes up to ~2 s to
    # reap its ranks after the signal (3.05 s once, on a quiet host)
    assert 1.0 <= ran < 4.0, ran
    assert not math.isnan(frame.requested_time[0]) and frame.requested_time[0] == 1.0


def test_a_users_mpi4py_script_runs_through_mpiexec_and_its_unknown_launch_stays_unknown(cluster, tmp_path):
    """A script, not a `python3 -m` module of the image: the pool cannot run it, mpiexec does; it prints
    no start line, so its launch cost is NaN, not a guess."""
    script = tmp_path / "users_job.py"
    script.write_text("from mpi4py import MPI\ncomm = MPI.COMM_WORLD\n"
                      "total = comm.allreduce(comm.Get_rank() + 1)\n"
                      "if comm.Get_rank() == 0:\n    print('sum', total, 'size', comm.Get_size())\n")
    arrivals = [Arrival("u", rigid("user", ["python3", str(script)], 0.5), 0.0, size=3)]
    result = run(cluster, arrivals)
    assert audit(result, arrivals) == []
    state = result.states[0]
    assert state.status == Outcome.DONE and state.launch_via == "mpiexec" and math.isnan(state.launch_s)
    assert "sum 6 size 3" in state.report["stdout"]
