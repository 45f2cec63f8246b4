"""Benchmark: what the control channel's handshake costs a job, and whether a flood shuts a job out.

    .venv/bin/python -m benchmarks.bench_control_channel --connects 200 --flood 2000

On 127.0.0.1 with the real server and client (workloads/host/control_server.py,
workloads/coordinator_channel.py): the time from connect to the job's hello reaching the
server, with the handshake (as every launch now pays it) against a plain TCP connect; then
`--flood` silent connections opened as fast as one thread can while a job connects every
50 ms: each job's time to get in and how many did. Prints one JSON line per measurement.
"""
from __future__ import annotations

import argparse
import json
import logging
import socket
import statistics
import threading
import time

from workloads.coordinator_channel import ControlClient
from workloads.host.control_server import ControlServer


def _summary(name: str, samples_s: list[float], **extra: object) -> dict:
    ordered = sorted(samples_s)
    return {"bench": name, "n": len(ordered), "median_ms": 1e3 * statistics.median(ordered),
            "p95_ms": 1e3 * ordered[int(0.95 * (len(ordered) - 1))], "max_ms": 1e3 * ordered[-1], **extra}


def hello_latency(server: ControlServer, tag: str) -> float:
    """Connect, prove, say hello; seconds until the server hands the connection over."""
    t0 = time.perf_counter()
    client = ControlClient(("127.0.0.1", server.port), server.secret)
    client.send({"type": "hello", "job": tag, "hosts": ["ws1"], "iteration": 0, "resumed": False})
    server.connection(tag, timeout_s=10).close()
    took = time.perf_counter() - t0
    client.close()
    return took


def plain_connect(port: int) -> float:
    t0 = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.recv(256)  # the challenge: the server's first byte, as a job's hello would be its first
    return time.perf_counter() - t0


def flood(server: ControlServer, n_silent: int) -> dict:
    stop = threading.Event()
    opened: list[socket.socket] = []

    def flooder() -> None:
        for _ in range(n_silent):
            if stop.is_set():
                return
            try:
                opened.append(socket.create_connection(("127.0.0.1", server.port), timeout=5))
            except OSError:
                return

    t = threading.Thread(target=flooder, daemon=True)
    t0 = time.perf_counter()
    t.start()
    got_in, failed = [], 0
    while t.is_alive():
        try:
            got_in.append(hello_latency(server, f"flooded-{len(got_in) + failed}"))
        except (OSError, TimeoutError):
            failed += 1
        time.sleep(0.05)
    flood_s = time.perf_counter() - t0
    stop.set()
    for sock in opened:
        sock.close()
    return _summary("job_during_flood", got_in or [float("nan")], silent=len(opened), flood_s=round(flood_s, 3),
                    jobs_failed=failed, refused=server.refused, refusals=server.refusals)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--connects", type=int, default=200)
    parser.add_argument("--flood", type=int, default=2000, help="silent connections to open")
    args = parser.parse_args()
    logging.getLogger("workloads.control_gate").setLevel(logging.ERROR)  # a flood logs a warning per refusal
    with ControlServer("127.0.0.1") as server:
        print(json.dumps(_summary("hello_with_handshake", [hello_latency(server, f"j{i}")
                                                           for i in range(args.connects)])), flush=True)
        print(json.dumps(_summary("connect_to_first_byte", [plain_connect(server.port)
                                                            for _ in range(args.connects)])), flush=True)
    with ControlServer("127.0.0.1") as server:
        print(json.dumps(flood(server, args.flood)), flush=True)


if __name__ == "__main__":
    main()
