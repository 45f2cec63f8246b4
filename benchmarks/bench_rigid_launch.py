"""Benchmark: the launch overhead of a rigid job, on the resident world and through mpiexec.

    .venv/bin/python -m benchmarks.bench_rigid_launch --sizes 1 2 4 8 --repeats 5

Brings up a local cluster of max(--sizes) workstations (this host's Open MPI, no containers)
and runs, through the live executor, one zero-work rigid job at a time at each size p:
`python3 -m workloads.rigid --work 0` on the resident pool, and the image's C kernel
(containers/kernels/ring.c, built here with mpicc) through mpiexec. Per path and p it prints
the launch cost the executor records (launch -> the program's start line, on one clock) and
the whole turnaround (launch -> the exit the executor saw: launch, MPI set-up and teardown), as
median, min and max over the repeats. Every run is audited (scheduler/live/audit.py); a problem
is printed, not hidden. On the local backend every rank shares this host's cores, so a figure
at p = 8 on 2 cores includes the ranks' contention for them.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

from rich.progress import Progress

from benchmarks._common import console, table

from scheduler.live import Arrival, LiveExecutor
from scheduler.live.audit import audit
from scheduler.live.stream import JobClass
from scheduler.model import RuntimeModel

RING_C = Path(__file__).resolve().parent.parent / "containers" / "kernels" / "ring.c"


def build_ring(folder: Path) -> str | None:
    """The C kernel built with this host's mpicc; None when there is none."""
    mpicc = shutil.which("mpicc")
    if mpicc is None:
        return None
    out = folder / "nowlab-ring"
    subprocess.run([mpicc, "-O2", "-o", str(out), str(RING_C)], check=True, capture_output=True, text=True)
    return str(out)


def one(cluster, argv: list[str], p: int) -> tuple[float, float, str, list[str]]:
    """(launch s, turnaround s, path, audit problems) of one zero-work rigid job on p workstations."""
    arrivals = [Arrival(0, JobClass("rigid", tuple(argv), RuntimeModel(0.0), rigid=True), 0.0, size=p)]
    result = LiveExecutor(arrivals, "FCFS", cluster.job_launcher(), cluster.workstations, cluster.controller_address,
                          run_timeout_s=120, allowed_networks=[cluster.control_network]).run()
    state, run = result.states[0], result.runs[0]
    return state.launch_s, run.exited_at - run.launched_at, state.launch_via, audit(result, arrivals)


def fmt(values: list[float]) -> str:
    return f"{statistics.median(values) * 1e3:.1f} ({min(values) * 1e3:.1f}-{max(values) * 1e3:.1f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", nargs="+", type=int, default=[1, 2, 4, 8])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    if min(args.sizes) < 1 or args.repeats < 1:
        ap.error("--sizes and --repeats must be >= 1")

    from testbed import lifecycle
    from testbed.backends.local import LocalBackend, local_spec

    rows, problems = [], []
    with tempfile.TemporaryDirectory(prefix="nowlab-bench-rigid-") as tmp, \
            lifecycle.cluster(local_spec(max(args.sizes)), backend=LocalBackend()) as cluster:
        ring = build_ring(Path(tmp))
        programs = [("pool", ["python3", "-m", "workloads.rigid", "--work", "0", "--iterations", "1"])]
        if ring is None:
            console.print("no mpicc on this host: the mpiexec rows are left out (apt-get install libopenmpi-dev)")
        else:
            programs.append(("mpiexec", [ring, "0", "1"]))
        cluster.job_launcher()  # the pool up before any timing
        with Progress(console=console, transient=True) as bar:
            task = bar.add_task("rigid launches", total=len(programs) * len(args.sizes) * args.repeats)
            for want, argv in programs:
                for p in args.sizes:
                    launch, turn = [], []
                    for _ in range(args.repeats):
                        l_s, t_s, via, found = one(cluster, argv, p)
                        if via != want:
                            problems.append(f"{want} p={p}: launched via {via}")
                        launch.append(l_s)
                        turn.append(t_s)
                        problems += [f"{want} p={p}: {x}" for x in found]
                        bar.advance(task)
                    rows.append([want, str(p), fmt(launch), fmt(turn), str(args.repeats)])
    table("rigid job launch overhead, local backend (ms: median (min-max))",
          ["path", "p", "launch -> start line", "launch -> exit", "runs"], rows)
    for problem in problems:
        console.print(f"problem: {problem}", markup=False)


if __name__ == "__main__":
    main()
