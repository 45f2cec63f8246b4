"""Benchmark: does a job run slower when the rest of the host's cores sit idle?

    .venv/bin/python -m checks.idle_cores --reps 6
    .venv/bin/python -m checks.idle_cores --reps 2 --cg-iterations 200   # short

The demo's cells (experiments/results/demo/, 24 Nov 2026) ran CG on four workstations about
10% slower than its profile when it was the only job in the cluster, and on time when other
jobs kept the other workstations busy; the meter saw neither (its factor was the same idle
and busy). One explanation is this host's idle state: a KVM guest whose vCPU has nothing to
run halts, and a rank waking from a polite wait (workloads/polite.py: test, sleep 0.2 ms)
then waits for the vCPU to be woken; on a busy core it does not. This benchmark measures it
side by side in one run: on `compose/specs/now8-governed.toml`, the same jobs with the host
cores otherwise idle, and with one SCHED_IDLE busy loop per host core outside the cluster
(`fill`), which keeps the vCPUs from halting and takes next to nothing from the
workstations (weight 3 against their groups' 1024). Arms alternate, so the host's slow drift
hits both alike. A third arm, `poll`, asks the kernel for no idle exit latency instead
(PM QoS: 0 written to /dev/cpu_dma_latency and the file held open; the guest's cpuidle then
polls rather than halts; this guest's haltpoll driver has guest_halt_poll_ns = 0, so
by default it never polls). Jobs: CG on ws1-4 (two workstations on each core, polite waits every
iteration), CG on all eight, and the synthetic job on one workstation (no messages: a
control). Prints one JSON line per run, then medians, spreads and each arm's ratio to idle.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import struct
import subprocess
import sys
import time
from pathlib import Path

from benchmarks._common import table
from testbed import cluster, state
from testbed.spec import load as load_spec
from testbed.meter import speed_over
from workloads.host.malleable import parse_result

SPEC = Path(__file__).resolve().parent.parent / "compose" / "specs" / "now8-governed.toml"
# one busy loop pinned to a host core at SCHED_IDLE: the core never idles, and any runnable
# task (a workstation's group, the keeper) takes it at once
FILL = ("import os, sys\n"
        "os.sched_setaffinity(0, {int(sys.argv[1])})\n"
        "os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))\n"
        "while True:\n    pass\n")


def start_fill(cores: list[int]) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", FILL, str(k)]) for k in cores]


def stop_fill(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        p.terminate()
    for p in procs:
        p.wait(10)


class Arm:
    """What keeps the host cores from idling during one arm's runs (a context manager)."""

    def __init__(self, name: str, cores: list[int]):
        if name not in ARMS:
            raise SystemExit(f"--arms: unknown {name!r} (known: {', '.join(ARMS)})")
        self.name, self.cores = name, cores
        self._fill: list[subprocess.Popen] = []
        self._qos = None

    def __enter__(self) -> "Arm":
        if self.name == "fill":
            self._fill = start_fill(self.cores)
        elif self.name == "poll":
            self._qos = open("/dev/cpu_dma_latency", "wb", buffering=0)  # held: the request lasts while open
            self._qos.write(struct.pack("i", 0))
        return self

    def __exit__(self, *exc: object) -> None:
        stop_fill(self._fill)
        if self._qos is not None:
            self._qos.close()


ARMS = ("idle", "poll", "fill")


def one_run(c, job: str, hosts: list[str], argv: list[str]) -> dict:
    full = [*argv, "--job", f"idle-{job.replace(' p=', '-p')}-{time.time_ns() % 10**9}", "--hosts", ",".join(hosts)]
    result = c.mpirun_popen(hosts, full).wait(1800)
    t_end = time.time()
    report = parse_result(result.stdout)
    if result.exit_code != 0 or report is None:
        raise RuntimeError(f"{job}: exit {result.exit_code}: {result.stderr[-1000:]}")
    raw = float(report["compute_s"])
    d = state.cluster_dir(c.name)
    speeds = [speed_over(d, ws, t_end - raw, t_end).speed for ws in hosts]
    return {"raw_s": raw, "delivered": min(speeds) if None not in speeds else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=6, help="runs of each job in each arm")
    parser.add_argument("--cg-n", type=int, default=2500, help="the demo's CG class: n 2500")
    parser.add_argument("--cg-iterations", type=int, default=400)
    parser.add_argument("--syn-work", type=float, default=0.4, help="reference-s per phase, 10 phases")
    parser.add_argument("--arms", nargs="+", default=list(ARMS), help="idle (first: the baseline), poll, fill")
    parser.add_argument("--name", default="bench-idle", help="the cluster's name (now8-governed's workstations)")
    parser.add_argument("--keep", type=Path, default=None, help="write the runs as JSON here")
    args = parser.parse_args()
    cg = ["python3", "-m", "workloads.cg", "--n", str(args.cg_n), "--iterations", str(args.cg_iterations)]
    syn = ["python3", "-m", "workloads.synthetic", "--phases", "10", "--work", str(args.syn_work),
           "--redist-bytes", "0"]
    base = load_spec(SPEC)
    # the keeper would hold the cores polling for the cluster's whole life: here each arm decides
    spec = base.model_copy(update={"name": args.name,
                                   "defaults": base.defaults.model_copy(update={"host_idle": "halt"})})
    runs: list[dict] = []
    cores = sorted(os.sched_getaffinity(0))
    with cluster(spec) as c:
        ws = c.workstations
        jobs = {"cg p=4": (ws[:4], cg), "cg p=8": (ws[:8], cg), "syn p=1": (ws[:1], syn)}
        time.sleep(3.0)  # the governor settles
        for rep in range(args.reps):
            order = args.arms[rep % len(args.arms):] + args.arms[:rep % len(args.arms)]  # rotated each rep
            for arm in order:
                with Arm(arm, cores):
                    time.sleep(1.0)
                    for job, (hosts, argv) in jobs.items():
                        row = {"bench": "idle_cores", "rep": rep, "arm": arm, "job": job,
                               **one_run(c, job, hosts, argv)}
                        runs.append(row)
                        print(json.dumps(row), flush=True)
    if args.keep:
        args.keep.write_text(json.dumps(runs, indent=1))
    rows = []
    first = args.arms[0]
    for job in jobs:
        for arm in args.arms:
            mine = [r for r in runs if r["job"] == job and r["arm"] == arm]
            base_med = statistics.median(r["raw_s"] for r in runs if r["job"] == job and r["arm"] == first)
            med = statistics.median(r["raw_s"] for r in mine)
            speeds = [r["delivered"] for r in mine if r["delivered"] is not None]
            rows.append([job, arm, str(len(mine)), f"{med:.2f}",
                         f"{min(r['raw_s'] for r in mine):.2f}-{max(r['raw_s'] for r in mine):.2f}",
                         f"{med / base_med:.3f}", f"{statistics.median(speeds):.3f}" if speeds else "-"])
    table(f"a job's time with the host cores left to idle and kept from idling (ratio to {first})",
          ["job", "arm", "runs", "median s", "range s", f"median / {first}", "delivered ref. cores (median)"], rows)

if __name__ == "__main__":
    main()
