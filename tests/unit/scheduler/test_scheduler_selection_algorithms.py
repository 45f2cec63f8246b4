"""Each selection algorithm on small hand-made clusters whose best subset is known."""
from __future__ import annotations

import math

import numpy as np
import pytest

from scheduler.selection import SelectionProblem, SubsetSummary, Workstation, algorithm_names, select_hosts

GBIT = 1e9
SEARCHES = ["SA", "GA", "DP", "BE"]


def falls_with_processors(s: SubsetSummary) -> float:
    """An Eq. 1 whose time falls with P: compute 100 s / (cpu P), communication 10 s / (bw sqrt P)."""
    return 100.0 / (s.min_avail_cpu * s.procs) + 10.0 / (s.min_avail_bw_bit_s / GBIT * math.sqrt(s.procs))


def loaded_cluster() -> SelectionProblem:
    """Eight machines: w6 and w7 carry heavy load (10% left), the w0-w1 link is congested to
    10 Mbit/s, and w1 is slightly loaded. The best set leaves out w6, w7 and w1."""
    cpu = [1.0, 0.95, 1.0, 1.0, 1.0, 1.0, 0.1, 0.1]
    workstations = [Workstation(f"w{i}", c) for i, c in enumerate(cpu)]
    links = {(f"w{i}", f"w{j}"): 1 * GBIT for i in range(8) for j in range(i + 1, 8)}
    links[("w0", "w1")] = 10e6
    return SelectionProblem.from_links(workstations, links, falls_with_processors)


@pytest.mark.parametrize("algorithm", SEARCHES + ["BRUTE"])
def test_each_algorithm_avoids_the_loaded_machines_and_the_congested_link(algorithm):
    best = select_hosts(loaded_cluster(), algorithm, budget_s=10.0, seed=7)  # all finish: ~1 s for SA, GA
    assert best.workstations == ("w0", "w2", "w3", "w4", "w5")
    assert best.predicted_s == pytest.approx(100 / 5 + 10 / math.sqrt(5))


def two_speeds() -> SelectionProblem:
    """Eight unloaded machines on 1 Gbit/s, four of them twice as fast (a heterogeneous
    multi-cluster's cpu scaling factor): the four fast ones beat all eight, whose slowest
    machine sets the pace, when communication costs grow with P."""
    workstations = [Workstation(f"w{i:02d}", 1.0, speed=2.0 if i < 4 else 1.0) for i in range(8)]
    bw = np.full((8, 8), 1 * GBIT)
    np.fill_diagonal(bw, np.inf)

    def predict(s: SubsetSummary) -> float:
        return 100.0 / (s.min_avail_cpu * s.procs) + 1.0 * s.procs

    return SelectionProblem(tuple(workstations), bw, predict)


@pytest.mark.parametrize("algorithm", ["SA", "GA", "DP", "BRUTE"])
def test_the_fast_machines_are_chosen_when_more_processors_cost_more(algorithm):
    best = select_hosts(two_speeds(), algorithm, budget_s=10.0, seed=3)  # all finish
    # 4 fast: 100/(2*4) + 4 = 16.5; all 8: 100/8 + 8 = 20.5; 4 slow: 29
    assert best.workstations == ("w00", "w01", "w02", "w03")
    assert best.predicted_s == pytest.approx(16.5)


def test_box_elimination_assumes_time_falls_with_processors():
    """Fig. 6 maps a (cpu, bw) point to the largest set it allows and Fig. 4 drops everything
    below it: when more processors cost more, BE still returns a largest set per CPU bound.
    Here that set is the four fast machines (bound 2.0) or all eight (bound 1.0)."""
    best = select_hosts(two_speeds(), "BE", budget_s=1.0, seed=3)
    assert len(best.workstations) in (4, 8)
    assert best.predicted_s >= 16.5


def test_a_selection_says_how_it_ended():
    best = select_hosts(loaded_cluster(), "DP", budget_s=5.0)
    assert best.finished and best.evaluations > 8 and best.elapsed_s < 5.0


def test_an_unknown_algorithm_is_one_line_listing_the_known_ones():
    with pytest.raises(ValueError) as info:
        select_hosts(loaded_cluster(), "tabu", budget_s=1.0)
    message = str(info.value)
    assert "\n" not in message and "algorithm" in message
    assert all(name in message for name in algorithm_names())


@pytest.mark.parametrize("budget", [0.0, -1.0, math.nan])
def test_a_budget_not_above_zero_is_one_line_naming_the_field(budget):
    with pytest.raises(ValueError, match=r"^budget_s: "):
        select_hosts(loaded_cluster(), "BE", budget_s=budget)


def test_a_missing_link_is_one_line_naming_it():
    workstations = [Workstation(n, 1.0) for n in ("a", "b", "c")]
    with pytest.raises(ValueError, match=r"^bw_bit_s: no available bandwidth for link a-c$"):
        SelectionProblem.from_links(workstations, {("a", "b"): 1e9, ("b", "c"): 1e9}, falls_with_processors)


def test_the_slower_direction_of_a_link_counts():
    workstations = [Workstation(n, 1.0) for n in ("a", "b")]
    problem = SelectionProblem.from_links(workstations, {("a", "b"): 1e9, ("b", "a"): 2e8}, falls_with_processors)
    assert problem.summary([0, 1]).min_avail_bw_bit_s == 2e8


def test_seeded_searches_repeat_and_other_seeds_search_otherwise():
    problem = loaded_cluster()
    runs = {seed: select_hosts(problem, "BE", budget_s=5.0, seed=seed) for seed in (11, 11, 12)}
    assert all(r.finished for r in runs.values())
    again = select_hosts(problem, "BE", budget_s=5.0, seed=11)
    assert (again.workstations, again.evaluations) == (runs[11].workstations, runs[11].evaluations)


@pytest.mark.parametrize("algorithm", SEARCHES + ["BRUTE"])
def test_a_cluster_of_one_gives_that_one(algorithm):
    problem = SelectionProblem((Workstation("solo", 0.5),), np.full((1, 1), np.inf), falls_with_processors)
    best = select_hosts(problem, algorithm, budget_s=1.0)
    assert best.workstations == ("solo",) and best.finished
    assert best.predicted_s == pytest.approx(200.0)  # 100/(0.5*1); no link, so no communication
