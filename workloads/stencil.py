"""Distributed 2-D Jacobi stencil, malleable at every iteration (python3 -m workloads.stencil).

The n x n grid of stencildata's Poisson problem is split in row blocks. Each
iteration sends the block's first and last rows to the neighbours above and
below (Isend/Irecv), sweeps the rows that need no halo while they travel, waits
politely, sweeps the two edge rows, and ends with the safe-point barrier, where
the job may be preempted and resized. Every few iterations the per-row squared
changes are gathered (Iallgatherv) and summed in a fixed way, so the residual,
and a --tol stop, are the same on any number of ranks. Jacobi rather than
red-black SSOR: one halo exchange per iteration instead of two, and the answer is
bit-identical for any partition, where SOR's ordering would make it depend on it.
The state is the grid u and the right-hand side h²f, both moved on a resize.
Runs inside the containers: standard library, numpy and mpi4py only.
"""
from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np
from mpi4py import MPI

from workloads import polite, runtime
from workloads import stencildata as sd
from workloads.checkpoint import LocalState
from workloads.partition import block_bounds, counts_and_displacements

ARRAYS = ("u", "b")
TAG_TO_ABOVE, TAG_TO_BELOW = 3101, 3102


@dataclass
class Grid:
    """One rank's two padded grids (old and new, swapped each sweep) and its neighbours."""

    old: np.ndarray
    new: np.ndarray
    b: np.ndarray
    scratch: np.ndarray
    above: int | None  # rank holding the rows above this block; None: the top edge
    below: int | None

    @classmethod
    def from_state(cls, comm: MPI.Comm, state: LocalState) -> "Grid":
        rank, size = comm.Get_rank(), comm.Get_size()
        u, b = state.arrays["u"], state.arrays["b"]
        grid = cls(sd.padded(u), sd.padded(u), b, np.empty_like(b),
                   rank - 1 if rank > 0 else None, rank + 1 if rank < size - 1 else None)
        if grid.above is None:
            sd.set_top_boundary(grid.old)
            sd.set_top_boundary(grid.new)
        state.arrays["u"] = grid.interior
        return grid

    @property
    def rows(self) -> int:
        return self.b.shape[0]

    @property
    def interior(self) -> np.ndarray:
        """The current grid without its frame: what is checkpointed and redistributed."""
        return self.old[1:-1, 1:-1]

    def exchange_halos(self, comm: MPI.Comm) -> list[MPI.Request]:
        """Post the receives into the halo rows and the sends of the edge rows."""
        requests: list[MPI.Request] = []
        if self.above is not None:
            requests.append(comm.Irecv(self.old[0, 1:-1], source=self.above, tag=TAG_TO_BELOW))
        if self.below is not None:
            requests.append(comm.Irecv(self.old[-1, 1:-1], source=self.below, tag=TAG_TO_ABOVE))
        if self.above is not None:
            requests.append(comm.Isend(self.old[1, 1:-1], dest=self.above, tag=TAG_TO_ABOVE))
        if self.below is not None:
            requests.append(comm.Isend(self.old[-2, 1:-1], dest=self.below, tag=TAG_TO_BELOW))
        return requests


def fresh_state(n: int, rank: int, size: int) -> LocalState:
    """u0 = 0 inside; the top boundary lives in the halo row of the first block."""
    block = block_bounds(n, size)[rank]
    b = sd.rhs_rows(n, block.lo, block.hi)
    return LocalState({"u": np.zeros_like(b), "b": b}, {name: n for name in ARRAYS},
                      {"iteration": 0, "residual": None})


def global_norm(comm: MPI.Comm, row_sums: np.ndarray, n: int) -> float:
    """sqrt(Σ over all rows): the row sums are gathered and added the same way on every rank."""
    counts, displs = counts_and_displacements(n, comm.Get_size())
    full = np.empty(n, dtype=np.float64)
    polite.wait(comm.Iallgatherv(np.ascontiguousarray(row_sums), [full, counts, displs, MPI.DOUBLE]))
    return sd.norm_from_row_sums(full)


@dataclass
class Waits:
    """Seconds this rank spent waiting for halos and for the residual's collective."""

    halo_s: float = 0.0
    residual_s: float = 0.0


def iterate(comm: MPI.Comm, state: LocalState, grid: Grid, n: int, residual_every: int, waits: Waits) -> None:
    """One Jacobi sweep in place, halos overlapped with the rows that do not need them."""
    requests = grid.exchange_halos(comm)
    sd.sweep_rows(grid.old, grid.new, grid.b, grid.scratch, 1, grid.rows - 1)
    t0 = time.perf_counter()
    polite.waitall(requests)
    waits.halo_s += time.perf_counter() - t0
    sd.sweep_rows(grid.old, grid.new, grid.b, grid.scratch, 0, min(1, grid.rows))
    sd.sweep_rows(grid.old, grid.new, grid.b, grid.scratch, max(1, grid.rows - 1), grid.rows)
    state.scalars["iteration"] += 1
    if state.scalars["iteration"] % residual_every == 0:
        row_sums = sd.change_row_sums(grid.old, grid.new, grid.scratch)
        t0 = time.perf_counter()
        state.scalars["residual"] = 4.0 * global_norm(comm, row_sums, n)
        waits.residual_s += time.perf_counter() - t0
    grid.old, grid.new = grid.new, grid.old
    state.arrays["u"] = grid.interior


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m workloads.stencil", description=__doc__)
    runtime.add_job_arguments(parser)
    parser.add_argument("--n", type=positive, default=sd.DEFAULT_N, help="interior grid points per side")
    parser.add_argument("--iterations", type=positive, default=sd.DEFAULT_ITERATIONS,
                        help="Jacobi sweeps (the cap, with --tol)")
    parser.add_argument("--residual-every", type=positive, default=sd.DEFAULT_RESIDUAL_EVERY,
                        help="sweeps between residual evaluations (one collective each)")
    parser.add_argument("--tol", type=float, default=None,
                        help="stop when ||b - A u|| <= tol * ||b||, b = h²f + the top boundary (off by default: fixed sweeps)")
    parser.add_argument("--print-u", action="store_true", help="include the grid, row by row, in the result line")
    args = parser.parse_args(argv)

    comm = runtime.job_comm()
    if args.n < comm.Get_size():
        raise ValueError(f"--n: {args.n} rows cannot be split over {comm.Get_size()} ranks")
    job = runtime.Malleable(comm, runtime.config_from_args(args))
    t_start = time.perf_counter()
    state = job.start(lambda: fresh_state(args.n, comm.Get_rank(), comm.Get_size()))
    n = state.n_rows["u"]
    if n < comm.Get_size():
        raise ValueError(f"--hosts: {n} rows cannot be split over {comm.Get_size()} ranks")
    grid = Grid.from_state(comm, state)
    b_norm = global_norm(comm, sd.rhs_row_sums(grid.b, holds_top=grid.above is None), n)
    waits = Waits()
    t_iter = time.perf_counter()
    start_iteration = state.scalars["iteration"]
    while state.scalars["iteration"] < args.iterations:
        residual = state.scalars["residual"]
        if args.tol is not None and residual is not None and residual <= args.tol * b_norm:
            break
        iterate(comm, state, grid, n, args.residual_every, waits)
        if job.safe_point(state):
            runtime.print_released(job)
            job.close()
            return 0
    t_end = time.perf_counter()
    u_norm = global_norm(comm, sd.square_row_sums(grid.interior), n)
    u = gather_grid(comm, grid.interior, n) if args.print_u else None
    result = {"status": "done", "workload": "stencil", "n": n, "ranks": comm.Get_size(),
              "iterations": state.scalars["iteration"],
              "iterations_this_run": state.scalars["iteration"] - start_iteration,
              "residual_norm": state.scalars["residual"], "b_norm": b_norm, "u_norm": u_norm,
              "setup_s": t_iter - t_start, "compute_s": t_end - t_iter,
              "halo_wait_s": waits.halo_s, "residual_wait_s": waits.residual_s,
              "restore": job.restore_stats}
    if u is not None:
        result["u"] = u.tolist()
    job.finish(result)
    job.close()
    return 0


def gather_grid(comm: MPI.Comm, block: np.ndarray, n: int) -> np.ndarray:
    counts, displs = counts_and_displacements(n, comm.Get_size(), row_len=n)
    full = np.empty((n, n), dtype=np.float64)
    polite.wait(comm.Iallgatherv(np.ascontiguousarray(block), [full, counts, displs, MPI.DOUBLE]))
    return full


if __name__ == "__main__":
    raise SystemExit(runtime.run_main(main))
