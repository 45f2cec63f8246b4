"""1-D heat diffusion, malleable at every step (python3 -m workloads.examples.heat).

The worked example of docs/your-workload.md: a rod of --n cells split in contiguous blocks, one per
rank. Each step sends the block's two edge cells to the neighbours (Isend/Irecv), steps the block
(heat_math.step) and ends at the safe point, where the job may be preempted and resized. The
whole state is the rod u (one distributed array) and the step counter (a replicated scalar): the
runtime moves u to the new partition on a resize, and the relaunched job rebuilds its halo
buffers from it. Runs in the workstations: standard library, numpy and mpi4py only.
"""
from __future__ import annotations

import argparse
import math
import time

import numpy as np
from mpi4py import MPI

from workloads import polite, runtime
from workloads.checkpoint import LocalState
from workloads.examples import heat_math as hm
from workloads.partition import block_bounds

TAG_TO_LEFT, TAG_TO_RIGHT = 4101, 4102


def fresh_state(n: int, rank: int, size: int) -> LocalState:
    """A new job's share: its block of the starting rod. Arrays are row blocks (block_bounds), with
    their global row count in n_rows; scalars are the same on every rank and JSON-able."""
    block = block_bounds(n, size)[rank]
    return LocalState({"u": hm.initial_rows(block.lo, block.hi)}, {"u": n}, {"iteration": 0})


class Rod:
    """One rank's padded block, old and new (swapped each step), and its neighbours."""

    def __init__(self, comm: MPI.Comm, state: LocalState) -> None:
        rank, size = comm.Get_rank(), comm.Get_size()
        self.left = rank - 1 if rank > 0 else None
        self.right = rank + 1 if rank < size - 1 else None
        self.old = hm.padded(state.arrays["u"], first=self.left is None, last=self.right is None)
        self.new = self.old.copy()
        state.arrays["u"] = self.interior  # the state holds a view: what a resize moves is current

    @property
    def interior(self) -> np.ndarray:
        return self.old[1:-1]

    def exchange_halos(self, comm: MPI.Comm) -> None:
        requests = []
        if self.left is not None:
            requests += [comm.Irecv(self.old[0:1], source=self.left, tag=TAG_TO_RIGHT),
                         comm.Isend(self.old[1:2], dest=self.left, tag=TAG_TO_LEFT)]
        if self.right is not None:
            requests += [comm.Irecv(self.old[-1:], source=self.right, tag=TAG_TO_LEFT),
                         comm.Isend(self.old[-2:-1], dest=self.right, tag=TAG_TO_RIGHT)]
        polite.waitall(requests)

    def step(self, r: float) -> None:
        hm.step(self.old, self.new, r)
        self.new[0], self.new[-1] = self.old[0], self.old[-1]  # the held ends stay; halos come next step
        self.old, self.new = self.new, self.old


def rate(text: str) -> float:
    value = float(text)
    if not 0 < value <= hm.MAX_R:
        raise argparse.ArgumentTypeError(f"must be in (0, {hm.MAX_R}] (the explicit scheme's stability), got {text}")
    return value


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m workloads.examples.heat", description=__doc__)
    runtime.add_job_arguments(parser)  # --job, --hosts, --control, --resume, ...: the launcher sets them
    parser.add_argument("--n", type=positive, default=100_000, help="cells in the rod")
    parser.add_argument("--steps", type=positive, default=2000, help="explicit steps (each one a safe point)")
    parser.add_argument("--r", type=rate, default=0.4, help="alpha dt / dx^2")
    parser.add_argument("--print-u", action="store_true", help="include the rod in the result line")
    args = parser.parse_args(argv)

    comm = runtime.job_comm()
    if args.n < comm.Get_size():
        raise ValueError(f"--n: {args.n} cells cannot be split over {comm.Get_size()} ranks")
    job = runtime.Malleable(comm, runtime.config_from_args(args))
    t_start = time.perf_counter()
    state = job.start(lambda: fresh_state(args.n, comm.Get_rank(), comm.Get_size()))  # or the resized one
    rod = Rod(comm, state)
    first_step = state.scalars["iteration"]
    t_run = time.perf_counter()
    while state.scalars["iteration"] < args.steps:
        rod.exchange_halos(comm)
        rod.step(args.r)
        state.arrays["u"] = rod.interior
        state.scalars["iteration"] += 1
        if job.safe_point(state):  # preempted: the runtime moved or checkpointed u; this launch ends
            runtime.print_released(job)
            job.close()
            return 0
    t_end = time.perf_counter()
    blocks = polite.gather_json(comm, rod.interior.tolist())
    result = {"status": "done", "workload": "heat", "n": args.n, "ranks": comm.Get_size(),
              "steps": state.scalars["iteration"], "steps_this_run": state.scalars["iteration"] - first_step,
              "setup_s": t_run - t_start, "compute_s": t_end - t_run, "restore": job.restore_stats}
    if blocks is not None:  # the coordinator
        u = [x for block in blocks for x in block]
        result["heat"] = math.fsum(u)
        if args.print_u:
            result["u"] = u
    job.finish(result)
    job.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(runtime.run_main(main))
