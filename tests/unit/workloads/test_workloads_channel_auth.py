"""The control channel lets in only the run's jobs: the secret's HMAC, the allow-list, the timeout.

Real sockets on 127.0.0.1, the real server and client; an intruder is a plain socket that
speaks the protocol with a wrong secret (or says nothing, or is outside the networks).
"""
from __future__ import annotations

import logging
import socket
import time

import pytest

from workloads import channel_auth
from workloads.coordinator_channel import ControlClient
from workloads.host.control_server import ControlServer
from workloads.wire.control import encode

HELLO = {"type": "hello", "hosts": ["ws1"], "iteration": 0, "resumed": False}


def _hello(job: str) -> dict:
    return {**HELLO, "job": job}


def _wait_for(predicate, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.01)


def test_the_runs_job_is_let_in_and_its_messages_arrive():
    with ControlServer("127.0.0.1") as server:
        client = ControlClient(("127.0.0.1", server.port), server.secret)
        client.send(_hello("good"))
        client.send({"type": "ack", "iteration": 3})
        conn = server.connection("good", timeout_s=5)
        assert conn.hello.message["hosts"] == ["ws1"]
        assert conn.expect("ack", timeout_s=5).message["iteration"] == 3
        conn.send({"type": "preempt"})
        assert client.expect("preempt", timeout_s=5) == {"type": "preempt"}
        client.close()
        assert server.refused == 0


def test_a_wrong_secret_is_refused_logged_and_its_hello_never_arrives(caplog):
    caplog.set_level(logging.WARNING, logger="workloads.host.control_server")
    with ControlServer("127.0.0.1") as server:
        with pytest.raises(channel_auth.AuthError, match="refused"):
            ControlClient(("127.0.0.1", server.port), channel_auth.new_secret())
        # an intruder that sends its lines without waiting for the verdict
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as raw:
            challenge = raw.recv(256)
            nonce = bytes.fromhex(challenge.split()[1].decode())
            raw.sendall(channel_auth.answer(b"x" * 32, nonce).hex().encode() + b"\n" + encode(_hello("evil"))
                        + encode({"type": "done"}))
            assert raw.recv(256) == b""  # closed, no "ok"
        _wait_for(lambda: server.refused == 2)
        with pytest.raises(TimeoutError):
            server.connection("evil", timeout_s=0.3)
    assert server.refusals == {"wrong answer": 2}
    refusals = [r for r in caplog.records if "refused 127.0.0.1" in r.getMessage()]
    assert len(refusals) == 2 and all("not this run's secret" in r.getMessage() for r in refusals)


def test_a_hello_without_the_handshake_is_refused():
    with ControlServer("127.0.0.1") as server:
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as raw:
            raw.sendall(encode(_hello("old-client")))  # a job from before the handshake
            raw.recv(256)  # the challenge
            assert raw.recv(256) == b""
        _wait_for(lambda: server.refused == 1)
        assert server.refusals == {"answer is not hex": 1}


def test_a_silent_peer_is_dropped_after_the_timeout_without_blocking_a_good_job(caplog):
    caplog.set_level(logging.WARNING, logger="workloads.host.control_server")
    with ControlServer("127.0.0.1", handshake_timeout_s=0.5) as server:
        silent = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        t0 = time.monotonic()
        client = ControlClient(("127.0.0.1", server.port), server.secret)  # while the silent one waits
        client.send(_hello("beside-silent"))
        assert server.connection("beside-silent", timeout_s=5).job == "beside-silent"
        assert time.monotonic() - t0 < 0.5  # not held up by the silent peer's handshake
        silent.recv(256)  # the challenge, then nothing until the server gives up
        assert silent.recv(256) == b""
        assert time.monotonic() - t0 < 3.0
        silent.close()
        client.close()
        _wait_for(lambda: server.refused == 1)
    assert server.refusals == {"no answer within the handshake timeout": 1}
    assert any("no answer" in r.getMessage() for r in caplog.records)


def test_a_peer_outside_the_allowed_networks_is_refused_before_the_handshake(caplog):
    caplog.set_level(logging.WARNING, logger="workloads.host.control_server")
    with ControlServer("127.0.0.1", allowed_networks=["10.99.0.0/24"]) as server:
        with pytest.raises(OSError):  # closed before any challenge: the right secret does not help
            ControlClient(("127.0.0.1", server.port), server.secret)
        _wait_for(lambda: server.refused == 1)
    assert server.refusals == {"outside the allowed networks": 1}
    assert any("refused 127.0.0.1" in r.getMessage() and "outside the allowed networks" in r.getMessage()
               for r in caplog.records)


def test_inside_the_allowed_networks_the_secret_still_decides():
    with ControlServer("127.0.0.1", allowed_networks=["127.0.0.0/8"]) as server:
        client = ControlClient(("127.0.0.1", server.port), server.secret)
        client.send(_hello("inside"))
        assert server.connection("inside", timeout_s=5).job == "inside"
        client.close()


@pytest.mark.parametrize("host", ["0.0.0.0", "::", ""])
def test_listening_on_every_interface_is_refused_in_one_line(host):
    with pytest.raises(ValueError, match="^bind_host: ") as err:
        ControlServer(host)
    assert "\n" not in str(err.value)


def test_every_interface_only_when_the_caller_opts_in():
    with ControlServer("0.0.0.0", allow_wildcard=True) as server:
        client = ControlClient(("127.0.0.1", server.port), server.secret)
        client.send(_hello("wild"))
        assert server.connection("wild", timeout_s=5).job == "wild"
        client.close()


def test_a_bad_allow_list_names_the_field():
    with pytest.raises(ValueError, match="^allowed_networks: 'ten' is not a network"):
        ControlServer("127.0.0.1", allowed_networks=["ten"])


def test_the_secret_travels_in_the_environment_as_hex():
    secret = channel_auth.new_secret()
    env = channel_auth.secret_env(secret)
    assert set(env) == {channel_auth.SECRET_ENV} and channel_auth.secret_from_env(env) == secret
    assert channel_auth.secret_from_env({}) is None
    with pytest.raises(ValueError, match=f"^{channel_auth.SECRET_ENV}: not hex"):
        channel_auth.secret_from_env({channel_auth.SECRET_ENV: "zz"})
    with pytest.raises(ValueError, match="want at least 16"):
        channel_auth.secret_from_env({channel_auth.SECRET_ENV: "00ff"})


@pytest.mark.parametrize(("peer", "allowed"), [
    ("172.30.0.5", True), ("172.30.1.5", False), ("::ffff:172.30.0.9", True), ("192.168.1.2", False)])
def test_the_allow_list_reads_ipv4_and_mapped_addresses(peer, allowed):
    assert channel_auth.peer_allowed(peer, channel_auth.parse_networks(["172.30.0.0/24"])) is allowed
