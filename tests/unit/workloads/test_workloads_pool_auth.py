"""The resident pool serves only a host that holds the cluster's secret (workloads/channel_auth.py, channel POOL).

First without MPI: the host side (ping, PoolLauncher) against the pool's real gate
(workloads/control_gate.py) standing in for a rank. Then a real local pool on this host's
Open MPI: a client with another secret and one that skips the handshake are closed, counted
and never served; the host with the right secret is.
"""
from __future__ import annotations

import queue
import socket
import threading
import time

import pytest

from workloads import channel_auth
from workloads.control_gate import Gate
from workloads.host.launch import LocalLauncher
from workloads.host.pool_client import CANCELLED, PoolLauncher, PoolRank, ping
from workloads.host.pool_local import local_pool
from workloads.wire import pool as pool_wire

HELLO = ["python3", "-m", "workloads.hello"]


class GatedRank:
    """A stand-in rank: the pool's gate on 127.0.0.1, answering ping with a pong and recording every message."""

    def __init__(self, secret: bytes) -> None:
        self.secret = secret
        self.messages: list[dict] = []
        self._admitted: queue.SimpleQueue = queue.SimpleQueue()
        listener = socket.create_server(("127.0.0.1", 0))
        self.address = listener.getsockname()[:2]
        self.gate = Gate(listener, secret, lambda sock, rest: self._admitted.put((sock, rest)),
                         channel=channel_auth.POOL, timeout_s=2.0)
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            sock, rest = self._admitted.get()
            if sock is None:
                return
            with sock:
                message = pool_wire.Lines(sock, rest).read()
                if message is None:
                    continue
                self.messages.append(message)
                if message["type"] == "ping":
                    sock.sendall(pool_wire.encode({"type": "pong", "rank": 0, "size": 1, "host": "ws1", "slot": 0,
                                                   "jobs_run": 0, "refused": self.gate.refusals.total}))

    def close(self) -> None:
        self._admitted.put((None, b""))
        self.gate.close()


@pytest.fixture
def rank():
    r = GatedRank(channel_auth.new_secret())
    yield r
    r.close()


def wait_for(predicate, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_the_right_secret_is_served_another_is_refused_and_counted(rank):
    assert ping(rank.address, rank.secret)["type"] == "pong"
    with pytest.raises(channel_auth.Refused, match="NOWLAB_CLUSTER_SECRET the cluster's"):
        ping(rank.address, channel_auth.new_secret())
    wait_for(lambda: rank.gate.refusals.counts["wrong answer"] == 1)
    assert [m["type"] for m in rank.messages] == ["ping"]  # the refused ping never reached the rank


def test_an_answer_for_the_control_channel_is_no_good_on_the_pool(rank):
    """Same secret, other channel: the context string keeps the answers apart."""
    with socket.create_connection(rank.address, timeout=2) as sock:
        with pytest.raises(channel_auth.Refused):
            channel_auth.client_handshake(sock, rank.secret, channel=channel_auth.CONTROL)
    wait_for(lambda: rank.gate.refusals.counts["wrong answer"] == 1)


def test_a_run_line_without_the_handshake_is_never_read_as_a_message(rank):
    run = pool_wire.encode({"type": "run", "argv": ["workloads.hello"], "env": {}, "members": [0], "tag": 1})
    with socket.create_connection(rank.address, timeout=2) as sock:
        sock.sendall(run)
        received = b""
        while chunk := sock.recv(4096):  # the challenge, then the close
            received += chunk
    assert received.startswith(channel_auth.GREETING) and received.count(b"\n") == 1
    wait_for(lambda: rank.gate.refusals.counts["answer is not hex"] == 1)
    assert rank.messages == []


def test_a_launch_with_another_secret_fails_the_job_and_sends_no_run_line(rank):
    launcher = PoolLauncher([PoolRank("ws1", 0, 0, rank.address)], secret=channel_auth.new_secret(),
                            connect_timeout_s=1.0, busy_wait_s=0.0)
    for _ in range(2):  # the failed launch released its slot: the second is not refused as busy
        res = launcher.mpirun_popen(["ws1"], HELLO).wait(5)
        assert res.exit_code == 1
        assert "[ws1] ws1: pool handshake failed: the server refused this answer" in res.stderr
    assert rank.messages == []


def test_a_launch_terminated_while_a_rank_has_not_sent_its_challenge_is_cancelled_at_once():
    """A rank frozen by its owner accepts (the kernel does) but says nothing: the launch waits for it
    without a deadline, as its run line used to, and terminate() still ends it."""
    silent = socket.create_server(("127.0.0.1", 0))
    try:
        launcher = PoolLauncher([PoolRank("ws1", 0, 0, silent.getsockname()[:2])], secret=channel_auth.new_secret(),
                                connect_timeout_s=1.0, busy_wait_s=0.0)
        handle = launcher.mpirun_popen(["ws1"], HELLO)
        time.sleep(0.2)
        assert handle.poll() is None
        handle.terminate()
        res = handle.wait(2)
        assert res.exit_code == CANCELLED and handle.codes == [CANCELLED]
    finally:
        silent.close()


# --- a real pool on this host's Open MPI ----------------------------------------------------

@pytest.fixture(scope="module")
def pool():
    with local_pool(1, port_base=19790 + (time.time_ns() // 1000) % 1000 * 8) as launcher:
        yield launcher


def address_of(pool: PoolLauncher) -> tuple[str, int]:
    return pool.ranks["ws1"][0].address


@pytest.mark.host_mpi
def test_a_local_pool_rank_refuses_another_secret_and_a_skipped_handshake_and_serves_its_own(pool):
    address = address_of(pool)
    before = ping(address, pool.secret)
    with pytest.raises(channel_auth.Refused):
        ping(address, channel_auth.new_secret())
    run = pool_wire.encode({"type": "run", "argv": ["workloads.hello"], "env": {}, "members": [before["rank"]],
                            "tag": 7})
    with socket.create_connection(address, timeout=5) as sock:  # no handshake: straight to a run line
        sock.sendall(run)
        received = b""
        while chunk := sock.recv(4096):
            received += chunk
    assert received.startswith(channel_auth.GREETING) and b"started" not in received
    after = ping(address, pool.secret)
    assert after["refused"] == before["refused"] + 2
    assert after["jobs_run"] == before["jobs_run"]  # the unauthenticated run line ran nothing
    res = pool.mpirun_popen(["ws1"], HELLO).wait(60)
    assert res.exit_code == 0 and "hello from 1 ranks" in res.stdout
    assert ping(address, pool.secret)["jobs_run"] == before["jobs_run"] + 1


@pytest.mark.host_mpi
def test_a_pool_rank_will_not_start_without_the_clusters_secret():
    handle = LocalLauncher().mpirun_popen(["ws1"], ["python3", "-m", "workloads.pool"],
                                          env={pool_wire.PORT_ENV: "19789", pool_wire.BIND_ENV: "127.0.0.1",
                                               channel_auth.CLUSTER_SECRET_ENV: ""})
    res = handle.wait(60)
    assert res.exit_code != 0
    assert f"{channel_auth.CLUSTER_SECRET_ENV} is not set" in res.stderr
