"""A Batsim profile run for real: the job `nowlab batsim --live` starts on the allocated workstations.

* `delay --seconds S`: every rank sleeps S seconds (Batsim's delay profile: the job holds its
  allocation and does nothing), then one polite barrier, so the job ends when its last rank does.
* `ptask --ref-seconds W --bytes B`: Batsim's parallel_homogeneous. Every rank does W
  reference-seconds of counted multiplies (workloads.reference: W s on a reference core; the
  host turns the profile's `cpu` flop into W at the platform's flop per reference core), then
  sends B bytes to every other rank and receives as much from each, then a barrier: compute,
  then traffic, as the simulated model times it (experiments/batsim/platform.py).

Either stops within ~50 ms when the host cancels it (a walltime, a KILL_JOB): the sleep and the
compute look at `polite.CANCEL` between slices, the waits go through `polite`; under mpiexec
the host terminates the process instead.
    python3 -m workloads.batsim_job delay --seconds 1.5
    python3 -m workloads.batsim_job ptask --ref-seconds 0.5 --bytes 1000000
Runs inside the workstations: standard library, numpy and mpi4py only.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from mpi4py import MPI

from workloads import polite, runtime
from workloads.compute import multiply
from workloads.reference import ref_seconds_to_mults

SLICE_S = 0.05
"""How often a sleeping rank looks for a cancellation."""
MULTS_PER_SLICE = 2_000_000
"""Multiplies between two looks for a cancellation (a few ms on a reference core)."""


def _check() -> None:
    if polite.CANCEL.is_set():
        raise polite.Cancelled("the host cancelled the job")


def sleep(seconds: float) -> None:
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        _check()
        time.sleep(min(left, SLICE_S))


def compute(ref_seconds: float) -> None:
    left = ref_seconds_to_mults(ref_seconds)
    while left > 0:
        _check()
        n = min(left, MULTS_PER_SLICE)
        multiply(n)
        left -= n


def exchange(comm: MPI.Comm, nbytes: int) -> None:
    """`nbytes` to every other rank, as much from each (all at once, non-blocking)."""
    rank, size = comm.Get_rank(), comm.Get_size()
    if size == 1 or nbytes == 0:
        return
    out = np.ones(nbytes, dtype=np.uint8)
    ins = [np.empty(nbytes, dtype=np.uint8) for _ in range(size - 1)]
    peers = [r for r in range(size) if r != rank]
    requests = [comm.Irecv(buf, source=r, tag=7) for buf, r in zip(ins, peers)]
    requests += [comm.Isend(out, dest=r, tag=7) for r in peers]
    polite.waitall(requests)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m workloads.batsim_job", description=__doc__)
    sub = parser.add_subparsers(dest="profile", required=True)
    d = sub.add_parser("delay")
    d.add_argument("--seconds", type=float, required=True)
    t = sub.add_parser("ptask")
    t.add_argument("--ref-seconds", type=float, required=True, help="compute on each rank, reference-seconds")
    t.add_argument("--bytes", type=int, required=True, help="sent to each other rank")
    args = parser.parse_args(argv)
    comm = runtime.job_comm()
    if args.profile == "delay":
        if not args.seconds >= 0:
            parser.error(f"--seconds: must be >= 0, got {args.seconds}")
        sleep(args.seconds)
    else:
        if not args.ref_seconds >= 0 or args.bytes < 0:
            parser.error(f"--ref-seconds and --bytes: must be >= 0, got {args.ref_seconds} and {args.bytes}")
        compute(args.ref_seconds)
        exchange(comm, args.bytes)
    polite.barrier(comm)
    return 0


if __name__ == "__main__":
    raise SystemExit(runtime.run_main(main))
