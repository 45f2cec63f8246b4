"""The controller's cost per workstation (issue 18, docs/scale.md): up, a monitor sample, a launch, a resize.

    # a running cluster (ops only: monitor, launch, resize):
    nice -n 19 .venv/bin/python -m benchmarks.bench_controller_cost NAME
    # bring up t-cost-N for each size, measure up and the ops, take it down, fit and extrapolate:
    nice -n 19 .venv/bin/python -m benchmarks.bench_controller_cost --up 8,16,32

Each operation reports wall seconds, the controller's CPU seconds (this process and the
children it waited for, e.g. nsenter), the container engine's CPU seconds (dockerd,
containerd, its shims and runc, read from /proc: what a `docker exec` really costs), and
the most threads this process held. With several sizes it fits each figure to the model
of docs/scale.md (a + b n, or a + b n + c n(n-1)/2 for up, whose ssh masters are pairs) and
prints the extrapolation to 256 and 1,024 workstations on one controller.

Sizes: --up N brings up N workstations of min(0.1, 0.85 x cores / N) cores each, no links
shaped below 1 Gbit/s, no owners, so the figures are the controller's, not the load's.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import numpy as np
from benchmarks._common import console, table

import testbed
from scheduler.live import Arrival, LiveExecutor
from experiments.traces.live_inputs import job_class
from testbed import pool, warm
from testbed.load.monitor import Monitor

ENGINE_PROCESSES = {"dockerd", "containerd", "containerd-shim", "containerd-shim-runc-v2", "runc"}
EXTRAPOLATE_TO = (256, 1024)
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Cost:
    """One operation's measured cost."""

    op: str
    n: int  # workstations
    wall_s: float
    controller_cpu_s: float
    engine_cpu_s: float
    peak_threads: int


def engine_cpu_by_pid(proc: Path = Path("/proc")) -> dict[int, float]:
    """CPU seconds of each container engine process, its reaped children included (runc)."""
    out: dict[int, float] = {}
    for stat in proc.glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue  # ended between the listing and the read
        comm = text[text.index("(") + 1:text.rindex(")")]
        if comm in ENGINE_PROCESSES:
            fields = text[text.rindex(")") + 2:].split()
            out[int(stat.parent.name)] = sum(int(x) for x in fields[11:15]) / CLOCK_TICKS  # utime stime cutime cstime
    return out


def engine_cpu_since(before: dict[int, float]) -> float:
    """The engine's CPU seconds since `before`, over the processes alive now. A shim that
    exited meanwhile (a previous cluster's, still going down) takes its seconds with it: a
    sum over all processes went negative then (-22.7 s once). So this undercounts by what
    processes that exited spent in the span, and never goes below 0."""
    return sum(cpu - before.get(pid, 0.0) for pid, cpu in engine_cpu_by_pid().items())


def controller_cpu_s() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


@contextlib.contextmanager
def measured(op: str, n: int, out: list[Cost]) -> Iterator[None]:
    """Time the block; a sampler thread (20 Hz, sleeping) keeps the most threads seen."""
    peak = threading.active_count()
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not stop.wait(0.05):
            peak = max(peak, threading.active_count())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    cpu0, eng0, t0 = controller_cpu_s(), engine_cpu_by_pid(), time.perf_counter()
    try:
        yield
    finally:
        wall = time.perf_counter() - t0
        stop.set()
        sampler.join()
        out.append(Cost(op, n, wall, controller_cpu_s() - cpu0, engine_cpu_since(eng0), peak - 1))


def spec_of(n: int) -> testbed.ClusterSpec:
    cpu = round(min(0.1, 0.85 * (os.cpu_count() or 1) / n), 3)
    return testbed.from_dict({"name": f"t-cost-{n}", "defaults": {"cpu": cpu},
                              "workstation": [{"name": "ws", "count": n}]})


def measure_up(n: int, out: list[Cost]) -> testbed.Cluster:
    """`up` in its stages: workstations and ssh (Cluster.provision), then the warm paths and world lifecycle.start started."""
    stages: dict[str, float] = {}

    def progress(stage: str, _done: int, _total: int) -> None:
        stages.setdefault(stage, time.perf_counter())

    with measured("up: create + ssh ready", n, out):
        c = testbed.up(spec_of(n), progress=progress)
    try:
        with measured("up: warm (ssh masters, zygotes)", n, out):
            warm.wait_warm(c, timeout=max(60.0, 2.0 * n))
        with measured("up: resident MPI world", n, out):
            pool.ensure(c)  # its allowance grows with n and the caps (124 s at 32 x 0.053 core)
    except BaseException:
        c.down()
        raise
    console.print(f"n={n}: stages began at " + ", ".join(f"{k} +{v - min(stages.values()):.2f} s"
                                                        for k, v in sorted(stages.items(), key=lambda kv: kv[1])))
    return c


def measure_ops(c: testbed.Cluster, out: list[Cost], samples: int, launches: int) -> None:
    n = len(c.workstations)
    mon = Monitor(c)
    for _ in range(samples):  # what Monitor.sample reads each interval, across every workstation
        with measured("monitor sample", n, out):
            mon._read()
    launcher = c.job_launcher()
    for _ in range(launches):  # one job over every workstation, through the resident world
        with measured("launch (pool, all ws)", n, out):
            launcher.mpirun_popen(c.workstations, ["python3", "-m", "workloads.hello"]).wait(timeout=120)
    # a resize: EQUI starts job 0 on every workstation, job 1 arrives, job 0 shrinks to half and is relaunched
    cls = job_class("synthetic", {"argv": ["python3", "-m", "workloads.synthetic", "--phases", "6", "--mults",
                                           "4000000", "--redist-bytes", "65536"],
                                  "W": 4.0, "alpha": 0.5, "beta": 0.05, "pmax": n})
    arrivals = [Arrival(0, cls, 0.0), Arrival(1, cls, 3.0)]
    with measured("resize run (EQUI, 2 jobs)", n, out):
        result = LiveExecutor(arrivals, "EQUI", launcher, c.workstations, c.controller_address,
                              run_timeout_s=600).run()
    changed = [x for x in result.resizes if x.partition_at is not None and x.running_at is not None]
    for x in changed:  # the controller-side part of each resize: partition sent -> running again
        out.append(Cost(f"resize ({x.kind}): partition -> running", n, x.running_at - x.partition_at,
                        float("nan"), float("nan"), -1))


def fit(costs: list[Cost], op: str, quadratic: bool, value: Callable[[Cost], float]) -> str:
    """Least squares on the model's terms over the sizes measured; the figure at 256 and 1,024."""
    by_n: dict[int, list[float]] = {}
    for c in costs:
        if c.op == op and not np.isnan(value(c)):
            by_n.setdefault(c.n, []).append(value(c))
    if len(by_n) < (3 if quadratic else 2):
        return "-"
    n = np.array(sorted(by_n), dtype=float)
    y = np.array([statistics.median(by_n[int(k)]) for k in n])
    cols = [np.ones_like(n), n] + ([n * (n - 1) / 2] if quadratic else [])
    coef, *_ = np.linalg.lstsq(np.column_stack(cols), y, rcond=None)
    at = [float(np.dot(coef, [1, m] + ([m * (m - 1) / 2] if quadratic else []))) for m in EXTRAPOLATE_TO]
    terms = f"{coef[0]:.3g} + {coef[1]:.3g} n" + (f" + {coef[2]:.3g} n(n-1)/2" if quadratic else "")
    return f"{terms}; " + ", ".join(f"{m}: {v:.3g}" for m, v in zip(EXTRAPOLATE_TO, at))


def report(costs: list[Cost]) -> None:
    rows = []
    for op in dict.fromkeys(c.op for c in costs):
        for n in sorted({c.n for c in costs if c.op == op}):
            mine = [c for c in costs if c.op == op and c.n == n]
            med = {k: statistics.median(getattr(c, k) for c in mine)
                   for k in ("wall_s", "controller_cpu_s", "engine_cpu_s")}
            rows.append([op, str(n), str(len(mine)), f"{med['wall_s']:.3f}", f"{med['wall_s'] / n * 1e3:.1f}",
                         f"{med['controller_cpu_s']:.3f}", f"{med['engine_cpu_s']:.3f}",
                         str(max(c.peak_threads for c in mine))])
    table("controller cost (medians)", ["operation", "n", "runs", "wall s", "wall ms / ws", "controller CPU s",
                                        "engine CPU s", "peak threads"], rows)
    fits = []
    for op in dict.fromkeys(c.op for c in costs):
        quadratic = op.startswith("up: warm")
        fits.append([op, fit(costs, op, quadratic, lambda c: c.wall_s),
                     fit(costs, op, quadratic, lambda c: c.controller_cpu_s + c.engine_cpu_s)])
    table("fitted to the sizes measured, extrapolated (one controller, one host's engine)",
          ["operation", "wall s", "CPU s (controller + engine)"], fits)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cluster", nargs="?", help="a running cluster: measure the ops on it (not up)")
    ap.add_argument("--up", help="sizes to bring up one after another, e.g. 8,16,32 (each taken down after)")
    ap.add_argument("--samples", type=int, default=10, help="monitor samples per size")
    ap.add_argument("--launches", type=int, default=5, help="launches per size")
    args = ap.parse_args()
    if bool(args.cluster) == bool(args.up):
        ap.error("name a running cluster, or give --up SIZES (not both)")
    console.width = max(console.width, 160)
    costs: list[Cost] = []
    if args.cluster:
        c = testbed.Cluster.attach(args.cluster)
        measure_ops(c, costs, args.samples, args.launches)
    else:
        failed: list[str] = []
        for n in (int(s) for s in args.up.split(",")):
            console.print(f"bringing up t-cost-{n} ...")
            try:
                c = measure_up(n, costs)
            except (TimeoutError, RuntimeError, OSError) as exc:  # a size that fails is a finding, not the end
                failed.append(f"n={n}: {type(exc).__name__}: {str(exc)[:200]}")
                continue
            try:
                measure_ops(c, costs, args.samples, args.launches)
            finally:
                c.down()
        for line in failed:
            console.print(f"[red]failed[/] {line}")
    report(costs)


if __name__ == "__main__":
    main()
