"""Two small schedulers that speak the Batsim protocol over raw ZeroMQ, without pybatsim.

* `fcfs`: first come, first served on the lowest-numbered free resources; a job wider than the
  machine is rejected; the queue's head blocks the rest. The least a scheduler can cost, so a
  replay under it measures what the protocol and the server cost (benchmarks/bench_batsim_protocol.py).
* `echo`: replies to every message with no decisions: the socket's round trip alone.

Both bind a REP socket, as pybatsim does, and exit after replying to SIMULATION_ENDS.
Run: python -m experiments.batsim.scripted fcfs --socket tcp://127.0.0.1:28000
"""
from __future__ import annotations

import argparse
import json
from collections import deque

import zmq

from experiments.traces.intervals import format_intervals, parse_intervals


def serve_fcfs(socket: zmq.Socket) -> None:
    free: list[bool] = []
    queue: deque[tuple[str, int]] = deque()
    while True:
        msg = json.loads(socket.recv())
        now, decisions, ended = msg["now"], [], False
        for event in msg["events"]:
            kind, data = event["type"], event.get("data", {})
            if kind == "SIMULATION_BEGINS":
                free = [True] * data["nb_compute_resources"]
            elif kind == "JOB_SUBMITTED":
                queue.append((data["job_id"], data["job"]["res"]))
            elif kind == "JOB_COMPLETED":
                for r in parse_intervals(data["alloc"]):
                    free[r] = True
            elif kind == "SIMULATION_ENDS":
                ended = True
        while queue:
            job_id, res = queue[0]
            if res > len(free):
                queue.popleft()
                decisions.append({"timestamp": now, "type": "REJECT_JOB", "data": {"job_id": job_id}})
                continue
            chosen = [r for r, ok in enumerate(free) if ok][:res]
            if len(chosen) < res:
                break
            queue.popleft()
            for r in chosen:
                free[r] = False
            decisions.append({"timestamp": now, "type": "EXECUTE_JOB",
                              "data": {"job_id": job_id, "alloc": format_intervals(chosen)}})
        socket.send_string(json.dumps({"now": now, "events": decisions}))
        if ended:
            return


def serve_echo(socket: zmq.Socket) -> None:
    while True:
        msg = json.loads(socket.recv())
        socket.send_string(json.dumps({"now": msg["now"], "events": []}))
        if any(e["type"] == "SIMULATION_ENDS" for e in msg["events"]):
            return


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=("fcfs", "echo"))
    ap.add_argument("--socket", default="tcp://127.0.0.1:28000", help="endpoint to bind (REP)")
    args = ap.parse_args()
    context = zmq.Context()
    socket = context.socket(zmq.REP)
    socket.bind(args.socket)
    try:
        (serve_fcfs if args.mode == "fcfs" else serve_echo)(socket)
    finally:
        socket.close(linger=1000)
        context.term()


if __name__ == "__main__":
    main()
