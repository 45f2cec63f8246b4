"""Integration: the resident MPI world (testbed/pool.py, workloads/pool.py) on the live cluster.

The CG 4->2->3 resize that must match the unpreempted run to 1e-10 runs through the
pool in tests/integration/test_workloads_live.py, and the live executor's tests launch on it too.
"""
from __future__ import annotations

import json
import time

import pytest

from testbed import pool
from workloads.host.pool_client import CANCELLED
from workloads.wire.control import RESULT_PREFIX

pytestmark = pytest.mark.integration


def synthetic(hosts: list[str]) -> list[str]:
    return ["python3", "-m", "workloads.synthetic", "--job", f"pool-{time.time_ns()}", "--hosts", ",".join(hosts),
            "--phases", "2", "--mults", "100000", "--redist-bytes", "65536"]


def result_line(stdout: str) -> dict:
    return json.loads(next(line for line in stdout.splitlines() if line.startswith(RESULT_PREFIX))[len(RESULT_PREFIX):])


def test_the_world_started_at_up_has_one_rank_per_workstation_in_order(live_cluster):
    ranks = pool.ensure(live_cluster)
    assert [(r.host, r.slot, r.rank) for r in ranks] == [(ws, 0, i) for i, ws in enumerate(live_cluster.workstations)]


def test_a_job_runs_in_the_containers_it_was_given_in_rank_order(live_cluster):
    hosts = ["ws2", "ws4"]
    res = live_cluster.job_launcher().mpirun_popen(hosts, synthetic(hosts)).wait(60)
    assert res.exit_code == 0, res.stderr
    line = result_line(res.stdout)
    assert line["placement"] == hosts and line["data_intact"] and line["phases_done"] == 2


def test_a_failed_rank_cancels_its_peers_and_the_next_job_runs(live_cluster):
    launcher = live_cluster.job_launcher()
    failed = launcher.mpirun_popen(["ws1", "ws2", "ws3"], ["python3", "-m", "workloads.hello", "--fail-rank", "2"])
    assert failed.wait(60).exit_code == 1
    assert failed.codes == [CANCELLED, CANCELLED, 1]
    again = launcher.mpirun_popen(["ws1", "ws2", "ws3"], ["python3", "-m", "workloads.hello"]).wait(60)
    assert again.exit_code == 0 and "hello from 3 ranks" in again.stdout


def test_a_rank_that_died_is_replaced_at_the_next_launch_that_needs_it(live_cluster):
    """With Open MPI's recovery on, the world outlives a dead rank (so a dead workstation
    fails only its own jobs); a launch that needs the dead rank starts a new world."""
    launcher = live_cluster.job_launcher()
    live_cluster.control("ws3").run(["pkill", "-KILL", "-f", pool.MARK])
    others = launcher.mpirun_popen(["ws1", "ws2"], synthetic(["ws1", "ws2"])).wait(60)
    assert others.exit_code == 0, others.stderr  # the rest of the world still works
    res = launcher.mpirun_popen(["ws1", "ws3"], synthetic(["ws1", "ws3"])).wait(120)
    assert res.exit_code == 0, res.stderr
    assert sorted(launcher.ranks) == sorted(live_cluster.workstations)


def test_the_world_serves_only_the_clusters_secret_and_no_command_line_shows_it(live_cluster):
    """The cluster's secret (testbed/cluster_secret.py) guards the pool: another secret is refused
    and counted, and neither `ps` in a workstation nor the host's state shows more than the file."""
    import stat

    from testbed import cluster_secret, state
    from workloads import channel_auth
    from workloads.host.pool_client import ping

    ranks = pool.ensure(live_cluster)
    secret = live_cluster.secret
    path = cluster_secret.path(state.cluster_dir(live_cluster.name))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    before = ping(ranks[0].address, secret)
    with pytest.raises(channel_auth.Refused):
        ping(ranks[0].address, channel_auth.new_secret())
    assert ping(ranks[0].address, secret)["refused"] == before["refused"] + 1
    for ws in live_cluster.workstations:
        args = live_cluster.exec(ws, ["ps", "-eo", "args"]).stdout
        assert "workloads.pool" in args and secret.hex() not in args
