"""How long the full Anastasiadis study takes with the 5% target met in every unsaturated cell.

Measured on a part, never the whole (the machine is shared):

1. the cost of one full-size replication now, per (load, policy), from a few
   replications of one workload (the DIF variants included);
2. each cell's spread between replications, from a committed full run's
   cells.csv (its n replications and 95% half-width give the coefficient of
   variation); a variant cell borrows the spread of the same cell under the
   default reading;
3. replications needed = the smallest n whose t half-width meets 5% with that
   spread (at least 3, at most the cap), as ``stats.replications_needed`` asks.

Sum of (replications x cost) over the 20 x (14 + variants) cells, divided by the
workers, is the estimate; the committed run's own total is printed beside it.

    .venv/bin/python -m experiments.studies.anastasiadis_sevcik.analyses.study_precision --cells experiments/studies/anastasiadis_sevcik/results/cells.csv
"""
from __future__ import annotations

import argparse
import math
import statistics
import time
from pathlib import Path

import pandas as pd
from scipy import stats as st

from experiments.studies.anastasiadis_sevcik.replication import run_replication
from experiments.studies.anastasiadis_sevcik.spec import full_spec
from experiments.studies.anastasiadis_sevcik.study import tasks_for


def needed(cov: float, target: float = 0.05, cap: int = 2000, floor: int = 3) -> int:
    """Smallest n with t_{n-1} cov / sqrt(n) <= target."""
    for n in range(max(floor, 2), cap + 1):
        if st.t.ppf(0.975, n - 1) * cov / math.sqrt(n) <= target:
            return n
    return cap


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cells", type=Path, required=True, help="cells.csv of a committed full run")
    ap.add_argument("--workload", default="WK4", help="workload whose replications are timed")
    ap.add_argument("--reps", type=int, default=2, help="replications timed per (load, policy)")
    ap.add_argument("--policies", nargs="+", default=["ASP", "AEP(2)", "DYN-EQUI", "ASP(2)-FREE", "AP1(2)-FREE",
                                                      "AEP(2)-FREE", "AEP(2)-SHARE"])
    ap.add_argument("--variants", nargs="*", default=["FREE", "SHARE"], help="DIF variants counted in the sum")
    ap.add_argument("--cap", type=int, default=2000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--cov-scale", type=float, default=1.0,
                    help="multiply every spread by this (30 heavy-tailed replications tend to understate it; "
                         "WK3 90%% run to 5%% gave 1.2-1.45x)")
    ap.add_argument("--speed", type=float, default=None,
                    help="cost now / committed run's, given instead of timing (skips the timing)")
    args = ap.parse_args()

    spec = full_spec(workloads=(args.workload,))
    cells = pd.read_csv(args.cells)
    cost: dict[tuple[float, str], float] = {}
    t0 = time.perf_counter()
    for load in spec.loads if args.speed is None else ():
        for pol in args.policies:
            walls = [run_replication(t).wall_s for t in tasks_for(spec, (args.workload, load, pol), 0, args.reps)]
            cost[(load, pol)] = statistics.median(walls)
            print(f"{args.workload} {load:.0%} {pol:13s} {cost[(load, pol)]:.2f} s/replication")
    print(f"timing took {time.perf_counter() - t0:.0f} s")

    # Speed now vs the committed run, on the policies timed that it also ran.
    old = cells[cells.workload == args.workload].set_index(["load", "policy"])
    ratios = [cost[k] / (old.loc[k].cpu_s / old.loc[k].replications) for k in cost if k in old.index]
    speed = statistics.median(ratios) if args.speed is None else args.speed
    print(f"cost now / committed run's: {speed:.2f}" + (f" (median over {len(ratios)} cells)" if ratios else " (given)"))

    def cell_cost(row: pd.Series, policy: str) -> float:
        key = (row.load, policy)
        if key in cost and row.workload == args.workload:
            return cost[key]
        # A variant not timed costs what its default-reading cell costs.
        return speed * row.cpu_s / row.replications

    total_old = float(cells.cpu_s.sum())
    total = 0.0
    lines = []
    variants = args.variants
    for _, row in cells.iterrows():
        policies = [row.policy] + ([f"{row.policy}-{v}" for v in variants
                                    if v != "SHARE" or row.policy == "AEP(2)"]  # dif.same_as
                                   if row.policy.endswith("(2)") else [])
        for pol in policies:
            if row.saturated:
                n = row.replications
            else:
                t = st.t.ppf(0.975, row.replications - 1)
                cov = args.cov_scale * row.rel_half_width * math.sqrt(row.replications) / t
                n = needed(cov, cap=args.cap)
            total += n * cell_cost(row, pol)
            if n > 30:
                lines.append((n * cell_cost(row, pol), f"{row.workload} {row.load:.0%} {pol}: {n} replications"))
    for c, text in sorted(lines, reverse=True)[:12]:
        print(f"  {text}, {c:.0f} s")
    print(f"committed run: {total_old:.0f} s of worker time; estimate with the 5% target everywhere and the "
          f"DIF variants: {total:.0f} s of worker time, {total / args.workers / 60:.1f} min on {args.workers} workers")


if __name__ == "__main__":
    main()
