"""Start-up cost of the command line: `nowlab simulate` as a whole command beside simulate() in-process.

    .venv/bin/python -m benchmarks.bench_cli_startup [--jobs 20000] [--policy EQUI] [--P 64] [--rounds 5]

One jobs CSV (A&S workload WK4 at offered load 0.7, see bench_scheduler_engine.wk4) is written
once. Then, interleaved over the rounds (the order rotates each round, as this host's speed
drifts with a lag-1 autocorrelation of ~0.8), each of these runs as a fresh process:

  (a) `nowlab simulate JOBS -p POLICY -P P --timeline --jobs-out` (the whole command: interpreter,
      typer, imports, read, simulate, write both CSVs, print the summary);
  (b) `python -c` making the command's own calls in-process (read_jobs, simulate, then
      experiments.traces.csv_out's write_timeline and write_jobs, with the command's gc.freeze() before
      reading and after simulating), each timed from inside, simulate() also in CPU time;
  (e) the same with pandas writing (`timeline_dataframe().to_csv`, `to_dataframe().to_csv`), the
      way the command wrote before: what the stdlib writer saves;
  (f) `python -c` importing what the simulate command imports, and nothing else;
  (c) `nowlab --help`, and (d) `python -c pass`, the interpreter's own floor.

The issue's target (item 9): (a) within 2x of a plain in-process simulation of the same policy,
i.e. a / (b's simulate() alone), per round, in wall time; the same ratio in CPU time (user +
system of (a)'s process over simulate()'s process_time) is printed beside it, as wall times on
this shared host swing with other work. Also printed: a against b's whole work, and where
(a)'s time beyond simulate() goes. The CSVs of (a), (b) and (e) are compared byte for byte every
round, so all three did the same work and the stdlib writer's files are pandas' files.
"""
from __future__ import annotations

import argparse
import csv
import filecmp
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks._common import console, median, table
from benchmarks.bench_scheduler_engine import wk4
from testbed.progress import progress_bar

TARGET_RATIO = 2.0  # issue 13, item 9: the whole command within 2x the in-process simulation

IN_PROCESS = """
import gc, json, sys, time
t0 = time.perf_counter()
from experiments.traces.csv_out import write_jobs, write_timeline
from scheduler.engine import simulate
from experiments.traces.jobs_csv import read_jobs
from scheduler.registry import get_policy
t1 = time.perf_counter()
jobs_csv, policy, P, timeline_out, jobs_out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
gc.freeze()
jobs = read_jobs(jobs_csv)
t2 = time.perf_counter()
c2 = time.process_time()
result = simulate(jobs, get_policy(policy), P)
t3 = time.perf_counter()
c3 = time.process_time()
gc.freeze()
write_timeline(result, timeline_out)
t4 = time.perf_counter()
write_jobs(result, jobs_out)
t5 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "read": t2 - t1, "simulate": t3 - t2, "timeline": t4 - t3,
                  "jobs": t5 - t4, "work": t5 - t1, "simulate_cpu": c3 - c2}))
"""

WITH_PANDAS = """
import json, sys, time
from scheduler.engine import simulate
from experiments.traces.jobs_csv import read_jobs
from scheduler.registry import get_policy
jobs_csv, policy, P, timeline_out, jobs_out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
result = simulate(read_jobs(jobs_csv), get_policy(policy), P)
t0 = time.perf_counter()
import pandas
t1 = time.perf_counter()
result.timeline_dataframe().to_csv(timeline_out, index=False)
t2 = time.perf_counter()
result.to_dataframe().to_csv(jobs_out, index=False)
t3 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "timeline": t2 - t1, "jobs": t3 - t2}))
"""

COMMAND_IMPORTS = ("import nowlab.cli, rich.console, rich.table, experiments.traces.csv_out, scheduler.engine, "
                   "experiments.traces.jobs_csv, scheduler.registry")


def write_jobs(path: Path, n: int, P: int) -> None:
    """n WK4 jobs in the `nowlab simulate` CSV format (id, arrival, W, alpha, beta, pmax, phases)."""
    with path.open("w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["id", "arrival", "W", "alpha", "beta", "pmax", "phases"])
        for job in wk4(n, 0.7, P=P):
            m = job.model
            out.writerow([job.id, repr(job.arrival), repr(m.W), repr(m.alpha), repr(m.beta), m.pmax, job.phases])


def cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def wall(argv: list[str], cwd: Path) -> tuple[float, float, str]:
    """Wall and CPU (user + system) seconds of one process, and its stdout; a failure stops the
    benchmark with its stderr. CPU time is less disturbed by other work on this shared host."""
    c0, t0 = cpu_of_children(), time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600)
    seconds, cpu = time.perf_counter() - t0, cpu_of_children() - c0
    if done.returncode != 0:
        sys.exit(f"{argv[0]} {argv[1]} failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return seconds, cpu, done.stdout


def spread(values: list[float]) -> tuple[str, str, str]:
    """Median, min and max, as table cells."""
    return f"{median(values):.3f}", f"{min(values):.3f}", f"{max(values):.3f}"


def ratio_row(label: str, values: list[float], target: bool) -> list[str]:
    ok = "yes" if median(values) <= TARGET_RATIO else "NO"
    return [label, *spread(values), ok if target else ""]


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
        same_args = [str(jobs_csv), args.policy, str(args.P)]
        runs = {
            "a": [str(nowlab), "simulate", str(jobs_csv), "-p", args.policy, "-P", str(args.P),
                  "--timeline", "a_tl.csv", "--jobs-out", "a_jobs.csv"],
            "b": [sys.executable, "-c", IN_PROCESS, *same_args, "b_tl.csv", "b_jobs.csv"],
            "e": [sys.executable, "-c", WITH_PANDAS, *same_args, "e_tl.csv", "e_jobs.csv"],
            "f": [sys.executable, "-c", COMMAND_IMPORTS],
            "c": [str(nowlab), "--help"],
            "d": [sys.executable, "-c", "pass"],
        }
        times: dict[str, list[float]] = {k: [] for k in runs}
        cpu: dict[str, list[float]] = {k: [] for k in runs}
        inside: dict[str, list[dict[str, float]]] = {"b": [], "e": []}
        same = True
        order = list(runs)
        with progress_bar() as update:
            for r in range(args.rounds):
                for k in order[r % len(order):] + order[:r % len(order)]:
                    seconds, used, out = wall(runs[k], work)
                    times[k].append(seconds)
                    cpu[k].append(used)
                    if k in inside:
                        inside[k].append(json.loads(out.strip().splitlines()[-1]))
                same &= all(filecmp.cmp(work / f"a_{f}", work / f"{x}_{f}", shallow=False)
                            for f in ("tl.csv", "jobs.csv") for x in "be")
                update("rounds (a, b, e, f, c, d each)", r + 1, args.rounds)

    b, e = inside["b"], inside["e"]
    sim = [x["simulate"] for x in b]
    work_s = [x["work"] for x in b]
    rows = [
        ["(a) nowlab simulate, whole command", *spread(times["a"])],
        ["(a) its CPU time (user + system)", *spread(cpu["a"])],
        ["(b) in-process, the command's calls: wall", *spread(times["b"])],
        ["(b) read + simulate + write (no start-up)", *spread(work_s)],
        ["    of which read_jobs", *spread([x["read"] for x in b])],
        ["    of which simulate()", *spread(sim)],
        ["    simulate()'s CPU time", *spread([x["simulate_cpu"] for x in b])],
        ["    of which write timeline (csv_out)", *spread([x["timeline"] for x in b])],
        ["    of which write jobs (csv_out)", *spread([x["jobs"] for x in b])],
        ["(e) pandas: import", *spread([x["import"] for x in e])],
        ["(e) pandas: timeline frame + to_csv", *spread([x["timeline"] for x in e])],
        ["(e) pandas: jobs frame + to_csv", *spread([x["jobs"] for x in e])],
        ["(f) python + the simulate command's imports", *spread(times["f"])],
        ["(c) nowlab --help", *spread(times["c"])],
        ["(d) python -c pass", *spread(times["d"])],
    ]
    table(f"{args.jobs} jobs, {args.policy} on P={args.P}: seconds over {args.rounds} interleaved rounds",
          ["measure", "median s", "min s", "max s"], rows)

    beyond = [a - s for a, s in zip(times["a"], sim)]
    parts = [
        ["interpreter (d)", *spread(times["d"])],
        ["the command's imports (f - d)", *spread([f - d for f, d in zip(times["f"], times["d"])])],
        ["read_jobs", *spread([x["read"] for x in b])],
        ["write timeline", *spread([x["timeline"] for x in b])],
        ["write jobs", *spread([x["jobs"] for x in b])],
        ["rest: typer, summary, exit (a - f - b work)",
         *spread([a - f - w for a, f, w in zip(times["a"], times["f"], work_s)])],
        ["total: a - simulate()", *spread(beyond)],
    ]
    table("where (a)'s time beyond simulate() goes (seconds; each from its own process)",
          ["part", "median s", "min s", "max s"], parts)

    ratio_sim = [a / s for a, s in zip(times["a"], sim)]
    table(f"whole command / in-process, per round (target <= {TARGET_RATIO:g}x)",
          ["ratio", "median", "min", "max", f"<= {TARGET_RATIO:g}x"],
          [ratio_row("a / simulate() alone (the target)", ratio_sim, True),
           ratio_row("same in CPU time: a / simulate()",
                     [a / x["simulate_cpu"] for a, x in zip(cpu["a"], b)], True),
           ratio_row("a / b read + simulate + write", [a / w for a, w in zip(times["a"], work_s)], False),
           ratio_row("a / b wall", [a / w for a, w in zip(times["a"], times["b"])], False)])
    met = median(ratio_sim) <= TARGET_RATIO
    console.print(f"target (whole `nowlab simulate` <= {TARGET_RATIO:g}x simulate() in-process, median over "
                  f"rounds): {'MET' if met else 'NOT MET'} at {median(ratio_sim):.2f}x "
                  f"(rounds {min(ratio_sim):.2f}-{max(ratio_sim):.2f}x)")
    ratio_cpu = [a / x["simulate_cpu"] for a, x in zip(cpu["a"], b)]
    console.print(f"in CPU time (less disturbed by other work on the host): {median(ratio_cpu):.2f}x "
                  f"(rounds {min(ratio_cpu):.2f}-{max(ratio_cpu):.2f}x)")
    console.print(f"CSVs of (a), (b) and (e, pandas) identical in every round: {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
