"""A rank's check-in with its time-sharing manager (workloads/timeshare_checkin.py): the address and the real wire."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from experiments.studies.zhou_brent.host import AGENT, ROOT, manager_env
from experiments.studies.zhou_brent.manager_client import ManagerClient
from workloads import channel_auth
from workloads.timeshare_checkin import ENV, TimeshareAddressError, TimeshareSecretError, check_in, manager_address

SECRET = channel_auth.new_secret()
SECRET_ENV = channel_auth.secret_env(SECRET, channel_auth.TIMESHARE.secret_env)


def test_the_address_is_one_for_every_rank_or_the_one_of_the_ranks_workstation():
    assert manager_address(None, "ws1") is None and manager_address("  ", "ws1") is None
    assert manager_address("10.0.0.2:7717", "ws9") == ("10.0.0.2", 7717)
    value = "ws1=127.0.0.1:4001, ws2=127.0.0.1:4002"
    assert manager_address(value, "ws2") == ("127.0.0.1", 4002)


@pytest.mark.parametrize("value, message", [
    ("127.0.0.1", f"{ENV}: address: expected HOST:PORT, got '127.0.0.1'"),
    ("host:99999", f"{ENV}: address: expected HOST:PORT, got 'host:99999'"),
    ("ws1=127.0.0.1:1,=127.0.0.1:2", f"{ENV}: entry 1: expected WORKSTATION=HOST:PORT, got '=127.0.0.1:2'"),
    ("ws1=127.0.0.1:x", f"{ENV}: entry 0 (ws1): expected HOST:PORT, got '127.0.0.1:x'"),
    ("ws2=127.0.0.1:1,ws3=127.0.0.1:2", f"{ENV}: no manager for workstation ws1 (given: ws2, ws3)"),
])
def test_a_bad_address_is_one_line_naming_the_part(value, message):
    with pytest.raises(TimeshareAddressError) as err:
        manager_address(value, "ws1")
    assert str(err.value) == message


def test_without_the_variable_nothing_is_sent_and_without_a_manager_the_rank_runs_unmanaged(capsys):
    assert check_in("A", "ws1", environ={}) is None
    assert check_in("A", "ws1", environ={ENV: "127.0.0.1:9", **SECRET_ENV}) is None  # the discard port: nobody listens
    assert "running unmanaged" in capsys.readouterr().err


@pytest.mark.parametrize("value, message", [
    (None, f"{channel_auth.CLUSTER_SECRET_ENV}: not set, and the manager at 127.0.0.1:9 ({ENV}) serves only "
           f"holders of the cluster's secret"),
    ("zz", f"{channel_auth.CLUSTER_SECRET_ENV}: not hex"),
])
def test_time_sharing_without_the_clusters_secret_is_one_line_naming_it(value, message):
    env = {ENV: "127.0.0.1:9"} | ({} if value is None else {channel_auth.CLUSTER_SECRET_ENV: value})
    with pytest.raises(TimeshareSecretError) as err:
        check_in("A", "ws1", environ=env)
    assert str(err.value) == message


RANK = textwrap.dedent("""
    import sys
    from workloads.timeshare_checkin import TimeshareRefused, check_in
    reg = check_in("A", "ws1")
    print("in", flush=True)
    sys.stdin.readline()
    try:
        check_in("A", "ws1")
    except TimeshareRefused as exc:
        print("refused", exc, flush=True)
    reg.check_out()
    print("out", flush=True)
    sys.stdin.readline()
""")


def test_a_rank_checks_in_and_out_with_a_real_manager():
    manager = subprocess.Popen([sys.executable, str(AGENT), "--name", "ws1", "--host", "127.0.0.1", "--port", "0",
                                "--nice", "19"], env=manager_env(SECRET), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    rank = None
    try:
        port = int(manager.stdout.readline().split()[2])
        client = ManagerClient("127.0.0.1", port, timeout_s=1.0, secret=SECRET)
        rank = subprocess.Popen([sys.executable, "-c", RANK], cwd=ROOT, text=True, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE,
                                env={"PYTHONPATH": str(ROOT), ENV: f"ws1=127.0.0.1:{port}", **SECRET_ENV})
        assert rank.stdout.readline() == "in\n"
        assert client.status().jobs == {"A": (rank.pid,)}
        rank.stdin.write("\n")
        rank.stdin.flush()
        assert rank.stdout.readline() == f"refused timeshare manager at 127.0.0.1:{port}: pid: {rank.pid} " \
                                         f"is already checked in (job A)\n"
        assert rank.stdout.readline() == "out\n"
        assert client.status().jobs == {}
    finally:
        if rank is not None:
            rank.kill()
            rank.wait(timeout=5)
        manager.terminate()
        manager.wait(timeout=5)
