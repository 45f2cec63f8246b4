"""A scheduler speaking the Batsim protocol over raw ZeroMQ, scripted to do one thing (right or wrong).

Run: python tests/batsim_scripted_scheduler.py MODE ENDPOINT (tests/batsim_harness.py starts it).
It binds a REP socket, as pybatsim does.
Modes (each reacts to the first JOB_SUBMITTED message it gets, unless said otherwise):

  choreo           every decision kind once: w0!1 runs on 0-1 with metadata and a call 4 s later,
                   which kills it; w0!2 runs on 2; w0!3 (wider than the machine) is rejected
  unknown-job      EXECUTE_JOB for w0!99, a job the workload does not have
  not-submitted    EXECUTE_JOB for w0!2, submitted later
  outside          EXECUTE_JOB on 2-5 on a machine of 4
  busy             w0!1 on 0-1, then (next submission) w0!2 on 1-2
  malformed-json   a reply that is not JSON
  malformed-field  EXECUTE_JOB without data.alloc
  kill-waiting     KILL_JOB on w0!1, never started
  past             EXECUTE_JOB with a timestamp before the message's now
  later            each job started (w0!1 on 0-1, others on 2-3) by a decision stamped 1 s after the
                   message, in a reply whose now is 2 s after it
  silent           never replies
  exits            exits (status 3) without replying
  idle             replies to everything with no decisions
"""
from __future__ import annotations

import json
import os
import sys
import time

import zmq


def decide(mode: str, msg: dict, state: dict) -> list[dict] | bytes | None:
    now = msg["now"]
    submitted = [e["data"]["job_id"] for e in msg["events"] if e["type"] == "JOB_SUBMITTED"]
    calls = [e for e in msg["events"] if e["type"] == "REQUESTED_CALL"]

    def ev(kind: str, **data: object) -> dict:
        return {"timestamp": now, "type": kind, "data": data}

    if mode == "choreo":
        out = []
        for job in submitted:
            if job == "w0!1":
                out += [ev("EXECUTE_JOB", job_id=job, alloc="0-1"),
                        ev("SET_JOB_METADATA", job_id=job, metadata="tagged, \"by\" choreo"),
                        ev("CALL_ME_LATER", timestamp=now + 4)]
            elif job == "w0!2":
                out.append(ev("EXECUTE_JOB", job_id=job, alloc="2"))
            else:
                out.append(ev("REJECT_JOB", job_id=job))
        if calls:
            out.append(ev("KILL_JOB", job_ids=["w0!1"]))
        return out
    if mode == "later":
        return [{"timestamp": now + 1, "type": "EXECUTE_JOB",
                 "data": {"job_id": job, "alloc": "0-1" if job == "w0!1" else "2-3"}} for job in submitted]
    if not submitted or mode == "idle":
        return []
    state["n"] = state.get("n", 0) + 1
    first = state["n"] == 1
    if mode == "busy":
        return [ev("EXECUTE_JOB", job_id=submitted[0], alloc="0-1" if first else "1-2")]
    if not first:
        return []
    if mode == "unknown-job":
        return [ev("EXECUTE_JOB", job_id="w0!99", alloc="0")]
    if mode == "not-submitted":
        return [ev("EXECUTE_JOB", job_id="w0!2", alloc="0")]
    if mode == "outside":
        return [ev("EXECUTE_JOB", job_id=submitted[0], alloc="2-5")]
    if mode == "malformed-json":
        return b"{this is not json"
    if mode == "malformed-field":
        return [{"timestamp": now, "type": "EXECUTE_JOB", "data": {"job_id": submitted[0]}}]
    if mode == "kill-waiting":
        return [ev("KILL_JOB", job_ids=[submitted[0]])]
    if mode == "past":
        return [{"timestamp": now - 0.5, "type": "EXECUTE_JOB", "data": {"job_id": submitted[0], "alloc": "0"}}]
    if mode == "silent":
        time.sleep(3600)
    if mode == "exits":
        os._exit(3)
    raise SystemExit(f"unknown mode {mode!r}")


def main() -> None:
    mode, endpoint = sys.argv[1], sys.argv[2]
    context = zmq.Context()
    socket = context.socket(zmq.REP)
    socket.bind(endpoint)
    state: dict = {}
    while True:
        msg = json.loads(socket.recv())
        out = decide(mode, msg, state)
        reply_now = msg["now"] + (2 if mode == "later" and out else 0)
        socket.send(out if isinstance(out, bytes) else json.dumps({"now": reply_now, "events": out}).encode())
        if any(e["type"] == "SIMULATION_ENDS" for e in msg["events"]):
            break
    socket.close(linger=1000)
    context.term()


if __name__ == "__main__":
    main()
