"""The wait knob (workloads/polite.py, runtime --wait): a polite wait sleeps between tests, a spinning one burns its core.

Zhou & Brent §1: a rank that spins while its partner is not running wastes its slot; that is
why coscheduling matters. On the host's Open MPI: rank 1 holds its message back 0.2 s and rank 0
waits for it, in each mode; rank 0 reports the CPU it used meanwhile (under 0.2 s of spinning).
"""
from __future__ import annotations

import json
import os
import subprocess
import textwrap

import pytest

from workloads.host.launch import LocalLauncher

pytestmark = pytest.mark.host_mpi  # real MPI on this host's Open MPI

HOLD_S = 0.2
EXCHANGE = textwrap.dedent(f"""
    import argparse, json, sys, time
    import numpy as np
    from mpi4py import MPI
    from workloads import polite, runtime
    parser = argparse.ArgumentParser()
    runtime.add_job_arguments(parser)
    args = parser.parse_args(["--job", "wait", "--hosts", "ws1,ws2", "--wait", sys.argv[1]])
    comm = MPI.COMM_WORLD
    job = runtime.Malleable(comm, runtime.config_from_args(args))
    buf = np.zeros(1)
    polite.barrier(comm)
    if comm.Get_rank() == 1:
        time.sleep({HOLD_S})
        polite.wait(comm.Isend(np.ones(1), dest=0))
    else:
        cpu0, wall0 = time.process_time(), time.perf_counter()
        polite.wait(comm.Irecv(buf, source=1))
        print(json.dumps({{"mode": polite.wait_mode().value, "cpu_s": time.process_time() - cpu0,
                          "wall_s": time.perf_counter() - wall0, "got": float(buf[0])}}), flush=True)
""")


def exchange(mode: str) -> dict:
    done = LocalLauncher().mpirun_popen(["ws1", "ws2"], ["python3", "-c", EXCHANGE, mode]).wait(60)
    assert done.exit_code == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_spinning_wait_burns_the_cpu_a_polite_one_leaves():
    polite, spin = exchange("polite"), exchange("spin")
    print(f"waiting {HOLD_S} s for a message: polite {polite}, spin {spin}")
    assert (polite["mode"], spin["mode"]) == ("polite", "spin")
    assert polite["got"] == spin["got"] == 1.0
    assert polite["wall_s"] >= HOLD_S * 0.8 and spin["wall_s"] >= HOLD_S * 0.8
    # polite: a Test() and a 0.2 ms sleep, a small part of the wait; spin: as much of a core as it is given
    assert polite["cpu_s"] < 0.5 * polite["wall_s"]
    assert spin["cpu_s"] > 3 * polite["cpu_s"]


def test_a_bad_wait_mode_is_refused_by_the_workload_and_by_polite():
    launcher = LocalLauncher()
    bad = subprocess.run([launcher.python, "-m", "workloads.cg", "--job", "j", "--hosts", "ws1", "--wait", "busy"],
                         cwd=launcher.repo_root, env={**os.environ, "PYTHONPATH": str(launcher.repo_root)}, capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == 2 and "--wait: invalid choice: 'busy'" in bad.stderr
    direct = subprocess.run([launcher.python, "-c", "from workloads import polite; polite.set_wait_mode('busy')"],
                            cwd=launcher.repo_root, env={**os.environ, "PYTHONPATH": str(launcher.repo_root)}, capture_output=True,
                            text=True, timeout=60)
    assert direct.stderr.strip().splitlines()[-1] == "ValueError: wait: unknown mode 'busy' (known: polite, spin)"
