"""One task of a task-graph application (Menascé & Rao §2), on its workstation.

python3 -m workloads.taskgraph_task --name B --work-ref-s 0.7 --port 21001 \\
    --expect A --send 10.0.0.3:21002:40000

Every task of a graph is started at once and listens. The host connects to each (so it
knows all are up) and then sends each the graph's start time (a `GO` header and the
epoch seconds): launching nine tasks through `docker exec` takes seconds on a loaded
host, so no start time fixed in advance would do. Until it, a task waits blocked (no
CPU). It then receives the message of each predecessor named by `--expect` in full, computes its demand of reference work (the multiply kernel,
`workloads/reference.py`), and sends each successor its bytes over TCP, so messages
cross the emulated network and its shaping. It prints one JSON line of wall-clock times
(the workstations share the host's clock), from which the host checks every precedence
arc and compares with the model. A predecessor that never sends fails the task after
`--timeout-s`, named in the error.

Every connection, the host's go and each message, first proves the run's secret
(NOWLAB_CONTROL_SECRET, in the environment; workloads/channel_auth.py, context TASKGRAPH):
one that does not is refused, named on stderr, and the task goes on waiting for the real
ones. A task serves one connection at a time, so a peer that connects and stays silent
delays it by at most the handshake timeout.
Runs inside the containers: standard library and numpy only.
"""
from __future__ import annotations

import argparse
import json
import socket
import sys
import threading
import time

from workloads import channel_auth, compute
from workloads.reference import ref_seconds_to_mults

HEADER_BYTES = 64  # the sender's task name, NUL-padded, then the payload
CHUNK_BYTES = 1 << 16


GO = "__go__"  # the host's header: the payload is the graph's start time, epoch seconds


def accept_authenticated(server: socket.socket, secret: bytes, deadline: float) -> socket.socket:
    """The next connection that proves the run's secret. One that does not is closed and named
    on stderr; socket.timeout once `deadline` (epoch seconds) passes."""
    while True:
        server.settimeout(max(0.01, deadline - time.time()))
        conn, peer = server.accept()
        try:
            channel_auth.server_handshake(conn, secret, channel=channel_auth.TASKGRAPH,
                                          timeout_s=min(channel_auth.HANDSHAKE_TIMEOUT_S, max(0.01, deadline - time.time())))
        except OSError as exc:  # AuthError is one; a peer gone mid-handshake is another
            conn.close()
            print(f"task graph: refused {peer[0]} port {peer[1]}: {exc}", file=sys.stderr, flush=True)
            continue
        return conn


def wait_for_go(server: socket.socket, secret: bytes, deadline: float) -> float:
    """The host's connection is the first authenticated one this task accepts (its predecessors
    cannot send before their own go): read the start time from it and sleep until then."""
    conn = accept_authenticated(server, secret, deadline)
    with conn:
        conn.settimeout(max(0.01, deadline - time.time()))
        name = _read(conn, HEADER_BYTES).rstrip(b"\0").decode()
        if name != GO:
            raise ValueError(f"the first connection came from {name!r}, not the host's go")
        payload = b""
        while chunk := conn.recv(CHUNK_BYTES):
            payload += chunk
    start_at = float(payload.decode())
    time.sleep(max(0.0, start_at - time.time()))
    return start_at


def receive(server: socket.socket, secret: bytes, expect: set[str], deadline: float) -> dict[str, tuple[float, int]]:
    """Accept one authenticated connection per expected predecessor; return name -> (time fully arrived, bytes)."""
    got: dict[str, tuple[float, int]] = {}
    while set(got) != expect:
        try:
            conn = accept_authenticated(server, secret, deadline)
        except socket.timeout:
            missing = ", ".join(sorted(expect - set(got)))
            raise TimeoutError(f"no message from {missing} before the timeout") from None
        with conn:
            conn.settimeout(max(0.01, deadline - time.time()))
            header = _read(conn, HEADER_BYTES)
            name = header.rstrip(b"\0").decode()
            size = 0
            while chunk := conn.recv(CHUNK_BYTES):
                size += len(chunk)
            if name not in expect:
                raise ValueError(f"a message from {name!r}, which is not a predecessor")
            got[name] = (time.time(), size)
    return got


def _read(conn: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise ConnectionError(f"connection closed after {len(data)} of {n} header bytes")
        data += chunk
    return data


def send(name: str, host: str, port: int, size: int, secret: bytes, deadline: float) -> None:
    """Connect (retrying while the successor is not yet listening), prove the run's secret, and
    send the header and `size` bytes."""
    while True:
        try:
            conn = socket.create_connection((host, port), timeout=max(0.01, deadline - time.time()))
            break
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.02)
    with conn:
        channel_auth.client_handshake(conn, secret, channel=channel_auth.TASKGRAPH)
        conn.settimeout(max(0.01, deadline - time.time()))
        conn.sendall(name.encode().ljust(HEADER_BYTES, b"\0"))
        block = bytes(min(size, CHUNK_BYTES))
        left = size
        while left > 0:
            n = min(left, len(block))
            conn.sendall(block[:n])
            left -= n
        conn.shutdown(socket.SHUT_WR)
        conn.recv(1)  # the receiver closes once it has everything: the message has arrived


def send_all(name: str, targets: list[tuple[str, int, int]], secret: bytes, deadline: float) -> None:
    """Send to every successor at once, as PVM's buffered sends would: one successor still
    receiving from someone else must not hold up the others."""
    errors: list[BaseException] = []

    def one(host: str, port: int, size: int) -> None:
        try:
            send(name, host, port, size, secret, deadline)
        except OSError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=one, args=t) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def parse_send(text: str) -> tuple[str, int, int]:
    host, port, size = text.rsplit(":", 2)
    if int(size) < 0:
        raise argparse.ArgumentTypeError(f"--send {text}: bytes must be >= 0")
    return host, int(port), int(size)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m workloads.taskgraph_task", description=__doc__)
    p.add_argument("--name", required=True)
    p.add_argument("--work-ref-s", type=float, required=True, help="demand, reference-seconds")
    p.add_argument("--port", type=int, required=True, help="where predecessors send")
    p.add_argument("--expect", action="append", default=[], help="a predecessor's name (repeat)")
    p.add_argument("--send", action="append", default=[], type=parse_send, help="HOST:PORT:BYTES (repeat)")
    p.add_argument("--timeout-s", type=float, default=600.0, help="from launch to the last message")
    a = p.parse_args(argv)
    if a.work_ref_s <= 0:
        p.error(f"--work-ref-s must be > 0, got {a.work_ref_s}")
    launched = time.time()
    deadline = launched + a.timeout_s
    try:
        secret = channel_auth.secret_from_env()
        if secret is None:
            raise ValueError(f"{channel_auth.SECRET_ENV}: not set (the run's secret, which every message proves)")
        with socket.create_server(("0.0.0.0", a.port), backlog=max(4, len(a.expect) + 1)) as server:
            print(json.dumps({"task": a.name, "listening": a.port}), flush=True)
            start_at = wait_for_go(server, secret, deadline)
            arrivals = receive(server, secret, set(a.expect), deadline)
        ready = time.time()
        compute.multiply(ref_seconds_to_mults(a.work_ref_s))
        done = time.time()
        send_all(a.name, a.send, secret, deadline)
        sent = time.time()
    except (OSError, TimeoutError, ValueError) as exc:
        print(json.dumps({"task": a.name, "error": f"{type(exc).__name__}: {exc}"}), flush=True)
        return 1
    print(json.dumps({"task": a.name, "launched": launched, "start_at": start_at, "ready": ready, "done": done, "sent": sent,
                      "arrivals": {k: {"at": t, "bytes": b} for k, (t, b) in arrivals.items()}}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
