"""How long does the Anastasiadis & Sevcik study take on this machine?

Times (1) the ``--quick`` study and (2) one full-size cell run to the 5%
confidence target, then extrapolates the full study:

    full ~= sum over quick cells of  cpu_s x (full jobs / quick jobs) x (reps / quick reps) / workers

where ``reps`` is the number of replications the full-size sample cell needed.
That assumes every cell needs as many replications as the sample cell (a
high-load cell, so usually an over-estimate) and that cost is linear in jobs.
The machine is shared, so treat the numbers as +-30%.

Run:  .venv/bin/python benchmarks/bench_study_anastasiadis.py [--cell WK4 0.9 DYN-EQUI]
"""
from __future__ import annotations

import argparse
import time

from experiments.anastasiadis.spec import full_spec, quick_spec
from experiments.anastasiadis.study import run_study


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cell", nargs=3, metavar=("WORKLOAD", "LOAD", "POLICY"),
                    default=["WK4", "0.9", "DYN-EQUI"], help="the full-size cell to time")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()

    quick = quick_spec(workers=args.workers)
    t0 = time.perf_counter()
    q = run_study(quick, show_progress=False)
    quick_wall = time.perf_counter() - t0
    qcells = q.cells
    print(f"quick study: {quick_wall:.1f} s wall, {q.replications.wall_s.sum():.1f} s worker time, "
          f"{len(q.replications)} replications, {len(qcells)} cells")

    wl, load, pol = args.cell[0], float(args.cell[1]), args.cell[2]
    cell_spec = full_spec(workloads=(wl,), loads=(load,), policies=tuple(dict.fromkeys((pol, "DYN-EQUI"))),
                          workers=args.workers)
    t0 = time.perf_counter()
    c = run_study(cell_spec, show_progress=False)
    cell_wall = time.perf_counter() - t0
    row = c.cells.set_index("policy").loc[pol]
    reps = int(row.replications)
    per_rep = float(c.replications[c.replications.policy == pol].wall_s.mean())
    print(f"full-size cell {wl} {load:.0%} {pol}: {reps} replications to "
          f"{row.rel_half_width:.1%} half-width, {per_rep:.2f} s per replication "
          f"({cell_wall:.1f} s wall for it and its DYN-EQUI baseline)")

    full = full_spec(workers=args.workers)
    job_ratio = full.jobs_per_replication / quick.jobs_per_replication
    rep_ratio = reps / quick.min_replications
    est_cpu = float(qcells.cpu_s.sum()) * job_ratio * rep_ratio
    est_wall = est_cpu / args.workers
    print(f"extrapolated full study: {est_wall / 60:.1f} min wall on {args.workers} workers "
          f"(x{job_ratio:.0f} jobs, x{rep_ratio:.1f} replications; target 30 min)")


if __name__ == "__main__":
    main()
