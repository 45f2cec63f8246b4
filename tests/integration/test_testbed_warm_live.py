"""Integration: the warm launch path (ssh masters and zygotes, testbed/warm.py) on the live cluster.

The CG 4->2->3 resize that must match the unpreempted run to 1e-10 goes through this
path too (tests/integration/test_workloads_live.py): `Cluster.mpi_argv` is warm by default.
"""
from __future__ import annotations

import time

import pytest

from testbed.warm import MUX_PATH, wait_warm

pytestmark = pytest.mark.integration
TRACE = {"NOWLAB_ZYGOTE_TRACE": "1"}


def zygote_processes(cluster, ws: str) -> int:
    ps = cluster.exec(ws, ["ps", "-eo", "args"]).check("ps")
    return sum(1 for line in ps.stdout.splitlines() if "workloads.zygote " in line + " "
               and "zygote_client" not in line)


def test_every_workstation_gets_warm_and_ssh_goes_through_the_masters(live_cluster):
    wait_warm(live_cluster, timeout=60)
    check = live_cluster.exec("ws1", ["ssh", "-o", f"ControlPath={MUX_PATH}", "-O", "check", "ws4"])
    assert check.ok, check.stderr


def test_ranks_fork_from_the_zygotes_and_the_cold_path_still_works(live_cluster):
    wait_warm(live_cluster, timeout=60)
    hosts = ["ws1", "ws2", "ws3"]
    warm = live_cluster.exec("ws1", live_cluster.mpi_argv(hosts, ["python3", "-m", "workloads.hello"], env=TRACE),
                             timeout=60)
    assert warm.ok, warm.stderr[-2000:]
    assert "hello from 3 ranks" in warm.stdout
    stages = [line.split()[1] for line in warm.stderr.splitlines() if line.startswith("NOWLAB_TRACE")]
    assert stages.count("forked") == 3 and stages.count("MPI_Init") == 3
    cold = live_cluster.exec("ws1", live_cluster.mpi_argv(hosts, ["python3", "-m", "workloads.hello"], env=TRACE,
                                                          fast=False), timeout=60)
    assert cold.ok and "hello from 3 ranks" in cold.stdout
    assert "NOWLAB_TRACE" not in cold.stderr  # python3 -m directly: no zygote involved


def test_a_terminated_launch_leaves_no_rank_behind_in_the_zygote(live_cluster):
    wait_warm(live_cluster, timeout=60)
    hosts = ["ws1", "ws2"]
    before = {ws: zygote_processes(live_cluster, ws) for ws in hosts}
    assert before == {"ws1": 1, "ws2": 1}
    handle = live_cluster.mpirun_popen(hosts, ["python3", "-m", "workloads.synthetic", "--job", f"kill-{time.time_ns()}",
                                               "--hosts", ",".join(hosts), "--phases", "1000", "--mults", "3000000"])
    deadline = time.monotonic() + 30
    while any(zygote_processes(live_cluster, ws) < 2 for ws in hosts):  # each rank is a zygote child
        assert time.monotonic() < deadline, "the ranks never started"
        time.sleep(0.2)
    handle.terminate()
    handle.wait(30)
    deadline = time.monotonic() + 15
    while {ws: zygote_processes(live_cluster, ws) for ws in hosts} != before:
        assert time.monotonic() < deadline, "a rank outlived its launch"
        time.sleep(0.2)
