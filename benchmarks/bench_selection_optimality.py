"""Optimality gap of SA, GA, DP and Box Elimination against brute force, on 6 to 12 workstations,
and how far past its budget each returns on 400 and 1,024 machines (wall clock; the tests
check the same in CPU time, which a loaded host cannot disturb).

Random clusters as §5.2 draws them (a random light/medium/heavy mix, links at 20-80% of a
random maximum); each algorithm gets the same budget. Prints mean and worst gap per size,
for MD (time falls with P) and IS (communication grows with P, so the best set is small).

    .venv/bin/python -m benchmarks.bench_selection_optimality [budget_s] [clusters]
"""
from __future__ import annotations

import sys
import time

from benchmarks._common import console, table
from experiments.studies.sanjay_vadhiyar.apps import APPLICATIONS
from experiments.studies.sanjay_vadhiyar.optimality import ALGORITHMS, budget_cluster, optimality_gaps
from scheduler.selection import select_hosts


def main() -> None:
    budget_s = float(sys.argv[1]) if len(sys.argv) > 1 else 0.5
    clusters = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    for app in ("MD", "IS"):
        model, size = APPLICATIONS[app]
        gaps = optimality_gaps((6, 8, 10, 12), clusters, budget_s, model, size, seed=12)
        rows = []
        for n, by_size in gaps.groupby("size"):
            cells = [f"{100 * by_size[by_size.algorithm == a].gap.mean():.1f}% / "
                     f"{100 * by_size[by_size.algorithm == a].gap.max():.1f}%" for a in ALGORITHMS]
            rows.append([str(n), *cells])
        table(f"{app}: gap to brute force, mean / worst over {clusters} clusters, {budget_s:g} s each",
              ["workstations", *ALGORITHMS], rows)
    console.print("gap = predicted time of the algorithm's schedule / the optimum's - 1")
    rows = []
    for n, budget in ((400, 0.3), (1024, 2.0)):
        problem = budget_cluster(n)
        for a in ALGORITHMS:
            t0 = time.perf_counter()
            got = select_hosts(problem, a, budget_s=budget, seed=1)
            over_ms = 1000 * (time.perf_counter() - t0 - budget)
            rows.append([str(n), a, f"{budget:g}", f"{over_ms:+.1f}", str(got.evaluations),
                         "yes" if got.finished else "no"])
    table("Time budget: wall clock past the budget (target: within 50 ms)",
          ["machines", "algorithm", "budget (s)", "past budget (ms)", "evaluations", "finished"], rows)



if __name__ == "__main__":
    main()
