"""Benchmark: where a launch and a resize spend their time: cold, warm, and on the resident pool.

    .venv/bin/python -m benchmarks.bench_launch                   # now8: 8 x 0.2 core, 100 Mbit/s
    .venv/bin/python -m benchmarks.bench_launch --n 4 --cpu 0.1   # smaller, while others share the host

Brings up its own cluster (--name, default he-bench-launch) unless --cluster NAME
is given, waits until its ssh masters and zygotes are up (testbed/warm.py), and
measures, cold (fresh ssh, `python3 -m`), warm (ssh masters, zygotes) and pool (the
resident MPI world, testbed/pool.py: what the executor uses) side by side in each repetition:
  * the steps: docker exec into the coordinator, one ssh from it, the numpy + mpi4py
    import, `mpiexec true` and `mpiexec python3 -m workloads.hello` at each p (pool:
    the hello as a `run` line, host to exit);
  * launch: MalleableJob.start() -> the coordinator's hello on the control channel
    (its first safe point follows at the end of its first phase) at each p;
  * resize of the synthetic and CG jobs 4->2->3 through MalleableJob.resize (total_s:
    preempt sent -> running again), against the target 0.5 s (shrink) or 1.0 s (grow)
    plus the bytes moved over the link rate.
Each figure is printed beside the one measured before this work (nowlab issue 12) and
the target. Medians over --reps, with min-max.
"""
from __future__ import annotations

import argparse
import contextlib
import statistics
import time
from dataclasses import dataclass
from typing import Callable, Sequence

from benchmarks._common import console, table
from rich.progress import Progress

from testbed import pool
from testbed.cluster import Cluster
from testbed.lifecycle import cluster
from testbed.remote_exec import RemoteProcess
from testbed.spec import from_dict
from testbed.units import parse_rate
from testbed.warm import MUX_PATH, wait_warm
from workloads.host.control_server import ControlServer
from workloads.host.malleable import MalleableJob

# Measured on now8 (0.2 core) before this work, nowlab issue 12 item 3.
BEFORE = {
    "docker exec true": None, "ssh ws2 true": 0.71, "import numpy": 1.01,
    "mpiexec true p=1": 0.26, "mpiexec true p=2": 1.24, "mpiexec true p=4": 2.44, "mpiexec true p=8": 4.73,
    "mpiexec hello p=1": 2.39, "mpiexec hello p=2": 3.52, "mpiexec hello p=4": 4.41, "mpiexec hello p=8": 6.63,
    "launch synthetic p=1": 2.4, "launch synthetic p=8": 6.6, "launch cg p=8": 8.4,
    "resize synthetic": 6.3, "resize cg": 6.7,
}
SYNTHETIC = ["python3", "-m", "workloads.synthetic", "--phases", "30", "--mults", "3000000", "--redist-bytes",
             str(512 * 1024)]
CG = ["python3", "-m", "workloads.cg", "--n", "500"]


@dataclass
class ColdLauncher:
    """The launch path before this work: a fresh ssh per host and `python3 -m` per rank."""

    cluster: Cluster

    def mpirun_popen(self, hosts: Sequence[str], argv: Sequence[str], *,
                     env: dict[str, str] | None = None) -> RemoteProcess:
        return self.cluster.start(hosts[0], self.cluster.mpi_argv(hosts, argv, env=env, fast=False))


def timed(fn: Callable[[], object]) -> float:
    t0 = time.monotonic()
    fn()
    return time.monotonic() - t0


def run_ok(c: Cluster, ws: str, argv: Sequence[str]) -> None:
    c.exec(ws, list(argv), timeout=120).check(" ".join(argv[:4]))


def pool_steps(c: Cluster, procs: list[int]) -> dict[str, float]:
    launcher, ws = c.job_launcher(), c.workstations
    out = {}
    for p in procs:
        def hello() -> None:
            res = launcher.mpirun_popen(ws[:p], ["python3", "-m", "workloads.hello"]).wait(120)
            if res.exit_code != 0:
                raise RuntimeError(f"pool hello p={p}: {res.stderr[-500:]}")
        out[f"mpiexec hello p={p}"] = timed(hello)
    return out


def steps(c: Cluster, procs: list[int], fast: bool) -> dict[str, float]:
    ws = c.workstations
    ssh = ["ssh", "-o", f"ControlPath={MUX_PATH}" if fast else "ControlPath=none", "-o", "ControlMaster=no"]
    out = {"docker exec true": timed(lambda: run_ok(c, ws[0], ["true"])),
           "ssh ws2 true": timed(lambda: run_ok(c, ws[0], [*ssh, ws[1], "true"])),
           "import numpy": timed(  # the zygote pays it once; warm ranks fork instead
lambda: run_ok(c, ws[0], [
               "python3", "-c", "import mpi4py; mpi4py.rc.initialize = False; import numpy; from mpi4py import MPI"]))}
    for p in procs:
        out[f"mpiexec true p={p}"] = timed(lambda: run_ok(c, ws[0], c.mpi_argv(ws[:p], ["true"], fast=fast)))
        out[f"mpiexec hello p={p}"] = timed(lambda: run_ok(
            c, ws[0], c.mpi_argv(ws[:p], ["python3", "-m", "workloads.hello"], fast=fast)))
    return out


def launch(c: Cluster, launcher: object, server: ControlServer, name: str, program: list[str],
           hosts: list[str]) -> float:
    job = MalleableJob(launcher, server, f"{name}-{time.time_ns() % 10**12}", program, hosts,
                       c.controller_address, timeout_s=120)
    with job:
        job.start()
        took = job._conn.hello.at - job._t0
        job.wait()
    return took


def resize(c: Cluster, launcher: object, server: ControlServer, name: str, program: list[str],
           rate_bit_s: float) -> list[tuple[str, float, float]]:
    """(label, total_s, target_s) for 4->2 and 2->3."""
    ws = c.workstations
    job = MalleableJob(launcher, server, f"{name}-{time.time_ns() % 10**12}", program, ws[:4],
                       c.controller_address, timeout_s=120)
    out = []
    with job:
        job.start()
        for new, base in ((ws[:2], 0.5), (ws[:3], 1.0)):
            rec = job.resize(new)
            if rec is None:
                raise RuntimeError(f"{name}: finished before the resize to {new}; give it more work")
            out.append((f"{rec.kind} {len(rec.from_hosts)}->{len(rec.to_hosts)}", rec.total_s,
                        base + rec.bytes_moved * 8 / rate_bit_s))
        job.wait()
    return out


def fmt(values: list[float]) -> str:
    if not values:
        return "-"
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=8, help="workstations (now8: 8)")
    ap.add_argument("--cpu", type=float, default=0.2, help="cores per workstation (now8: 0.2)")
    ap.add_argument("--egress", default="100mbit")
    ap.add_argument("--procs", type=int, nargs="+", default=[1, 2, 4, 8])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--no-resize", action="store_true")
    ap.add_argument("--cluster", help="a running cluster instead of bringing one up")
    ap.add_argument("--name", default="he-bench-launch")
    ap.add_argument("--modes", nargs="+", choices=["cold", "warm", "pool"], default=["cold", "warm", "pool"])
    args = ap.parse_args()
    if args.n < max(args.procs) or (not args.no_resize and args.n < 4):
        raise SystemExit(f"--n: {args.n} workstations cannot run p={max(args.procs)} (and resizes need 4)")
    rate = float(parse_rate(args.egress))
    spec = from_dict({"name": args.name, "workstation": [
        {"name": "ws", "count": args.n, "cpu": args.cpu, "egress": args.egress}]})
    data: dict[tuple[str, str], list[float]] = {}
    targets: dict[str, float] = {}

    def add(mode: str, key: str, value: float) -> None:
        data.setdefault((mode, key), []).append(value)

    with contextlib.ExitStack() as stack:
        c = Cluster.attach(args.cluster) if args.cluster else stack.enter_context(cluster(spec))
        console.print(f"warm-up (ssh masters, zygotes): {wait_warm(c):.1f} s")
        t0 = time.monotonic()
        pool.ensure(c)
        console.print(f"resident pool answering: {time.monotonic() - t0:.1f} s more")
        server = stack.enter_context(ControlServer(c.controller_address))
        every = {"cold": ColdLauncher(c), "warm": c, "pool": c.job_launcher()}
        launchers = {mode: every[mode] for mode in args.modes}
        with Progress(console=console) as bar:
            task = bar.add_task("measuring", total=args.reps)
            for _ in range(args.reps):
                for mode, launcher in launchers.items():
                    measured = pool_steps(c, args.procs) if mode == "pool" else steps(c, args.procs, mode == "warm")
                    for key, value in measured.items():
                        add(mode, key, value)
                    for p in args.procs:
                        add(mode, f"launch synthetic p={p}",
                            launch(c, launcher, server, "syn", SYNTHETIC, c.workstations[:p]))
                    add(mode, f"launch cg p={max(args.procs)}",
                        launch(c, launcher, server, "cg", CG, c.workstations[:max(args.procs)]))
                    if not args.no_resize:
                        for name, program in (("synthetic", SYNTHETIC), ("cg", CG)):
                            for label, total, target in resize(c, launcher, server, name, program, rate):
                                add(mode, f"resize {name} {label}", total)
                                targets[f"resize {name} {label}"] = target
                bar.advance(task)
    keys = list(dict.fromkeys(k for _, k in data))
    rows = []
    for key in keys:
        before = BEFORE.get(key) or BEFORE.get(" ".join(key.split()[:2]))
        target = targets.get(key, 1.0 if key.startswith("launch") else None)
        rows.append([key, f"{before:.2f}" if before is not None else "-",
                     *(fmt(data.get((mode, key), [])) for mode in launchers),
                     f"{target:.2f}" if target is not None else "-"])
    table(f"launch and resize, {args.n} x {args.cpu} core, {args.egress}, {args.reps} reps: median (min-max) s",
          ["step", "issue 12", *launchers, "target"], rows)


if __name__ == "__main__":
    main()
