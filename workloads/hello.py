"""The smallest rank: numpy and mpi4py imported, MPI_Init, one polite barrier, rank 0 prints.

Times the part of a launch that is Python and MPI start-up (benchmarks/bench_launch.py).
`--fail-rank R` makes rank R raise after the barrier while the others wait for it: the
fault the resident pool must survive (tests/integration/test_testbed_pool_live.py, tests/unit/workloads/test_workloads_pool_*.py).
    python3 -m workloads.hello [--fail-rank R]
"""
from __future__ import annotations

import argparse

import numpy  # noqa: F401 - every workload imports it; its cost is part of a launch
from mpi4py import MPI  # noqa: F401 - as above (MPI_Init happens here under mpiexec)

from workloads import polite, runtime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m workloads.hello", description=__doc__)
    parser.add_argument("--fail-rank", type=int, default=None, help="this rank raises after the barrier")
    args = parser.parse_args(argv)
    comm = runtime.job_comm()
    polite.barrier(comm)
    if comm.Get_rank() == args.fail_rank:
        raise RuntimeError(f"rank {args.fail_rank} fails, as asked (--fail-rank)")
    if args.fail_rank is not None:
        polite.barrier(comm)  # waits for the failed rank forever, unless the job is cancelled
    if comm.Get_rank() == 0:
        print(f"hello from {comm.Get_size()} ranks", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(runtime.run_main(main))
