"""The pool launcher's bookkeeping without MPI: a launch that cannot reach its ranks."""
from __future__ import annotations

import socket

from workloads.pool_client import LOST, PoolLauncher, PoolRank

HELLO = ["python3", "-m", "workloads.hello"]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens once it is closed


def test_a_launch_on_a_workstation_gone_with_its_world_fails_like_mpiexec_would():
    dead = PoolRank("ws2", 0, 1, ("127.0.0.1", closed_port()))
    renewed: list[int] = []

    def renew():
        renewed.append(1)
        return []  # the new world spans the running workstations: ws2 is not one

    launcher = PoolLauncher([dead], renew=renew, connect_timeout_s=1.0, busy_wait_s=0.0)
    handle = launcher.mpirun_popen(["ws2"], HELLO)
    assert renewed == [1]
    assert handle.poll() == LOST
    res = handle.wait(1)
    assert res.exit_code == LOST and "ws2: no pool rank in the new world" in res.stderr


def test_without_a_way_to_renew_the_launch_fails_and_the_slot_is_free_again():
    dead = PoolRank("ws1", 0, 0, ("127.0.0.1", closed_port()))
    launcher = PoolLauncher([dead], connect_timeout_s=1.0, busy_wait_s=0.0)
    for _ in range(2):  # the failed launch released its slot: the second one is not refused as busy
        res = launcher.mpirun_popen(["ws1"], HELLO).wait(1)
        assert res.exit_code == LOST and "does not answer" in res.stderr
