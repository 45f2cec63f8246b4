"""A time-sharing manager (containers/agents/timeshare_manager.py) serves only holders of the cluster's secret.

Real managers on 127.0.0.1, real clients (experiments/studies/zhou_brent/manager_client.py, workloads/timeshare_checkin.py):
another secret, an answer made for another channel and a request without the handshake are
closed and counted, and none of them stops, registers or changes anything.
"""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from experiments.studies.zhou_brent.host import AGENT, manager_env
from experiments.studies.zhou_brent.manager_client import ManagerClient, ManagerUnreachable
from workloads import channel_auth
from workloads.timeshare_checkin import ENV, TimeshareRefused, check_in


@dataclass
class Manager:
    proc: subprocess.Popen
    port: int
    secret: bytes

    def client(self, secret: bytes | None = None) -> ManagerClient:
        return ManagerClient("127.0.0.1", self.port, timeout_s=2.0, secret=self.secret if secret is None else secret)


def start(secret: bytes, port: int = 0) -> Manager:
    proc = subprocess.Popen([sys.executable, str(AGENT), "--name", "ws1", "--host", "127.0.0.1", "--port", str(port),
                             "--nice", "19"], env=manager_env(secret), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    assert line.startswith("listening"), line + proc.stderr.read()
    return Manager(proc, int(line.split()[2]), secret)


def stop(m: Manager) -> str:
    """SIGTERM, wait; its stderr."""
    m.proc.terminate()
    m.proc.wait(timeout=10)
    err = m.proc.stderr.read()
    m.proc.stdout.close()
    m.proc.stderr.close()
    return err


@pytest.fixture
def manager() -> Iterator[Manager]:
    m = start(channel_auth.new_secret())
    try:
        yield m
    finally:
        if m.proc.poll() is None:
            stop(m)


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen]:
    p = subprocess.Popen(["sleep", "60"])
    yield p
    p.kill()
    p.wait(timeout=5)


def refused_soon(client: ManagerClient, count: int, timeout_s: float = 10.0):
    """The manager's status once it has counted `count` refusals, or after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while (status := client.status()).refused < count and time.monotonic() < deadline:
        time.sleep(0.05)
    return status


def state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def test_the_clusters_secret_is_served_and_another_is_refused_counted_and_logged(manager, sleeper):
    client = manager.client()
    assert client.checkin("A", sleeper.pid) == (sleeper.pid,)
    with pytest.raises(ManagerUnreachable, match="refused this answer"):
        manager.client(channel_auth.new_secret()).checkout("A", sleeper.pid)
    status = refused_soon(client, 1)  # the manager counts a refusal just after it closes the connection
    assert status.refused == 1 and status.jobs == {"A": (sleeper.pid,)}  # the refused check-out changed nothing
    client.close()
    assert "timeshare manager ws1: timeshare manager: refused 127.0.0.1 port" in stop(manager)


def test_an_answer_made_for_the_control_channel_is_no_good_here(manager):
    with socket.create_connection(("127.0.0.1", manager.port), timeout=2) as sock:
        with pytest.raises(channel_auth.Refused):
            channel_auth.client_handshake(sock, manager.secret, channel=channel_auth.CONTROL)
    assert refused_soon(manager.client(), 1).refused == 1


def test_a_request_without_the_handshake_is_closed_unanswered_and_stops_nothing(manager, sleeper):
    table = {"op": "table", "round_s": 0.2, "slots": [{"job": None, "parallel_s": 0, "sequential_s": 0.2}]}
    for request in ({"op": "checkin", "job": "A", "pid": sleeper.pid}, table):
        with socket.create_connection(("127.0.0.1", manager.port), timeout=5) as sock:
            sock.sendall((json.dumps(request) + "\n").encode())
            received = b""
            while chunk := sock.recv(4096):  # the challenge, then the close: no reply
                received += chunk
        assert received.startswith(channel_auth.GREETING) and received.count(b"\n") == 1
    status = refused_soon(manager.client(), 2)
    assert status.refused == 2 and status.jobs == {} and status.round_s is None
    assert state(sleeper.pid) != "T"


def test_a_rank_with_another_secret_is_refused_not_left_unmanaged(manager):
    env = {ENV: f"ws1=127.0.0.1:{manager.port}",
           **channel_auth.secret_env(channel_auth.new_secret(), channel_auth.TIMESHARE.secret_env)}
    with pytest.raises(TimeshareRefused, match=f"^timeshare manager at 127.0.0.1:{manager.port}: the server refused"):
        check_in("A", "ws1", environ=env)
    assert manager.client().status().jobs == {}


def test_a_kept_connection_to_a_manager_that_was_restarted_is_replaced_unseen(manager):
    client = manager.client()
    assert client.status().refused == 0  # the connection is kept from here on
    stop(manager)
    again = start(manager.secret, manager.port)
    try:
        assert client.status().workstation == "ws1"
    finally:
        client.close()
        stop(again)


def test_the_manager_will_not_start_without_the_secret():
    env = manager_env(channel_auth.new_secret())
    del env[channel_auth.CLUSTER_SECRET_ENV]
    done = subprocess.run([sys.executable, str(AGENT), "--name", "ws1", "--host", "127.0.0.1", "--port", "0"],
                          env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and done.stdout == ""
    assert f"{channel_auth.CLUSTER_SECRET_ENV} is not set" in done.stderr.splitlines()[-1]


def test_a_slow_answer_does_not_hold_up_the_next_client(manager):
    """The handshakes run in the gate's one thread with a selector: a peer that says nothing
    costs a socket, not the manager's attention."""
    silent = [socket.create_connection(("127.0.0.1", manager.port), timeout=2) for _ in range(20)]
    try:
        t0 = time.monotonic()
        assert manager.client().status().workstation == "ws1"
        assert time.monotonic() - t0 < 1.0
    finally:
        for s in silent:
            s.close()
