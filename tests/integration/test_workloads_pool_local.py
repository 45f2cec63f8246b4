"""The resident pool (workloads/pool.py) with the host's own Open MPI: real ranks, real sub-communicators.

Quick checks of what the cluster test (test_testbed_pool_live.py) exercises on containers: jobs
start as `run` lines, a failed rank cancels its peers and leaves the pool usable, and a
malleable job resized through the pool gives the unpreempted answer.
"""
from __future__ import annotations

import time

import numpy as np
import pytest

from workloads.host.control_server import ControlServer
from workloads.host.malleable import MalleableJob
from workloads.host.pool_client import CANCELLED
from workloads.host.pool_local import local_pool

pytestmark = pytest.mark.host_mpi  # real jobs on this host's Open MPI

HELLO = ["python3", "-m", "workloads.hello"]


@pytest.fixture(scope="module")
def pool():
    with local_pool(3, port_base=17790 + (time.time_ns() // 1000) % 1000 * 8) as launcher:
        yield launcher


def test_jobs_on_disjoint_ranks_run_at_the_same_time(pool):
    a = pool.mpirun_popen(["ws1", "ws2"], HELLO)
    b = pool.mpirun_popen(["ws3"], HELLO)
    ra, rb = a.wait(60), b.wait(60)
    assert (ra.exit_code, rb.exit_code) == (0, 0), ra.stderr + rb.stderr
    assert "hello from 2 ranks" in ra.stdout and "hello from 1 ranks" in rb.stdout


def test_a_busy_rank_is_refused_and_bad_argv_names_the_field(pool, monkeypatch):
    monkeypatch.setattr(pool, "busy_wait_s", 0.0)  # refuse at once, not after waiting for the slot
    long = pool.mpirun_popen(["ws1"], ["python3", "-m", "workloads.synthetic", "--job", f"busy{time.time_ns()}",
                                       "--hosts", "ws1", "--phases", "3", "--mults", "2000000"])
    with pytest.raises(RuntimeError, match="ws1: all 1 pool slots are busy"):
        pool.mpirun_popen(["ws1"], HELLO)
    assert long.wait(60).exit_code == 0
    with pytest.raises(ValueError, match="hosts: ws9 has no pool rank"):
        pool.mpirun_popen(["ws9"], HELLO)


def test_a_failed_rank_cancels_its_peers_and_the_pool_stays_usable(pool):
    failed = pool.mpirun_popen(["ws1", "ws2", "ws3"], [*HELLO, "--fail-rank", "1"])
    res = failed.wait(60)
    assert res.exit_code == 1
    assert failed.codes[1] == 1 and failed.codes[0] == failed.codes[2] == CANCELLED
    assert "rank 1 fails, as asked" in res.stderr
    again = pool.mpirun_popen(["ws1", "ws2", "ws3"], HELLO).wait(60)
    assert again.exit_code == 0 and "hello from 3 ranks" in again.stdout


def test_terminate_cancels_a_running_job(pool):
    handle = pool.mpirun_popen(["ws1", "ws2"], ["python3", "-m", "workloads.synthetic", "--job", f"t{time.time_ns()}",
                                                "--hosts", "ws1,ws2", "--phases", "100000", "--mults", "1000"])
    time.sleep(1.0)
    assert handle.poll() is None
    handle.terminate()
    assert handle.wait(30).exit_code == CANCELLED
    assert pool.mpirun_popen(["ws1", "ws2"], HELLO).wait(60).exit_code == 0


def test_cg_resized_through_the_pool_matches_the_unpreempted_run(pool):
    prog = ["python3", "-m", "workloads.cg", "--n", "120", "--iterations", "60", "--print-x"]
    with ControlServer(bind_host="127.0.0.1") as server:
        ref = MalleableJob(pool, server, f"pref{time.time_ns()}", prog, ["ws1"], "127.0.0.1", timeout_s=60)
        ref.start()
        x_ref = np.array(ref.wait().result["x"])
        job = MalleableJob(pool, server, f"pres{time.time_ns()}", prog, ["ws1", "ws2", "ws3"], "127.0.0.1",
                           timeout_s=60)
        job.start()
        shrink, grow = job.resize(["ws1", "ws2"]), job.resize(["ws1", "ws2", "ws3"])
        record = job.wait()
    assert (shrink.kind, grow.kind) == ("loser", "winner")
    assert record.result["iterations"] == 60
    assert np.max(np.abs(np.array(record.result["x"]) - x_ref)) < 1e-10
    # each run reports its ranks' CPU time over its own iterations, the kernel's a part of it
    cpu = {k: record.result[k] for k in ("cpu_s_mean", "cpu_s_max", "matvec_cpu_s_mean", "matvec_cpu_s_max")}
    assert 0 < cpu["matvec_cpu_s_mean"] <= cpu["matvec_cpu_s_max"] <= cpu["cpu_s_max"], cpu
    assert cpu["matvec_cpu_s_mean"] <= cpu["cpu_s_mean"] <= cpu["cpu_s_max"], cpu


def test_a_program_that_is_not_a_module_goes_to_the_fallback(pool):
    res = pool.mpirun_popen(["ws1"], ["python3", "-c", "print('plain mpiexec')"]).wait(60)
    assert res.exit_code == 0 and "plain mpiexec" in res.stdout


def test_a_rank_takes_its_workloads_name_while_it_runs_it(pool):
    import subprocess
    handle = pool.mpirun_popen(["ws1"], ["python3", "-m", "workloads.synthetic", "--job", f"n{time.time_ns()}",
                                         "--hosts", "ws1", "--phases", "100000", "--mults", "1000"])
    try:
        deadline = time.monotonic() + 20
        while subprocess.run(["pgrep", "-x", "synthetic"], capture_output=True).returncode != 0:
            assert time.monotonic() < deadline, "no process named synthetic while the job runs"
            time.sleep(0.1)
    finally:
        handle.terminate()
    assert handle.wait(30).exit_code == CANCELLED
    assert subprocess.run(["pgrep", "-x", "synthetic"], capture_output=True).returncode != 0


def test_a_launch_waits_a_moment_for_a_slot_its_last_job_is_still_releasing(pool):
    first = pool.mpirun_popen(["ws1"], ["python3", "-m", "workloads.synthetic", "--job", f"w{time.time_ns()}",
                                        "--hosts", "ws1", "--phases", "2", "--mults", "2000000"])
    second = pool.mpirun_popen(["ws1"], HELLO)  # waits until `first` has reported, then runs
    assert first.poll() is not None
    assert second.wait(60).exit_code == 0


def test_a_pool_on_this_host_listens_on_the_loopback_only(pool):
    """Its ranks run any `python3 -m` they are sent: on the host they must not face the network."""
    import subprocess
    ports = {r.address[1] for ranks in pool.ranks.values() for r in ranks}
    listening = subprocess.run(["ss", "-Hltn"], capture_output=True, text=True, check=True).stdout.split("\n")
    local = {line.split()[3] for line in listening if line.strip()}
    mine = {a for a in local if int(a.rsplit(":", 1)[1]) in ports}
    assert mine == {f"127.0.0.1:{p}" for p in ports}
