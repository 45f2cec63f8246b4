"""Speed of scheduler.engine.simulate, and a side-by-side with plain SimPy.

Workload: Anastasiadis & Sevcik Table 3 (WK4: W hyper-exponential, pmax in
{4, 16, 64}, beta = W/pmax^2, alpha = W (1/pmax^2)^mu, mu in {0.2, 0.4, inf}),
Poisson arrivals at the given offered load on P = 32, 10 phases per job.

    .venv/bin/python -m benchmarks.bench_scheduler_engine [--jobs 20000] [--load 0.7] [--repeats 3]

Prints, as medians over the repeats: seconds and jobs/s for every policy, then
AEP in our engine vs AEP written directly on SimPy (same rules, same
placement, same workload; the runs are checked to agree job by job).
simulate() turns the cyclic GC off while it runs, so SimPy is also timed
with it off, for a like-for-like figure.
"""
from __future__ import annotations

import argparse
import gc
import math
import random
import statistics
import time

import simpy
from rich.console import Console
from rich.table import Table

from scheduler.alloc import take_mask
from scheduler.engine import simulate
from scheduler.model import Job, SevcikModel
from scheduler.registry import get_policy, policy_names

TARGET_SECONDS = 2.0  # the bar: 20,000 jobs through any policy


def wk4(n: int, load: float, P: int = 32, seed: int = 1) -> list[Job]:
    """n jobs of A&S workload WK4 at the given offered load (eq. 10)."""
    rng = random.Random(seed)
    mean_interarrival = 16.40 / (P * load)  # E(T(1)) of WK4, Table 3
    jobs, t = [], 0.0
    for i in range(n):
        W = rng.expovariate(1 / 101) if rng.random() < 0.125 else rng.expovariate(1 / 1.3)
        W = max(W, 1e-6)
        pmax = rng.choice((4, 16, 64))
        mu = rng.choice((0.2, 0.4, math.inf))
        alpha = 0.0 if mu == math.inf else W * (1 / pmax**2) ** mu
        jobs.append(Job(i, t, SevcikModel(W, alpha, W / pmax**2, pmax), phases=10))
        t += rng.expovariate(1 / mean_interarrival)
    return jobs


def simpy_aep(jobs: list[Job], P: int) -> list[tuple[float, float, tuple[int, ...]]]:
    """AEP written directly on SimPy, producing what our engine produces for it.

    Same rules (FIFO queue; target max(1, P // (waiting + running)); each job
    min(target, pmax, free); rounds at arrivals and completions) and the same
    placement (first-fit block, via scheduler.alloc.take_mask), so the two
    runs must agree job by job. Returns (start, finish, processors) per job.
    """
    env = simpy.Environment()
    state = {"free": (1 << P) - 1, "running": 0}
    queue: list[tuple[int, Job]] = []
    out: list = [None] * len(jobs)

    def run(i: int, job: Job, procs: tuple[int, ...], mask: int):
        start = env.now
        yield env.timeout(job.model.T(len(procs)))
        out[i] = (start, env.now, procs)
        state["free"] |= mask
        state["running"] -= 1
        schedule()

    def schedule():
        free = state["free"]
        if not queue or not free:
            return
        target = max(1, P // (len(queue) + state["running"]))
        count = free.bit_count()
        started = 0
        for i, job in queue:
            if not count:
                break
            pmax = P if job.model.pmax is None else min(P, job.model.pmax)
            n = min(target, pmax, count)
            procs, left = take_mask(free, n)
            env.process(run(i, job, procs, free & ~left))
            free, count = left, count - n
            started += 1
        state["free"] = free
        state["running"] += started
        del queue[:started]

    def arrivals():
        for i, job in enumerate(jobs):
            yield env.timeout(job.arrival - env.now)
            queue.append((i, job))
            schedule()

    env.process(arrivals())
    env.run()
    return out


def without_gc(fn, *args):
    """Run fn with the cyclic GC off, as simulate() does internally."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return fn(*args)
    finally:
        if enabled:
            gc.enable()


def median_seconds(fn, repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=20000)
    ap.add_argument("--load", type=float, default=0.7)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--P", type=int, default=32)
    args = ap.parse_args()
    jobs = wk4(args.jobs, args.load, args.P)
    console = Console()

    table = Table(title=f"simulate(): {args.jobs} WK4 jobs, load {args.load}, P={args.P}, "
                        f"{args.repeats} interleaved runs each")
    for col in ("policy", "median s", "min s", "jobs/s (median)", "median s, no timeline",
                "mean response s", f"<= {TARGET_SECONDS} s"):
        table.add_column(col, justify="right")
    worst = 0.0
    for name in policy_names():
        with_tl, without_tl = [], []
        for _ in range(args.repeats):  # alternate, so a burst of outside load hits both alike
            s, res = median_seconds(lambda: simulate(jobs, get_policy(name), args.P), 1)
            with_tl.append(s)
            s, _ = median_seconds(lambda: simulate(jobs, get_policy(name), args.P, timeline=False), 1)
            without_tl.append(s)
        s_tl, s_nt = statistics.median(with_tl), statistics.median(without_tl)
        worst = max(worst, s_tl)
        table.add_row(name, f"{s_tl:.3f}", f"{min(with_tl):.3f}", f"{args.jobs / s_tl:,.0f}", f"{s_nt:.3f}",
                      f"{res.summary()['mean_response']:.4g}", "yes" if s_tl <= TARGET_SECONDS else "NO")
    console.print(table)

    # Interleaved rounds, so a burst of load from other work on the machine hits all three alike.
    runs = {"ours": [], "simpy": [], "simpy_nogc": []}
    for _ in range(args.repeats):
        for label, fn in (("ours", lambda: simulate(jobs, get_policy("AEP"), args.P, timeline=False)),
                          ("simpy", lambda: simpy_aep(jobs, args.P)),
                          ("simpy_nogc", lambda: without_gc(simpy_aep, jobs, args.P))):
            seconds, out = median_seconds(fn, 1)
            runs[label].append(seconds)
            if label == "ours":
                ours = out
            elif label == "simpy":
                theirs = out
    ours_s, simpy_s, simpy_nogc_s = (statistics.median(runs[k]) for k in ("ours", "simpy", "simpy_nogc"))
    ours_mean = ours.summary()["mean_response"]
    simpy_mean = statistics.fmean(f - job.arrival for (_, f, _), job in zip(theirs, jobs))
    agree = all(math.isclose(r.start, s, rel_tol=1e-12, abs_tol=1e-9)
                and math.isclose(r.finish, f, rel_tol=1e-12, abs_tol=1e-9) and r.allocations == (procs,)
                for r, (s, f, procs) in zip(ours.jobs, theirs))
    side = Table(title=f"AEP side by side: {args.jobs} jobs, median of {args.repeats}")
    for col in ("engine", "s", "jobs/s", "mean response s"):
        side.add_column(col, justify="right")
    side.add_row("scheduler.engine", f"{ours_s:.3f}", f"{args.jobs / ours_s:,.0f}", f"{ours_mean:.6g}")
    side.add_row("plain SimPy", f"{simpy_s:.3f}", f"{args.jobs / simpy_s:,.0f}", f"{simpy_mean:.6g}")
    side.add_row("plain SimPy, GC off", f"{simpy_nogc_s:.3f}", f"{args.jobs / simpy_nogc_s:,.0f}", "same")
    console.print(side)
    console.print(f"speed ratio (SimPy time / ours): {simpy_s / ours_s:.2f}x "
                  f"({simpy_nogc_s / ours_s:.2f}x with SimPy's GC off too, as ours runs); the two runs "
                  f"{'agree' if agree else 'DISAGREE'} job by job (start, finish, processors); slowest policy {worst:.3f} s "
                  f"({'within' if worst <= TARGET_SECONDS else 'OVER'} the {TARGET_SECONDS} s target)")


if __name__ == "__main__":
    main()
