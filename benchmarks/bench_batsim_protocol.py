"""What speaking the Batsim protocol costs: messages per second through the socket, and per event in a replay.

1. Round trips: an always-reply scheduler (experiments.batsim.scripted echo, its own process)
   answers N JOB_SUBMITTED messages; timed as the socket alone (text already encoded) and as the
   server does it (encode, exchange, decode the reply).
2. A 10,000-job replay (64 workstations, sizes 1-16, delays of 10-3,600 s, Poisson arrivals)
   served to a raw-ZeroMQ FCFS scheduler (experiments.batsim.scripted fcfs, its own process): wall
   time, this process's CPU (the server's side), the wall time spent waiting for replies, and
   the cost per message and per event. With --pybatsim, the same replay under pybatsim's
   bundled easyBackfill, a real scheduler's cost beside it.
3. The same jobs under nowlab's own policy in its engine (scheduler.engine.simulate, rigid
   RuntimeModel jobs): FCFS beside the raw-ZeroMQ FCFS, EASY beside easyBackfill. The overhead
   per event the protocol adds is (replay wall - engine wall) / events sent; the mean waits show
   the schedules are alike (they differ only where the placement rules do:
   tests/unit/experiments/test_experiments_batsim_vs_engine.py).
Run: .venv/bin/python -m benchmarks.bench_batsim_protocol [--messages 5000] [--jobs 10000] [--pybatsim]
"""
from __future__ import annotations

import argparse
import contextlib
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from benchmarks._common import table
from experiments.batsim import protocol as p
from experiments.batsim.channel import ZmqChannel
from experiments.batsim.platform import uniform
from experiments.batsim.server import BatsimServer
from experiments.batsim.workload import parse_workload
from scheduler.engine import simulate
from scheduler.model import Job, RuntimeModel
from scheduler.registry import get_policy

ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def scheduler(argv: list[str], workdir: Path) -> Iterator[str]:
    """Start a scheduler process bound to a free port; yield its endpoint; stop it (by its handle)."""
    endpoint = f"tcp://127.0.0.1:{_free_port()}"
    proc = subprocess.Popen([*argv, endpoint], cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        yield endpoint
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)


def round_trips(n: int, workdir: Path) -> list[list[str]]:
    job = p.JobDescription(id="w0!1", subtime=1.0, res=4, profile="d", walltime=100.0)
    message = p.Message(1.0, (p.JobSubmitted(timestamp=1.0, job=job),))
    text = p.encode(message)
    rows = []
    with scheduler([sys.executable, "-m", "experiments.batsim.scripted", "echo", "--socket"], workdir) as endpoint, \
            ZmqChannel(endpoint, timeout_s=30) as channel:
        channel.exchange(text, "warm-up")
        for how in ("socket only", "encode + socket + decode"):
            t0, c0 = time.perf_counter(), time.process_time()
            for k in range(n):
                if how == "socket only":
                    channel.exchange(text, "m")
                else:
                    p.decode(channel.exchange(p.encode(message), "m"), direction="to_batsim", machine_size=64)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            rows.append([how, f"{n:,}", f"{n / wall:,.0f}", f"{wall / n * 1e6:.0f}", f"{cpu / n * 1e6:.0f}"])
    return rows


def workload(jobs: int, nb_res: int = 64, seed: int = 1):
    rng = random.Random(seed)
    t, entries, profiles = 0.0, [], {}
    for j in range(1, jobs + 1):
        t += rng.expovariate(1 / 60.0)
        run = float(rng.randint(10, 3600))
        profiles.setdefault(f"d{run:g}", {"type": "delay", "delay": run})
        entries.append({"id": j, "subtime": round(t, 3), "res": rng.choice((1, 1, 2, 4, 8, 16)),
                        "profile": f"d{run:g}", "walltime": run * rng.choice((1.0, 1.5, 2.0))})
    return parse_workload({"nb_res": nb_res, "jobs": entries, "profiles": profiles}, source="bench.json")


@dataclass(frozen=True)
class Replay:
    row: list[str]
    wall_s: float
    events: int
    mean_wait_s: float


def replay(argv: list[str], jobs: int, workdir: Path) -> Replay:
    w = workload(jobs)
    with scheduler(argv, workdir) as endpoint, ZmqChannel(endpoint, timeout_s=120) as channel:
        server = BatsimServer(w, uniform(w.nb_res), channel)
        c0 = time.process_time()
        s = server.run()
        cpu = time.process_time() - c0
    records = server.records()
    started = [r for r in records if r.start_s is not None]
    done = sum(r.final_state.startswith("COMPLETED_") for r in records)
    own_wall = s.simulation_time_s - s.scheduling_time_s
    wait = sum(r.start_s - r.submit_s for r in started) / len(started)
    return Replay([f"{done:,}/{jobs:,}", f"{s.messages:,}", f"{s.events_sent:,}", f"{s.simulation_time_s:.2f}",
                   f"{s.scheduling_time_s:.2f}", f"{cpu:.2f}", f"{s.simulation_time_s / s.messages * 1e6:.0f}",
                   f"{s.simulation_time_s / s.events_sent * 1e6:.0f}", f"{own_wall / s.events_sent * 1e6:.0f}",
                   f"{wait:,.0f}"], s.simulation_time_s, s.events_sent, wait)


def engine_replay(policy: str, jobs: int) -> tuple[float, float, int]:
    """The same jobs under nowlab's `policy` in the engine: (wall s, mean wait s, jobs done)."""
    w = workload(jobs)
    rigid = [Job(j.id, j.subtime_s, RuntimeModel(w.profiles[j.profile].delay_s), size=j.res, walltime=j.walltime_s)
             for j in w.jobs if j.res <= w.nb_res]
    t0 = time.perf_counter()
    result = simulate(rigid, get_policy(policy), w.nb_res, timeline=False)
    wall = time.perf_counter() - t0
    return wall, sum(r.start - r.submission for r in result.jobs) / len(result.jobs), len(result.jobs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=5000)
    ap.add_argument("--jobs", type=int, default=10_000)
    ap.add_argument("--pybatsim", action="store_true", help="also replay under pybatsim's easyBackfill")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        table(f"Round trips to an always-reply scheduler ({args.messages:,} JOB_SUBMITTED messages)",
              ["how", "messages", "messages/s", "wall µs/message", "server CPU µs/message"],
              round_trips(args.messages, workdir))
        runs = [("raw-ZeroMQ FCFS", "FCFS",
                 replay([sys.executable, "-m", "experiments.batsim.scripted", "fcfs", "--socket"], args.jobs, workdir))]
        if args.pybatsim:
            pybatsim = str(Path(sys.executable).parent / "pybatsim")
            runs.append(("pybatsim easyBackfill", "EASY",
                         replay([pybatsim, "easyBackfill", "-v", "error", "-t", "120000", "-s"], args.jobs, workdir)))
        labels = ["jobs done", "messages", "events sent", "wall s", "waiting for replies s", "server CPU s",
                  "wall µs/message", "wall µs/event", "server-side wall µs/event", "mean wait s"]
        table(f"A {args.jobs:,}-job replay on 64 workstations, simulated", ["", *(r[0] for r in runs)],
              [[label, *(r[2].row[k] for r in runs)] for k, label in enumerate(labels)])
        rows = []
        for name, policy, run in runs:
            wall, wait, done = engine_replay(policy, args.jobs)
            rows.append([f"{policy}: {name.split()[0]}", f"{done:,}", f"{run.wall_s:.2f}", f"{wall:.2f}",
                         f"{run.wall_s / wall:.0f}x", f"{(run.wall_s - wall) / run.events * 1e6:.0f}",
                         f"{run.mean_wait_s:,.0f}", f"{wait:,.0f}"])
        table(f"The same {args.jobs:,} jobs under nowlab's own policy (engine) beside the protocol",
              ["policy: Batsim scheduler", "jobs", "protocol s", "engine s", "ratio", "overhead µs/event",
               "wait s (protocol)", "wait s (engine)"], rows)


if __name__ == "__main__":
    main()
