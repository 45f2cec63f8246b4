"""The live executor's control channel during a real run (host Open MPI): the run's own job gets
in with the secret the executor made, an intruder forging that job's `done` does not."""
from __future__ import annotations

import logging
import socket

import pytest

from scheduler.live import Arrival, LiveExecutor
from experiments.traces.live_inputs import job_class
from workloads import channel_auth
from workloads.host.launch import LocalLauncher
from workloads.wire.control import encode

pytestmark = pytest.mark.host_mpi  # real jobs on this host's Open MPI

SHORT = job_class("short", {
    "argv": ["python3", "-m", "workloads.synthetic", "--phases", "6", "--mults", "2000000",
             "--redist-bytes", str(64 * 1024)],
    "W": 4.0, "alpha": 0.3, "beta": 0.1, "pmax": 2,
})


def _forge_done(port: int, job_key: str) -> bytes:
    """Connect as an intruder that knows the protocol but not the secret; what the server sent back."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        nonce = bytes.fromhex(raw.recv(256).split()[1].decode())
        forged = channel_auth.answer(channel_auth.new_secret(), nonce).hex().encode() + b"\n"
        raw.sendall(forged + encode({"type": "hello", "job": job_key, "hosts": ["ws1"], "iteration": 0,
                                     "resumed": False}) + encode({"type": "done", "phases_done": 999}))
        return raw.recv(256)


def test_an_intruder_during_a_run_is_refused_logged_and_counted(caplog):
    caplog.set_level(logging.WARNING, logger="workloads.host.control_server")
    replies: list[bytes] = []
    ex: LiveExecutor

    def progress(what: str, _done: int, _total: int) -> None:
        if what == "started":  # the server listens, the job is about to launch
            replies.append(_forge_done(ex.server.port, f"{ex.tag}-0"))

    ex = LiveExecutor([Arrival(0, SHORT, 0.2)], "RA", LocalLauncher(control_network="127.0.0.0/8"),
                      ["ws1", "ws2"], "127.0.0.1", run_timeout_s=120, connect_timeout_s=60, job_timeout_s=60,
                      tag="auth", progress=progress, allowed_networks=["127.0.0.0/8"])
    result = ex.run()
    assert replies == [b""]  # closed without "ok"
    assert result.control_refused == 1
    state = result.states[0]
    assert state.status == "done" and state.report["phases_done"] == 6  # the real job's, not the forgery's
    assert any("refused 127.0.0.1" in r.getMessage() and "not this run's secret" in r.getMessage()
               for r in caplog.records)


def test_the_executor_never_listens_on_every_interface():
    ex = LiveExecutor([Arrival(0, SHORT, 0.0)], "RA", LocalLauncher(), ["ws1"], "0.0.0.0")
    with pytest.raises(ValueError, match="^bind_host: 0.0.0.0 listens on every network"):
        ex.run()
