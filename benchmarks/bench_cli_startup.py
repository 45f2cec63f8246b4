"""Start-up cost of the command line: `nowlab simulate` as a whole command beside the same work in-process.

    .venv/bin/python benchmarks/bench_cli_startup.py [--jobs 20000] [--policy EQUI] [--P 64] [--rounds 5]

One jobs CSV (A&S workload WK4 at offered load 0.7, see bench_scheduler_engine.wk4) is written
once. Then, interleaved over the rounds (the order rotates each round, as this host's speed
drifts with a lag-1 autocorrelation of ~0.8), each of these runs as a fresh process:

  (a) `nowlab simulate JOBS -p POLICY -P P` (the whole command: interpreter, typer, imports, work);
  (b) `python -c` doing the same in-process: read the CSV, simulate, write both CSVs with the
      same calls. Its wall time is timed from outside, and its work (read + simulate + write,
      without interpreter start and imports) from inside;
  (c) `nowlab --help`, and (d) `python -c pass`, the interpreter's own floor.

The issue's target: (a) within 2x of a plain in-process simulation. Prints medians and ranges,
and a/b per round against 2x for three readings of (b): its wall time, its work (read +
simulate + write), and simulate() alone (the strictest: (a) also reads and writes). Outputs of
(a) and (b) are compared byte for byte, so both did the same work.
"""
from __future__ import annotations

import argparse
import csv
import filecmp
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import console, median, table
from bench_scheduler_engine import wk4

from testbed.progress import progress_bar

TARGET_RATIO = 2.0  # issue 13, item 9: the whole command within 2x the in-process simulation

IN_PROCESS = """
import json, sys, time
t0 = time.perf_counter()
from scheduler.engine import simulate
from scheduler.jobs_csv import read_jobs
from scheduler.registry import get_policy
t1 = time.perf_counter()
jobs_csv, policy, P, timeline_out, jobs_out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
jobs = read_jobs(jobs_csv)
t2 = time.perf_counter()
result = simulate(jobs, get_policy(policy), P)
t3 = time.perf_counter()
result.timeline_dataframe().to_csv(timeline_out, index=False)
result.to_dataframe().to_csv(jobs_out, index=False)
t4 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "read": t2 - t1, "simulate": t3 - t2, "write": t4 - t3, "work": t4 - t1}))
"""


def write_jobs(path: Path, n: int, P: int) -> None:
    """n WK4 jobs in the `nowlab simulate` CSV format (id, arrival, W, alpha, beta, pmax, phases)."""
    with path.open("w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["id", "arrival", "W", "alpha", "beta", "pmax", "phases"])
        for job in wk4(n, 0.7, P=P):
            m = job.model
            out.writerow([job.id, repr(job.arrival), repr(m.W), repr(m.alpha), repr(m.beta), m.pmax, job.phases])


def wall(argv: list[str], cwd: Path) -> tuple[float, str]:
    """Wall seconds of one process, and its stdout; a failure stops the benchmark with its stderr."""
    t0 = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600)
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        sys.exit(f"{argv[0]} {argv[1]} failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return seconds, done.stdout


def spread(values: list[float]) -> tuple[str, str, str]:
    """Median, min and max, as table cells."""
    return f"{median(values):.3f}", f"{min(values):.3f}", f"{max(values):.3f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=20000)
    ap.add_argument("--policy", default="EQUI")
    ap.add_argument("--P", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    if args.rounds < 1 or args.jobs < 1 or args.P < 1:
        sys.exit("--rounds, --jobs and --P must be >= 1")
    nowlab = Path(sys.executable).parent / "nowlab"
    if not nowlab.exists():
        sys.exit(f"no nowlab command beside {sys.executable}: install the project in this venv")

    with tempfile.TemporaryDirectory(prefix="bench-cli-") as tmp:
        work = Path(tmp)
        jobs_csv = work / "jobs.csv"
        write_jobs(jobs_csv, args.jobs, args.P)
        sim = [args.policy, "-P", str(args.P)]
        runs = {
            "a": [str(nowlab), "simulate", str(jobs_csv), "-p", *sim, "--timeline", "a_tl.csv",
                  "--jobs-out", "a_jobs.csv"],
            "b": [sys.executable, "-c", IN_PROCESS, str(jobs_csv), args.policy, str(args.P), "b_tl.csv",
                  "b_jobs.csv"],
            "c": [str(nowlab), "--help"],
            "d": [sys.executable, "-c", "pass"],
        }
        times: dict[str, list[float]] = {k: [] for k in runs}
        inside: list[dict[str, float]] = []
        same = True
        order = list(runs)
        with progress_bar() as update:
            for r in range(args.rounds):
                for k in order[r % len(order):] + order[:r % len(order)]:
                    seconds, out = wall(runs[k], work)
                    times[k].append(seconds)
                    if k == "b":
                        inside.append(json.loads(out.strip().splitlines()[-1]))
                same &= all(filecmp.cmp(work / f"a_{f}", work / f"b_{f}", shallow=False)
                            for f in ("tl.csv", "jobs.csv"))
                update("rounds (a, b, c, d each)", r + 1, args.rounds)

    work_s = [x["work"] for x in inside]
    rows = [
        ["(a) nowlab simulate, whole command", *spread(times["a"])],
        ["(b) python -c, same work, wall", *spread(times["b"])],
        ["(b) in-process: read + simulate + write", *spread(work_s)],
        ["    of which imports (before the work)", *spread([x["import"] for x in inside])],
        ["    of which read", *spread([x["read"] for x in inside])],
        ["    of which simulate", *spread([x["simulate"] for x in inside])],
        ["    of which write (pandas to_csv)", *spread([x["write"] for x in inside])],
        ["(c) nowlab --help", *spread(times["c"])],
        ["(d) python -c pass", *spread(times["d"])],
    ]
    table(f"{args.jobs} jobs, {args.policy} on P={args.P}: seconds over {args.rounds} interleaved rounds",
          ["measure", "median s", "min s", "max s"], rows)
    ratio_wall = [a / b for a, b in zip(times["a"], times["b"])]
    ratio_work = [a / b for a, b in zip(times["a"], work_s)]
    ratio_sim = [a / x["simulate"] for a, x in zip(times["a"], inside)]
    table(f"whole command / in-process, per round (target <= {TARGET_RATIO:g}x)",
          ["ratio", "median", "min", "max", f"<= {TARGET_RATIO:g}x"],
          [["a / b wall", *spread(ratio_wall), "yes" if median(ratio_wall) <= TARGET_RATIO else "NO"],
           ["a / b in-process work", *spread(ratio_work), "yes" if median(ratio_work) <= TARGET_RATIO else "NO"],
           ["a / simulate() alone", *spread(ratio_sim), "yes" if median(ratio_sim) <= TARGET_RATIO else "NO"]])
    console.print(f"outputs of (a) and (b) identical in every round: {'yes' if same else 'NO'}")
    console.print(f"start-up of the command beyond the same work in-process: "
                  f"{median([a - w for a, w in zip(times['a'], work_s)]):.3f} s (median of a - b work)")


if __name__ == "__main__":
    main()
