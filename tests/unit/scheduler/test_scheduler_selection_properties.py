"""Properties on random small clusters: the mapping's bounds and closure, and no search beats brute force."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.selection import SelectionProblem, SubsetSummary, Workstation, select_hosts
from scheduler.selection.mapping import find_schedule_with_constraints


def eq1(s: SubsetSummary) -> float:
    return 50.0 / (s.min_avail_cpu * s.procs) + 2.0 / (s.min_avail_bw_bit_s / 1e9) * math.log2(s.procs + 1) / s.procs


@st.composite
def clusters(draw, max_machines: int = 7) -> SelectionProblem:
    n = draw(st.integers(2, max_machines))
    cpu = draw(st.lists(st.floats(0.05, 1.0), min_size=n, max_size=n))
    upper = draw(st.lists(st.floats(1e7, 1e9), min_size=n * n, max_size=n * n))
    bw = np.triu(np.array(upper).reshape(n, n), 1)
    bw = bw + bw.T
    np.fill_diagonal(bw, np.inf)
    return SelectionProblem(tuple(Workstation(f"m{i}", c) for i, c in enumerate(cpu)), bw, eq1)


@settings(max_examples=60, deadline=None)
@given(problem=clusters(), cpu_share=st.floats(0.0, 1.0), bw_grid=st.floats(1e7, 1e9))
def test_the_mapping_keeps_its_bounds_and_leaves_out_only_machines_it_must(problem, cpu_share, bw_grid):
    cpu_grid = float(problem.cpu.max()) * cpu_share
    mapped = find_schedule_with_constraints(problem, cpu_grid, bw_grid)
    chosen = list(mapped.schedule)
    assert chosen and mapped.summary == problem.summary(chosen)
    assert mapped.summary.min_avail_cpu >= cpu_grid
    if len(chosen) > 1:
        assert mapped.summary.min_avail_bw_bit_s >= bw_grid
    for m in range(problem.size):  # phase 2's closure: an eligible machine outside has a low link in
        if m not in chosen and problem.cpu[m] >= cpu_grid:
            assert problem.bw_bit_s[m, chosen].min() < bw_grid


@settings(max_examples=15, deadline=None)
@given(problem=clusters(max_machines=6), seed=st.integers(0, 2**16))
def test_no_search_beats_the_optimum_and_each_reports_what_it_found(problem, seed):
    optimum = select_hosts(problem, "BRUTE", budget_s=10.0)
    index = {w.name: i for i, w in enumerate(problem.workstations)}
    for algorithm in ("DP", "BE"):
        found = select_hosts(problem, algorithm, budget_s=1.0, seed=seed)
        assert found.predicted_s >= optimum.predicted_s - 1e-9
        assert math.isclose(found.predicted_s, problem.predict_subset_s([index[w] for w in found.workstations]))
