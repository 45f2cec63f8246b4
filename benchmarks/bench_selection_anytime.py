"""Anytime quality: each algorithm's gap to the optimum on 10-16 workstations at 0.1, 0.5 and 2 s.

The optimum is brute force's (2^16 subsets at most). SA and GA search the sizes whose start
predicts least first (`scheduler/selection/promise.py`); SA-FIG1 and GA-FIG2, Figs. 1 and 2
as printed (max_procs down), can be added for comparison. Random clusters as §5.2 draws them
(random light/medium/heavy mix, links at 20-80% of a random maximum). Wall-clock budgets:
on a loaded host every algorithm gets fewer evaluations; the unit tests count evaluations.

    .venv/bin/python -m benchmarks.bench_selection_anytime [clusters] [app ...] [--as-printed]
"""
from __future__ import annotations

import sys
import time

from benchmarks._common import console, table
from experiments.studies.sanjay_vadhiyar.apps import APPLICATIONS
from experiments.studies.sanjay_vadhiyar.optimality import ALGORITHMS, anytime_gaps

SIZES = (10, 12, 14, 16)
BUDGETS_S = (0.1, 0.5, 2.0)
TARGET = 0.05  # within 5% of the optimum at 0.5 s (issue 47)


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    clusters = int(args[0]) if args else 3
    apps = tuple(args[1:]) or ("MD", "IS")
    algorithms = ALGORITHMS + (("SA-FIG1", "GA-FIG2") if "--as-printed" in sys.argv else ())
    t0 = time.perf_counter()
    for app in apps:
        model, size = APPLICATIONS[app]
        gaps = anytime_gaps(SIZES, clusters, BUDGETS_S, model, size, algorithms, seed=47)
        rows = []
        for (n, budget_s), cell in gaps.groupby(["size", "budget_s"]):
            by = cell.groupby("algorithm", sort=False).gap
            rows.append([str(n), f"{budget_s:g}",
                         *[f"{100 * by.get_group(a).mean():.1f}/{100 * by.get_group(a).max():.1f}"
                           for a in algorithms]])
        table(f"{app}: gap to the optimum in %, mean/worst over {clusters} clusters", ["machines", "budget (s)",
              *algorithms], rows)
        at = gaps[gaps.budget_s == 0.5]
        worst = at.groupby("algorithm", sort=False).gap.max()
        console.print(f"{app} at 0.5 s, worst gap: " + ", ".join(
            f"{a} {100 * worst[a]:.1f}%{'' if worst[a] <= TARGET else ' (over 5%)'}" for a in algorithms))
    console.print(f"gap = predicted time of the schedule / the optimum's - 1; {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
