"""Box Elimination's mapping function, FindScheduleWithConstraints (Fig. 6).

From a hypothetical point (cpu_grid, bw_grid) to a large set of machines whose slowest
machine has at least cpu_grid and whose slowest link has at least bw_grid:
phase 1 (lines 2-17) starts from every machine with enough CPU and removes, one at a time,
the machine with the most links below bw_grid (ties: the lowest mean link bandwidth, then
the lowest index); phase 2 (lines 18-23) adds back, in machine order, each removed machine
whose links to the set are all at least bw_grid.

Fig. 6 takes P_grid as input but never reads it: the set is as large as the two bounds
allow, which is what lets Box Elimination drop the sub-box above the mapped point. Line 20
says "> bw_grid" where the text says "at least"; we use at least, so that both phases keep
the same bound.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from scheduler.selection.problem import SelectionProblem, SubsetSummary


@dataclass(frozen=True)
class Mapped:
    """A schedule and its real (cpu, bw, P), the point Fig. 4 maps back onto the grid."""

    schedule: tuple[int, ...]
    summary: SubsetSummary


def find_schedule_with_constraints(problem: SelectionProblem, cpu_grid: float, bw_grid_bit_s: float,
                                   check: Callable[[], None] | None = None) -> Mapped:
    """`check` is called once per removal, so a search's budget holds inside a large mapping."""
    cpu = problem.cpu
    init = np.flatnonzero(cpu >= cpu_grid)  # line 2
    if init.size == 0:
        raise ValueError(f"cpu_grid: no machine has {cpu_grid} of its CPU available")
    sub = problem.bw_bit_s[np.ix_(init, init)]
    low = (sub < bw_grid_bit_s).astype(np.int64)  # the diagonal is +inf: never low
    finite = np.where(np.isfinite(sub), sub, 0.0)
    violations = low.sum(axis=1)  # lines 10-13, kept up to date as machines leave
    bw_sum = finite.sum(axis=1)
    alive = np.ones(init.size, dtype=bool)
    removed: list[int] = []
    while init.size - len(removed) > 1 and violations.max() > 0:  # line 5 (a removed machine counts -1)
        if check is not None:
            check()
        # line 14: most violations, then least mean bandwidth (same member count: least sum), then
        # lowest index (argmin's first)
        tied = violations == violations.max()
        top = int(np.argmin(np.where(tied, bw_sum, np.inf)))
        alive[top] = False  # line 15
        removed.append(top)
        violations -= low[top]  # rows: the matrices are symmetric, and a row is contiguous
        bw_sum -= finite[top]
        violations[top] = -1
    to_members = sub[:, alive].min(axis=1)  # each machine's slowest link into the set, kept up to date
    for pos in sorted(removed):  # lines 18-23
        if to_members[pos] >= bw_grid_bit_s:
            alive[pos] = True
            np.minimum(to_members, sub[pos], out=to_members)
    schedule = init[alive]
    return Mapped(tuple(int(i) for i in schedule), problem.summary(schedule))
