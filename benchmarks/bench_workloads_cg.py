"""Benchmark: CG time per partition size, and the cost of resizing a CG job.

    .venv/bin/python -m benchmarks.bench_workloads_cg --local --n 500 2000 --procs 1 2 4
    .venv/bin/python -m benchmarks.bench_workloads_cg --cluster NAME --n 500 --procs 1 2 4 --resize

--local runs on the host's Open MPI (all ranks on this machine); --cluster uses
a running testbed cluster (`nowlab up`). Prints one JSON line per measurement.
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


def time_cg(launcher, hosts: list[str], n: int, iterations: int, reps: int) -> dict:
    times, walls = [], []
    for rep in range(reps):
        job = f"bench-cg-{n}-{len(hosts)}-{rep}-{time.time_ns() % 10**9}"
        argv = ["python3", "-m", "workloads.cg", "--job", job, "--hosts", ",".join(hosts),
                "--n", str(n), "--iterations", str(iterations)]
        t0 = time.monotonic()
        result = launcher.mpirun_popen(hosts, argv).wait(1800)
        walls.append(time.monotonic() - t0)
        report = parse_result(result.stdout)
        if result.exit_code != 0 or report is None:
            raise RuntimeError(result.stderr[-2000:])
        times.append(report["compute_s"])
    return {"bench": "cg_time", "n": n, "p": len(hosts), "iterations": iterations, "reps": reps,
            "median_s": statistics.median(times), "min_s": min(times), "max_s": max(times),
            "median_wall_s": statistics.median(walls), "placement": report["placement"]}


def resize_costs(launcher, hosts: list[str], steps: list[list[str]], n: int, control_host: str) -> list[dict]:
    with ControlServer(control_host) as server:
        job = MalleableJob(launcher, server, f"bench-resize-{time.time_ns() % 10**9}",
                           ["python3", "-m", "workloads.cg", "--n", str(n), "--iterations", "2000"],
                           hosts, control_host).start()
        records = [job.resize(step) for step in steps]
        job.wait()
    return [{"bench": "cg_resize", "n": n, **asdict(r)} for r in records if r is not None]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--local", action="store_true")
    where.add_argument("--cluster")
    parser.add_argument("--n", type=int, nargs="+", default=[500])
    parser.add_argument("--procs", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--iterations", type=int, default=250)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--resize", action="store_true", help="also measure 4->2 and 2->3 resizes")
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:  # a job is an mpiexec of its own either way
        c = (stack.enter_context(testbed.cluster(local_spec(8), backend=LocalBackend(pool=False))) if args.local
             else testbed.Cluster.attach(args.cluster))
        launcher, workstations, control_host = c, c.workstations, c.controller_address
        for n in args.n:
            for p in args.procs:
                print(json.dumps(time_cg(launcher, workstations[:p], n, args.iterations, args.reps)), flush=True)
            if args.resize:
                for row in resize_costs(launcher, workstations[:4], [workstations[:2], workstations[:3]], n,
                                        control_host):
                    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
