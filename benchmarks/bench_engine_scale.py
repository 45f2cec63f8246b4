"""The scheduling side at scale (issue 18): the engine and its policies at 64, 256 and 1,024 workstations.

Workload: Anastasiadis & Sevcik's WK4 stretched to the machine, so a job is as wide and as
long relative to P at every size: pmax in {P/8, P/2, 2P} (WK4's 4, 16, 64 at P = 32), W
hyper-exponential (12.5% mean 101 s, else 1.3 s) times P/32, alpha = W (1/pmax^2)^mu with
mu in {0.2, 0.4, inf}, beta = W/pmax^2, 10 phases; Poisson arrivals at the offered load
(eq. 10, E(T(1)) = 16.40 s x P/32), `--jobs-per-ws` jobs per workstation so the stream
lasts long enough for the machine to be busy throughout.

    nice -n 19 .venv/bin/python -m benchmarks.bench_engine_scale            # default, ~40 s CPU here
    nice -n 19 .venv/bin/python -m benchmarks.bench_engine_scale --jobs-per-ws 20 --sizes 64,256,1024
                                                                         # the full run, several minutes

For each size and policy it prints: events (the timeline's entries: arrivals, starts,
preemption requests, acks, resizes, finishes), the whole simulation's wall time, the policy's
decide() time per call (median and 99th percentile, timed around each call), the share of
the simulation's wall time spent in decide(), the mean fraction of workstations allocated
while jobs arrive (a preempted job holds its set, idle, until resized), and the tracemalloc peak of a second,
identical run (tracemalloc slows a run several times, so it is not the timed one).
"""
from __future__ import annotations

import argparse
import math
import random
import time
import tracemalloc

import numpy as np
from benchmarks._common import console
from rich.console import Console
from rich.table import Table

from scheduler.engine import simulate
from scheduler.model import Job, SevcikModel
from scheduler.registry import get_policy
from scheduler.results import SimResult

POLICIES = ("RA", "FOLDING", "EQUI", "AEP")


def wk4_scaled(n: int, P: int, load: float, seed: int = 1) -> list[Job]:
    """n jobs of WK4 stretched to P workstations (module docstring)."""
    rng = random.Random(seed)
    scale = P / 32
    mean_interarrival_s = 16.40 * scale / (P * load)
    widths = (max(1, P // 8), max(1, P // 2), 2 * P)
    jobs, t = [], 0.0
    for i in range(n):
        W = rng.expovariate(1 / 101) if rng.random() < 0.125 else rng.expovariate(1 / 1.3)
        W = max(W, 1e-6) * scale
        pmax = rng.choice(widths)
        mu = rng.choice((0.2, 0.4, math.inf))
        alpha = 0.0 if mu == math.inf else W * (1 / pmax**2) ** mu
        jobs.append(Job(i, t, SevcikModel(W, alpha, W / pmax**2, pmax), phases=10))
        t += rng.expovariate(1 / mean_interarrival_s)
    return jobs


def timed_run(jobs: list[Job], name: str, P: int) -> tuple[SimResult, float, list[int]]:
    """One simulation with each decide() call timed; (result, wall s, per-call ns)."""
    policy = get_policy(name)
    inner = policy.decide
    calls_ns: list[int] = []
    clock = time.perf_counter_ns

    def decide(snap):
        t0 = clock()
        out = inner(snap)
        calls_ns.append(clock() - t0)
        return out

    policy.decide = decide  # the engine binds policy.decide once, so this times every call
    t0 = time.perf_counter()
    res = simulate(jobs, policy, P)
    return res, time.perf_counter() - t0, calls_ns


def peak_mib(jobs: list[Job], name: str, P: int) -> float:
    tracemalloc.start()
    try:
        simulate(jobs, get_policy(name), P)
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def allocated(res: SimResult, P: int) -> float:
    """Mean fraction of the P workstations held by some job from the first arrival to the last
    one (the stream's steady part; the tail after the last arrival drains an emptying machine)."""
    arrivals = [e.time for e in res.timeline if e.event == "arrive"]
    t_first, t_last = min(arrivals), max(arrivals)
    held: dict[int | str, int] = {}
    total, area, t_prev = 0, 0.0, t_first
    for e in res.timeline:  # in time order
        if e.time > t_last:
            break
        if e.time > t_prev:
            area += total * (e.time - t_prev)
            t_prev = e.time
        now = 0 if e.event == "finish" else len(e.procs)
        total += now - held.get(e.job, 0)
        held[e.job] = now
    return area / (P * (t_last - t_first)) if t_last > t_first else 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="64,256,1024", help="workstation counts, comma-separated")
    ap.add_argument("--jobs-per-ws", type=float, default=16.0, help="jobs in the stream per workstation")
    ap.add_argument("--load", type=float, default=0.9, help="offered load (eq. 10)")
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--no-memory", action="store_true", help="skip the tracemalloc runs (they double the time)")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    names = [s.strip().upper() for s in args.policies.split(",")]
    rows = []
    with console.status("") as status:
        for P in sizes:
            jobs = wk4_scaled(max(1, round(args.jobs_per_ws * P)), P, args.load)
            for name in names:
                status.update(f"P={P} {name}: {len(jobs)} jobs")
                res, wall_s, calls = timed_run(jobs, name, P)
                ns = np.array(calls, dtype=float)
                mem = "-" if args.no_memory else f"{peak_mib(jobs, name, P):.1f}"
                rows.append([str(P), name, f"{len(jobs):,}", f"{len(res.timeline):,}", f"{wall_s:.2f}",
                             f"{len(calls):,}", f"{np.median(ns) / 1e3:.1f}", f"{np.percentile(ns, 99) / 1e3:.1f}",
                             f"{ns.sum() / 1e9 / wall_s:.0%}", f"{allocated(res, P):.0%}",
                             f"{res.summary()['mean_response']:.4g}", mem])
                console.log(f"P={P} {name}: {wall_s:.2f} s")
    out = Table(title=f"simulate() at scale: WK4 stretched to P, load {args.load}, "
                      f"{args.jobs_per_ws:g} jobs per workstation")
    for col in ("P", "policy", "jobs", "events", "wall s", "decide calls", "decide median µs", "decide p99 µs",
                "in decide", "allocated", "mean response s", "peak MiB"):
        out.add_column(col, justify="right")
    for row in rows:
        out.add_row(*row)
    Console(width=180).print(out)


if __name__ == "__main__":
    main()
