"""A rigid mpi4py job: a ring of `--iterations` steps over `--work` reference-seconds, or a delay.

A rigid job knows nothing of safe points: it starts on its p ranks, runs to its end and
exits. Its length is given in reference work (workloads/reference.py), split evenly among
the ranks, so it takes the same time on a slow and a fast workstation once the work is
scaled by the workstation's speed; each iteration computes its share and passes a token
one step round the ring. `--sleep S` makes it a delay job (trace replay's): every rank
sleeps S seconds, checking for a cancel (a walltime kill on the pool) every 50 ms.

It runs on the resident pool (runtime.job_comm() is the pool's sub-communicator) or under
mpiexec (MPI_COMM_WORLD). Rank 0 prints the start line of workloads/wire/rigid.py, then at
the end one JSON line: ranks, work, iterations, compute seconds, the token's final value.
Runs inside the containers: standard library, numpy and mpi4py only.
    mpiexec -n 4 python3 -m workloads.rigid --work 2.0 --iterations 20
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np

from workloads import polite, runtime
from workloads.compute import multiply
from workloads.reference import ref_seconds_to_mults
from workloads.wire.rigid import started_line

SLEEP_STEP_S = 0.05


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python3 -m workloads.rigid", description=__doc__.splitlines()[0])
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--work", type=float, help="reference-seconds of work in all, split among the ranks")
    what.add_argument("--sleep", type=float, help="seconds every rank sleeps (a delay job)")
    parser.add_argument("--iterations", type=int, default=10, help="ring steps (with --work)")
    args = parser.parse_args(argv)
    if args.work is not None and not args.work >= 0:
        parser.error(f"--work: must be >= 0 reference-seconds, got {args.work}")
    if args.sleep is not None and not args.sleep >= 0:
        parser.error(f"--sleep: must be >= 0 seconds, got {args.sleep}")
    if args.iterations < 1:
        parser.error(f"--iterations: must be >= 1, got {args.iterations}")
    return args


def sleep(seconds: float) -> None:
    """Sleep, leaving within SLEEP_STEP_S of a cancel (polite.Cancelled)."""
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        polite._check()
        time.sleep(min(left, SLEEP_STEP_S))


def ring(comm, work_ref_s: float, iterations: int) -> tuple[float, int]:
    """Each iteration: this rank's share of the work, then the token one step on. (compute s, token)."""
    p, rank = comm.Get_size(), comm.Get_rank()
    mults = ref_seconds_to_mults(work_ref_s / p / iterations)
    token = np.zeros(1, dtype=np.int64)
    got = np.zeros(1, dtype=np.int64)
    compute_s = 0.0
    for _ in range(iterations):
        t = time.perf_counter()
        multiply(mults)
        compute_s += time.perf_counter() - t
        token[0] += 1
        if p > 1:
            recv = comm.Irecv(got, source=(rank - 1) % p, tag=7)
            send = comm.Isend(token, dest=(rank + 1) % p, tag=7)
            polite.waitall([recv, send])
            token[0] = got[0]
    return compute_s, int(polite.allreduce_int(comm, int(token[0])))


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    comm = runtime.job_comm()
    rank = comm.Get_rank()
    if rank == 0:
        print(started_line(time.time()), flush=True)
    if args.sleep is not None:
        sleep(args.sleep)
        polite.barrier(comm)
        report = {"kernel": "delay", "ranks": comm.Get_size(), "sleep_s": args.sleep}
    else:
        compute_s, token = ring(comm, args.work, args.iterations)
        report = {"kernel": "ring", "ranks": comm.Get_size(), "work_ref_s": args.work,
                  "iterations": args.iterations, "compute_s": compute_s, "token": token}
    if rank == 0:
        print(json.dumps(report), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
