"""Distributed conjugate gradient, malleable at every iteration (python3 -m workloads.cg).

Rows of A, b, x, r and p (the paper's five arrays) are block-distributed; each
iteration gathers p, multiplies its rows, reduces two dot products, and ends
with the safe-point barrier, where the job may be preempted and resized.
Runs inside the containers: standard library, numpy and mpi4py only.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from mpi4py import MPI

from workloads import cgdata, polite, runtime
from workloads.checkpoint import LocalState
from workloads.partition import block_bounds, counts_and_displacements

ARRAYS = ("A", "b", "x", "r", "p")


def fresh_state(n: int, rank: int, size: int, comm: MPI.Comm) -> LocalState:
    """x0 = 0, so r0 = p0 = b; rho0 = r·r is reduced across the ranks."""
    block = block_bounds(n, size)[rank]
    b = cgdata.rhs(n, block.lo, block.hi)
    rho = polite.allreduce_scalar(comm, float(b @ b))
    arrays = {"A": cgdata.matrix_rows(n, block.lo, block.hi), "b": b,
              "x": np.zeros_like(b), "r": b.copy(), "p": b.copy()}
    return LocalState(arrays, {name: n for name in ARRAYS}, {"iteration": 0, "rho": rho})


class CpuTally:
    """This rank's CPU seconds in the matrix-vector product (its kernel) and in all, over the
    iterations of this run: with the wall time they tell a slow host (more CPU per product)
    from a rank that waited (the same CPU, less of it per second)."""

    def __init__(self) -> None:
        self.matvec_s = 0.0
        self._start = time.process_time()

    def total_s(self) -> float:
        return time.process_time() - self._start


def iterate(comm: MPI.Comm, state: LocalState, p_full: np.ndarray, counts: list[int], displs: list[int],
            tally: CpuTally | None = None) -> None:
    """One CG iteration in place, with the same update order as cgdata.serial_cg."""
    a, x, r, p = (state.arrays[k] for k in ("A", "x", "r", "p"))
    rho = state.scalars["rho"]
    polite.wait(comm.Iallgatherv(p, [p_full, counts, displs, MPI.DOUBLE]))
    t0 = time.thread_time()
    q = a @ p_full
    if tally is not None:
        tally.matvec_s += time.thread_time() - t0
    pq = polite.allreduce_scalar(comm, float(p @ q))
    alpha = rho / pq if pq != 0.0 else 0.0
    x += alpha * p
    r -= alpha * q
    rho_new = polite.allreduce_scalar(comm, float(r @ r))
    beta = rho_new / rho if rho != 0.0 else 0.0
    p *= beta
    p += r
    state.scalars["rho"] = rho_new
    state.scalars["iteration"] += 1


def cpu_summary(comm: MPI.Comm, tally: CpuTally) -> dict[str, float]:
    """The ranks' CPU seconds over this run's iterations, mean and max (rank 0 reports them)."""
    size = comm.Get_size()
    total, matvec = tally.total_s(), tally.matvec_s
    return {"cpu_s_mean": polite.allreduce_scalar(comm, total) / size,
            "cpu_s_max": polite.allreduce_scalar(comm, total, MPI.MAX),
            "matvec_cpu_s_mean": polite.allreduce_scalar(comm, matvec) / size,
            "matvec_cpu_s_max": polite.allreduce_scalar(comm, matvec, MPI.MAX)}


def gather_vector(comm: MPI.Comm, local: np.ndarray, n: int) -> np.ndarray:
    counts, displs = counts_and_displacements(n, comm.Get_size())
    full = np.empty(n, dtype=np.float64)
    polite.wait(comm.Iallgatherv(np.ascontiguousarray(local), [full, counts, displs, MPI.DOUBLE]))
    return full


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m workloads.cg", description=__doc__)
    runtime.add_job_arguments(parser)
    parser.add_argument("--n", type=int, default=500, help="matrix order (rows = columns)")
    parser.add_argument("--iterations", type=int, default=250, help="iteration count (the cap, with --tol)")
    parser.add_argument("--tol", type=float, default=None,
                        help="stop when ||r||/||b|| <= tol (off by default, as in the paper)")
    parser.add_argument("--print-x", action="store_true", help="include the solution in the result line")
    args = parser.parse_args(argv)

    comm = runtime.job_comm()
    job = runtime.Malleable(comm, runtime.config_from_args(args))
    t_start = time.perf_counter()
    state = job.start(lambda: fresh_state(args.n, comm.Get_rank(), comm.Get_size(), comm))
    n = state.n_rows["b"]
    counts, displs = counts_and_displacements(n, comm.Get_size())
    p_full = np.empty(n, dtype=np.float64)
    b_norm = np.sqrt(polite.allreduce_scalar(comm, float(state.arrays["b"] @ state.arrays["b"])))
    t_iter = time.perf_counter()
    tally = CpuTally()
    start_iteration = state.scalars["iteration"]
    while state.scalars["iteration"] < args.iterations:
        if args.tol is not None and np.sqrt(state.scalars["rho"]) <= args.tol * b_norm:
            break
        iterate(comm, state, p_full, counts, displs, tally)
        if job.safe_point(state):
            runtime.print_released(job)
            job.close()
            return 0
    t_end = time.perf_counter()
    cpu = cpu_summary(comm, tally)
    x = gather_vector(comm, state.arrays["x"], n)
    result = {"status": "done", "workload": "cg", "n": n, "ranks": comm.Get_size(),
              "iterations": state.scalars["iteration"], "iterations_this_run": state.scalars["iteration"] - start_iteration,
              "residual_norm": float(np.sqrt(state.scalars["rho"])), "b_norm": float(b_norm),
              "setup_s": t_iter - t_start, "compute_s": t_end - t_iter,
              "x_norm": float(np.linalg.norm(x)), "restore": job.restore_stats, **cpu}
    if args.print_x:
        result["x"] = [float(v) for v in x]
    job.finish(result)
    job.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(runtime.run_main(main))
