"""Incremental Dynamic Programming, Fig. 3 and Eq. 2.

sched_n = sched_{n-1} + the machine that minimises t; the two best schedules of each size
are carried to the next (line 18), against local minima. Adding machine i to a schedule S
changes only min(cpu) and min(bw) by cpu[i] and min_j bw[i, j], so every candidate of a step
is summarised in one vectorised pass; Eq. 1 is still evaluated (and counted) per candidate.
"""
from __future__ import annotations

import numpy as np

from scheduler.selection.problem import SubsetSummary
from scheduler.selection.search import Search

KEEP = 2  # best and second best (lines 16-21)


def dynamic_programming(search: Search, seed: int) -> None:
    """Seed unused: Fig. 3 has no randomness."""
    problem = search.problem
    n = problem.size
    single_s = [search.evaluate([i]) for i in range(n)]  # lines 2-5
    first = int(np.argmin(single_s))  # line 6
    bw = problem.bw_bit_s
    cpu = problem.cpu
    # For each kept schedule: its members, min cpu, min bw among members (inf for one machine).
    states = [([first], float(cpu[first]), float("inf"))]
    count = 1
    while count < n:  # line 9
        candidates: list[tuple[float, list[int], float, float]] = []
        for members, min_cpu, min_bw in states:  # line 12
            inside = np.zeros(n, dtype=bool)
            inside[members] = True
            new_cpu = np.minimum(cpu, min_cpu)
            new_bw = np.minimum(bw[:, members].min(axis=1), min_bw)
            scored: list[tuple[float, int]] = []
            for i in np.flatnonzero(~inside):  # lines 13-15
                search.check()
                t_s = float(problem.predict_s(SubsetSummary(count + 1, float(new_cpu[i]), float(new_bw[i]))))
                search.tally(t_s, lambda: members + [int(i)])  # noqa: B023 (called at once)
                scored.append((t_s, int(i)))
            scored.sort()
            for t_s, i in scored[:KEEP]:  # lines 16-19
                candidates.append((t_s, members + [i], float(new_cpu[i]), float(new_bw[i])))
        candidates.sort(key=lambda c: c[0])
        states, seen = [], set()
        for _, members, min_cpu, min_bw in candidates:  # line 21: the top two distinct schedules
            key = frozenset(members)
            if key not in seen and len(states) < KEEP:
                seen.add(key)
                states.append((members, min_cpu, min_bw))
        count += 1
