"""Box Elimination's mapping function (Fig. 6) on a hand-worked example, and its box."""
from __future__ import annotations

import numpy as np
import pytest

from scheduler.selection import SelectionProblem, SubsetSummary, Workstation
from scheduler.selection.box_elimination import bw_step_bit_s
from scheduler.selection.mapping import find_schedule_with_constraints

M = 1e6


def path_cluster() -> SelectionProblem:
    """Six machines. m5 has too little CPU for the bound 0.5; among m0..m4 the links below
    200 Mbit/s form a path m0-m1-m2-m3-m4 (100 Mbit/s each).

    Hand-worked, bw_grid = 200 Mbit/s:
    phase 1, step 1: violations m0 1, m1 2, m2 2, m3 2, m4 1; of m1..m3 m2 has the lowest
      mean link bandwidth (200 against 300, 300): remove m2.
    step 2: m0, m1, m3, m4 have one violation each; means 500, 366.7, 366.7, 500: m1 and m3
      tie, the lower index goes: remove m1.
    step 3: m3 and m4 have one; means 300 and 500: remove m3. {m0, m4}: the link is 900.
    phase 2, in machine order: m1 has a 100 link to m0 (no); m2 has 300 to both (yes);
      m3 has 100 to m4 (no). Result {m0, m2, m4}: min CPU 0.6, min link 300 Mbit/s.
    """
    bw = np.full((6, 6), 500 * M)
    for a, b in [(0, 1), (1, 2), (2, 3), (3, 4)]:
        bw[a, b] = bw[b, a] = 100 * M
    for a, b, v in [(2, 0, 300), (2, 4, 300), (0, 4, 900)]:
        bw[a, b] = bw[b, a] = v * M
    np.fill_diagonal(bw, np.inf)
    cpu = [0.9, 0.8, 0.6, 0.7, 0.95, 0.3]
    return SelectionProblem(tuple(Workstation(f"m{i}", c) for i, c in enumerate(cpu)), bw,
                            lambda s: 1.0 / s.procs)


def test_the_hand_worked_example():
    mapped = find_schedule_with_constraints(path_cluster(), cpu_grid=0.5, bw_grid_bit_s=200 * M)
    assert mapped.schedule == (0, 2, 4)
    assert mapped.summary == SubsetSummary(3, 0.6, 300 * M)


def test_without_a_bandwidth_bound_every_machine_with_enough_cpu_stays():
    mapped = find_schedule_with_constraints(path_cluster(), cpu_grid=0.5, bw_grid_bit_s=50 * M)
    assert mapped.schedule == (0, 1, 2, 3, 4)


def test_the_bounds_hold_for_any_point():
    problem = path_cluster()
    for cpu_grid in (0.3, 0.65, 0.9):
        for bw_grid in (100 * M, 350 * M, 600 * M):
            s = find_schedule_with_constraints(problem, cpu_grid, bw_grid).summary
            assert s.min_avail_cpu >= cpu_grid
            assert s.procs == 1 or s.min_avail_bw_bit_s >= bw_grid


def test_no_machine_with_enough_cpu_is_one_line_naming_the_field():
    with pytest.raises(ValueError, match=r"^cpu_grid: "):
        find_schedule_with_constraints(path_cluster(), cpu_grid=0.99, bw_grid_bit_s=M)


@pytest.mark.parametrize("bw_max, step", [(100 * M, 10 * M), (1e9, 10 * M), (5e9, 50 * M), (10e9, 100 * M)])
def test_the_bandwidth_steps_of_section_4_4(bw_max, step):
    assert bw_step_bit_s(bw_max) == step
