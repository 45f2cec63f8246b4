"""Which subset sizes to search first, and from which schedule: what makes SA and GA anytime.

Figs. 1 and 2 search every size from max_procs down to 2, a full anneal (9,920 evaluations)
or 50 generations each. A budget that ends early thus leaves only the largest sets searched,
and the best set seldom is one of them (MD's holds the lightly loaded machines): on 10
workstations at 0.5 s both came out 53% above the optimum. This module adds two cheap
passes, run before either search, that give every size a start and a promise:

- the prefixes of the machines ranked by Eq. 1 alone: Fig. 1's lines 2-8, the paper's own
  initial schedule of each size, here evaluated for every size at once (n evaluations);
- Eq. 2's greedy chain with one schedule kept (Fig. 3 without its second best): from the
  best single machine, add the machine that gives the least time (n(n-1)/2 evaluations).

Sizes are then searched in the order of their better start's predicted time, best first.
Neither pass is the paper's SA or GA; both only reorder and seed the paper's searches.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scheduler.selection.problem import SubsetSummary
from scheduler.selection.search import Search


@dataclass(frozen=True)
class Start:
    """A size to search, the schedule to start it from, and that schedule's predicted time."""

    procs: int
    schedule: tuple[int, ...]
    predicted_s: float


def ranked_machines(search: Search) -> np.ndarray:
    """Fig. 1, lines 2-6: machines by Eq. 1 alone (bandwidth: the mean of the links to each)."""
    single_s = np.array([search.evaluate([i]) for i in range(search.problem.size)])
    return np.argsort(single_s, kind="stable")


def promising_starts(search: Search, ranked: np.ndarray) -> list[Start]:
    """Every size from 1 to n, best start first (ties: the larger size, as the paper walks down)."""
    problem = search.problem
    n = problem.size
    best: dict[int, Start] = {}

    def keep(procs: int, schedule: tuple[int, ...], t_s: float) -> None:
        if procs not in best or t_s < best[procs].predicted_s:
            best[procs] = Start(procs, schedule, t_s)

    cpu, bw = problem.cpu, problem.bw_bit_s
    keep(1, (int(ranked[0]),), search.evaluate(ranked[:1]))
    prefix_cpu, prefix_bw = float(cpu[ranked[0]]), np.inf
    for procs in range(2, n + 1):  # Fig. 1, line 8's initial schedule, for every size (minima kept as it grows)
        search.check()
        last = int(ranked[procs - 1])
        prefix_cpu = min(prefix_cpu, float(cpu[last]))
        prefix_bw = min(prefix_bw, float(bw[last, ranked[:procs - 1]].min()))
        t_s = float(problem.predict_s(SubsetSummary(procs, prefix_cpu, prefix_bw)))
        search.offer(ranked[:procs], t_s)
        keep(procs, tuple(int(i) for i in ranked[:procs]), t_s)
    # Eq. 2 with one schedule kept, incremental as in dynamic.py: adding i changes only the minima.
    members = [int(ranked[0])]
    min_cpu, min_bw = float(cpu[members[0]]), np.inf
    inside = np.zeros(n, dtype=bool)
    inside[members] = True
    to_members = bw[:, members[0]].copy()  # each machine's slowest link into the schedule
    for procs in range(2, n + 1):
        new_cpu = np.minimum(cpu, min_cpu)
        new_bw = np.minimum(to_members, min_bw)
        top_s, top = np.inf, -1
        for i in np.flatnonzero(~inside):
            search.check()
            t_s = float(problem.predict_s(SubsetSummary(procs, float(new_cpu[i]), float(new_bw[i]))))
            search.tally(t_s, lambda: members + [int(i)])  # noqa: B023 (called at once)
            if t_s < top_s:
                top_s, top = t_s, int(i)
        members.append(top)
        inside[top] = True
        min_cpu, min_bw = float(new_cpu[top]), float(new_bw[top])
        np.minimum(to_members, bw[:, top], out=to_members)
        keep(procs, tuple(members), top_s)
    return sorted(best.values(), key=lambda s: (s.predicted_s, -s.procs))
