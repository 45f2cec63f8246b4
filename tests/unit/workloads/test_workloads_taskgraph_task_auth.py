"""Task-graph tasks prove the run's secret on every connection (issue 19): two real tasks on
this host, A sending to B, started by the host's go. Strangers that reach B's port first, one
with garbage and one with a wrong secret, are refused and named on B's stderr, and the graph
still runs; a task without the secret stops in one line naming the variable."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from experiments.studies.menasce_rao.live import go
from workloads import channel_auth

ROOT = Path(__file__).resolve().parents[3]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def task(name: str, port: int, *extra: str, secret: bytes | None) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != channel_auth.SECRET_ENV}
    if secret is not None:
        env.update(channel_auth.secret_env(secret))
    argv = [sys.executable, "-m", "workloads.taskgraph_task", "--name", name, "--work-ref-s", "0.01",
            "--port", str(port), "--timeout-s", "30", *extra]
    return subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def listening(proc: subprocess.Popen) -> None:
    line = proc.stdout.readline()
    assert '"listening"' in line, (line, proc.stderr.read() if proc.poll() is not None else "")


def test_strangers_are_refused_and_the_graph_runs_on_the_runs_secret():
    secret = channel_auth.new_secret()
    pa, pb = free_port(), free_port()
    b = task("B", pb, "--expect", "A", secret=secret)
    a = task("A", pa, "--send", f"127.0.0.1:{pb}:1000", secret=secret)
    try:
        listening(a)
        listening(b)
        with socket.create_connection(("127.0.0.1", pb), timeout=5) as s:  # garbage for an answer
            s.recv(200)  # the challenge
            s.sendall(b"hello\n")
            assert s.recv(10) == b""  # closed, no ok
        with socket.create_connection(("127.0.0.1", pb), timeout=5) as s, \
                pytest.raises(channel_auth.Refused):
            channel_auth.client_handshake(s, channel_auth.new_secret(), channel=channel_auth.TASKGRAPH)
        go({"A": ("127.0.0.1", pa), "B": ("127.0.0.1", pb)}, secret, ready_timeout_s=10, lead_s=0.1)
        out_a, _ = a.communicate(timeout=30)
        out_b, err_b = b.communicate(timeout=30)
    finally:
        for p in (a, b):
            p.kill()
    assert (a.returncode, b.returncode) == (0, 0), (out_a, out_b, err_b)
    final = json.loads(out_b.splitlines()[-1])
    assert final["arrivals"]["A"]["bytes"] == 1000
    refused = [ln for ln in err_b.splitlines() if ln.startswith("task graph: refused 127.0.0.1")]
    assert len(refused) == 2 and "answer is not hex" in refused[0] and "wrong answer" in refused[1], err_b


def test_a_task_without_the_secret_stops_naming_the_variable():
    proc = task("A", free_port(), secret=None)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 1
    assert json.loads(out.splitlines()[-1])["error"] == (
        f"ValueError: {channel_auth.SECRET_ENV}: not set (the run's secret, which every message proves)")
