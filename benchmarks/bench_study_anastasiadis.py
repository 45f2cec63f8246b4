"""How long does the Anastasiadis & Sevcik study take on this machine?

Times (1) the ``--quick`` study and (2) full-size cells of one workload at
every load (by default WK4 under ASP, AEP(2) and DYN-EQUI, run to the 5%
confidence target or the replication cap), then extrapolates the full study
cell by cell:

    full ~= sum over cells of  quick cpu_s x (full jobs / quick jobs)
                               x (replications a full-size cell needs at that load / quick replications)
            / workers

Replications needed depend mostly on the load (the variance of the mean
response grows steeply towards 90%), so the sample's mean count at each load
stands in for every cell at that load; saturated quick cells keep their
replication count (saturation stops a cell at its minimum).  The machine is
shared, so treat the numbers as +-30%.  ``--full-cells`` compares with a real
full run's cells.csv (its cpu_s column), when there is one.

Run:  .venv/bin/python -m benchmarks.bench_study_anastasiadis [--full-cells DIR/cells.csv]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

from experiments.studies.anastasiadis_sevcik.spec import full_spec, quick_spec
from experiments.studies.anastasiadis_sevcik.study import run_study


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workload", default="WK4", help="workload of the full-size sample cells")
    ap.add_argument("--policies", nargs="+", default=["ASP", "AEP(2)", "DYN-EQUI"])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--full-cells", type=Path, help="cells.csv of a real full run, to compare")
    args = ap.parse_args()

    quick = quick_spec(workers=args.workers)
    t0 = time.perf_counter()
    q = run_study(quick, show_progress=False)
    quick_wall = time.perf_counter() - t0
    qcells = q.cells
    print(f"quick study: {quick_wall:.1f} s wall (target < 120 s), {q.replications.wall_s.sum():.1f} s "
          f"worker time, {len(q.replications)} replications, {len(qcells)} cells")

    policies = tuple(dict.fromkeys([*args.policies, "DYN-EQUI"]))
    sample_spec = full_spec(workloads=(args.workload,), policies=policies, workers=args.workers)
    t0 = time.perf_counter()
    sample = run_study(sample_spec, show_progress=False).cells
    sample_wall = time.perf_counter() - t0
    print(f"full-size cells of {args.workload} ({', '.join(policies)}) at every load: {sample_wall:.1f} s wall")
    for _, r in sample.iterrows():
        per_rep = r.cpu_s / r.replications
        state = "saturated" if r.saturated else f"half-width {r.rel_half_width:.1%}"
        print(f"  {r.load:4.0%} {r.policy:9s} {r.replications:3d} replications, {per_rep:5.2f} s each, {state}")

    reps_at = sample[~sample.saturated].groupby("load").replications.mean()
    job_ratio = full_spec().jobs_per_replication / quick.jobs_per_replication
    est_cpu = 0.0
    for _, c in qcells.iterrows():
        reps = c.replications if c.saturated else reps_at.get(c.load, full_spec().max_replications)
        est_cpu += c.cpu_s * job_ratio * reps / c.replications
    print(f"extrapolated full study: {est_cpu / args.workers / 60:.1f} min wall on {args.workers} workers "
          f"(x{job_ratio:.1f} jobs per replication; target 30 min)")
    if args.full_cells:
        real = pd.read_csv(args.full_cells)
        print(f"real full run ({args.full_cells}): {real.cpu_s.sum() / args.workers / 60:.1f} min of worker "
              f"time per worker, {int(real.replications.sum())} replications")


if __name__ == "__main__":
    main()
