"""The synthetic workload of §2.5 (python3 -m workloads.synthetic).

Each phase: broadcast (the coordinator sends a message to each node), compute
(the phase's total multiplies split evenly over the p ranks, no communication),
collect (each node sends a message back), then the safe-point barrier. The phase's work
is --mults multiplies or --work reference-seconds (workloads/reference.py).
The job
also holds --redist-bytes of block-distributed data, the data a preemption
has to redistribute. Changing the work, the message sizes and the data size
yields different speedup curves and preemption costs.
Runs inside the containers: standard library, numpy and mpi4py only.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from mpi4py import MPI

from workloads import compute, polite, runtime, synthetic_demand
from workloads.checkpoint import LocalState
from workloads.partition import block_bounds

TAG_BCAST, TAG_COLLECT = 11, 12


def fresh_state(redist_bytes: int, rank: int, size: int) -> LocalState:
    rows = max(redist_bytes // 8, 1)
    block = block_bounds(rows, size)[rank]
    data = np.arange(block.lo, block.hi, dtype=np.float64)
    return LocalState({"data": data}, {"data": rows}, {"iteration": 0, "checksum": 0.0})


def share(total: int, rank: int, size: int) -> int:
    """This rank's multiplies: the total split as evenly as integers allow."""
    base, extra = divmod(total, size)
    return base + (1 if rank < extra else 0)


def phase(comm: MPI.Comm, mults: int, msg_bytes: int, message: np.ndarray) -> tuple[float, float, float, float]:
    """One broadcast-compute-collect phase; returns this rank's four subphase times (s)."""
    rank, size = comm.Get_rank(), comm.Get_size()
    t0 = time.perf_counter()
    if rank == 0:
        polite.waitall([comm.Isend(message, dest=d, tag=TAG_BCAST) for d in range(1, size)])
    else:
        polite.wait(comm.Irecv(message, source=0, tag=TAG_BCAST))
    t1 = time.perf_counter()
    result = compute.multiply(share(mults, rank, size))
    t2 = time.perf_counter()
    if rank == 0:
        inbox = [np.empty(msg_bytes, dtype=np.uint8) for _ in range(1, size)]
        polite.waitall([comm.Irecv(buf, source=s, tag=TAG_COLLECT) for s, buf in zip(range(1, size), inbox)])
    else:
        reply = np.full(msg_bytes, int(result * 1e6) % 251, dtype=np.uint8)
        polite.wait(comm.Isend(reply, dest=0, tag=TAG_COLLECT))
    t3 = time.perf_counter()
    return t1 - t0, t2 - t1, t3 - t2, t3


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m workloads.synthetic", description=__doc__)
    runtime.add_job_arguments(parser)
    parser.add_argument("--phases", type=int, default=50, help="number of phases (the paper uses 50 and 15)")
    synthetic_demand.add_arguments(parser)  # --mults, or --work in reference-seconds
    parser.add_argument("--msg-bytes", type=int, default=32, help="broadcast and collect message size (bytes)")
    parser.add_argument("--redist-bytes", type=int, default=512 * 1024,
                        help="distributed data moved on preemption (bytes, total)")
    args = parser.parse_args(argv)
    args.mults = synthetic_demand.resolve(parser, args)

    comm = runtime.job_comm()
    job = runtime.Malleable(comm, runtime.config_from_args(args))
    t_start = time.perf_counter()
    state = job.start(lambda: fresh_state(args.redist_bytes, comm.Get_rank(), comm.Get_size()))
    message = np.zeros(args.msg_bytes, dtype=np.uint8)
    phases: list[dict[str, float]] = []
    start_phase = state.scalars["iteration"]
    t_run = time.perf_counter()
    while state.scalars["iteration"] < args.phases:
        bcast_s, compute_s, collect_s, t_collected = phase(comm, args.mults, args.msg_bytes, message)
        state.scalars["iteration"] += 1
        released = job.safe_point(state)
        phases.append({"phase": state.scalars["iteration"], "broadcast_s": bcast_s, "compute_s": compute_s,
                       "collect_s": collect_s, "barrier_s": time.perf_counter() - t_collected})
        if released:
            runtime.print_released(job)
            job.close()
            return 0
    t_end = time.perf_counter()
    # the data is 0, 1, 2, ... in global order: after any resizes each rank must hold exactly its block
    rows = state.n_rows["data"]
    block = block_bounds(rows, comm.Get_size())[comm.Get_rank()]
    mine_ok = np.array_equal(state.arrays["data"], np.arange(block.lo, block.hi, dtype=np.float64))
    intact = polite.allreduce_int(comm, int(mine_ok), MPI.MIN) == 1
    job.finish({"status": "done", "workload": "synthetic", "ranks": comm.Get_size(),
                "phases_done": state.scalars["iteration"],
                "phases_this_run": state.scalars["iteration"] - start_phase,
                "mults_per_phase": args.mults, "msg_bytes": args.msg_bytes, "redist_bytes": 8 * rows,
                "data_intact": intact,
                "setup_s": t_run - t_start, "compute_s": t_end - t_run,
                "phase_times": phases, "restore": job.restore_stats})
    job.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(runtime.run_main(main))
