"""Benchmark: the synthetic workload's phase times and its preemption cost.

    .venv/bin/python -m benchmarks.bench_workloads_synthetic --cluster NAME --mults 66000 6600000 --redist-bytes 524288

For each --mults: one dedicated run per partition size (mean broadcast, compute,
collect and barrier time per phase), then a job on 4 workstations shrunk to 2
and grown to 3, with its ack latency, redistribution time and bytes moved.
Prints one JSON line per measurement.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import time
from dataclasses import asdict

from workloads.host.control_server import ControlServer
import testbed
from testbed.backends.local import LocalBackend, local_spec
from workloads.host.malleable import MalleableJob, parse_result

SUBPHASES = ("broadcast_s", "compute_s", "collect_s", "barrier_s")


def phase_times(launcher, hosts: list[str], mults: int, phases: int, redist: int) -> dict:
    argv = ["python3", "-m", "workloads.synthetic", "--job", f"bench-syn-{time.time_ns() % 10**9}",
            "--hosts", ",".join(hosts), "--phases", str(phases), "--mults", str(mults),
            "--redist-bytes", str(redist)]
    result = launcher.mpirun_popen(hosts, argv).wait(1800)
    report = parse_result(result.stdout)
    if result.exit_code != 0 or report is None:
        raise RuntimeError(result.stderr[-2000:])
    per_phase = {k: statistics.mean(p[k] for p in report["phase_times"]) for k in SUBPHASES}
    return {"bench": "synthetic_phases", "p": len(hosts), "mults": mults, "phases": phases,
            "total_s": report["compute_s"], **{f"mean_{k}": v for k, v in per_phase.items()}}


def resize_costs(launcher, workstations: list[str], mults: int, redist: int, control_host: str) -> list[dict]:
    with ControlServer(control_host) as server:
        with MalleableJob(launcher, server, f"bench-syn-resize-{time.time_ns() % 10**9}",
                          ["python3", "-m", "workloads.synthetic", "--phases", "100000", "--mults", str(mults),
                           "--redist-bytes", str(redist)],
                          workstations[:4], control_host) as job:
            job.start()
            records = [job.resize(workstations[:2]), job.resize(workstations[:3])]
            job.terminate()
    return [{"bench": "synthetic_resize", "mults": mults, "redist_bytes": redist, **asdict(r)}
            for r in records if r is not None]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--local", action="store_true")
    where.add_argument("--cluster")
    parser.add_argument("--mults", type=int, nargs="+", default=[66000])
    parser.add_argument("--phases", type=int, default=50)
    parser.add_argument("--procs", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--redist-bytes", type=int, default=512 * 1024)
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:  # a job is an mpiexec of its own either way
        c = (stack.enter_context(testbed.cluster(local_spec(8), backend=LocalBackend(pool=False))) if args.local
             else testbed.Cluster.attach(args.cluster))
        launcher, workstations, control_host = c, c.workstations, c.controller_address
        for mults in args.mults:
            for p in args.procs:
                print(json.dumps(phase_times(launcher, workstations[:p], mults, args.phases, args.redist_bytes)),
                      flush=True)
            for row in resize_costs(launcher, workstations, mults, args.redist_bytes, control_host):
                print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
