"""The smallest rank: numpy and mpi4py imported, MPI_Init, one polite barrier, rank 0 prints.

Times the part of a launch that is Python and MPI start-up (benchmarks/bench_launch.py).
    python3 -m workloads.hello
"""
from __future__ import annotations

import numpy  # noqa: F401 - every workload imports it; its cost is part of a launch
from mpi4py import MPI

from workloads import polite


def main() -> int:
    comm = MPI.COMM_WORLD
    polite.barrier(comm)
    if comm.Get_rank() == 0:
        print(f"hello from {comm.Get_size()} ranks", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
