"""The control server's gate (workloads/control_gate.py) under a flood and under garbage.

Real sockets on 127.0.0.1: silent connections beyond the gate's room are dropped oldest first,
so a job that answers still gets in; no answer but the HMAC of the nonce is let in.
"""
from __future__ import annotations

import queue
import socket
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workloads import channel_auth
from workloads.control_gate import Gate


class _Door:
    """A gate on a fresh loopback port and what it let in."""

    def __init__(self, max_pending: int = 256, timeout_s: float = 2.0) -> None:
        self.secret = channel_auth.new_secret()
        self.inside: "queue.Queue[tuple[socket.socket, bytes]]" = queue.Queue()
        listener = socket.create_server(("127.0.0.1", 0))
        self.port = listener.getsockname()[1]
        self.gate = Gate(listener, self.secret, lambda sock, rest: self.inside.put((sock, rest)),
                         max_pending=max_pending, timeout_s=timeout_s)

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=5)

    def join(self, secret: bytes | None = None) -> socket.socket:
        sock = self.connect()
        channel_auth.client_handshake(sock, secret or self.secret)
        return sock


@pytest.fixture(scope="module")
def door():
    d = _Door()
    yield d
    d.gate.close()


def _closed_on_us(sock: socket.socket) -> bool:
    """The server closed without a word (a reset too: it closes with our garbage unread)."""
    try:
        return sock.recv(256) == b""
    except ConnectionResetError:
        return True


def _wait_for(predicate, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.01)


def test_a_flood_of_silent_connections_does_not_shut_out_a_job():
    d = _Door(max_pending=8, timeout_s=5.0)
    try:
        flood = [d.connect() for _ in range(20)]
        _wait_for(lambda: d.gate.refusals.total == 12)  # room for 8: the 12 oldest were dropped
        job = d.join()  # drops one more silent peer, then answers at once
        sock, rest = d.inside.get(timeout=5)
        assert rest == b"" and d.gate.refusals.counts == {"dropped for a newer connection": 13}
        assert all(s.recv(256).startswith(channel_auth.GREETING) for s in flood)  # each got its challenge
        sock.close()
        job.close()
        for s in flood:
            s.close()
    finally:
        d.gate.close()


def test_silent_peers_expire_and_closing_the_gate_frees_the_port():
    d = _Door(timeout_s=0.3)
    silent = [d.connect() for _ in range(3)]
    _wait_for(lambda: d.gate.refusals.counts["no answer within the handshake timeout"] == 3, timeout_s=3)
    for s in silent:
        s.close()
    d.gate.close()
    with pytest.raises(OSError):
        d.connect()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(garbage=st.binary(max_size=300))
def test_no_answer_but_the_hmac_gets_in(door, garbage):
    before = door.gate.refusals.total
    with door.connect() as sock:
        sock.recv(256)
        sock.sendall(garbage + b"\n")
        assert _closed_on_us(sock)  # never "ok"
    _wait_for(lambda: door.gate.refusals.total == before + 1)
    assert door.inside.empty()


def test_the_right_answer_gets_in_beside_garbage(door):
    with door.connect() as intruder:
        intruder.recv(256)
        job = door.join()
        sock, _ = door.inside.get(timeout=5)
        assert sock.getpeername() == job.getsockname()
        sock.close()
        job.close()


def test_another_runs_secret_is_refused(door):
    before = door.gate.refusals.counts["wrong answer"]
    with pytest.raises(channel_auth.AuthError, match="refused"):
        door.join(channel_auth.new_secret())
    _wait_for(lambda: door.gate.refusals.counts["wrong answer"] == before + 1)
