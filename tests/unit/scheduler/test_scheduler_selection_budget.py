"""The time budget (the paper's alarm()) holds within 50 ms, on a cluster too large to finish."""
from __future__ import annotations

import time

import pytest

from experiments.studies.sanjay_vadhiyar.optimality import budget_cluster
from scheduler.selection import SelectionProblem, select_hosts

TOLERANCE_S = 0.050


def large_cluster(n: int = 400, seed: int = 5) -> SelectionProblem:
    return budget_cluster(n, seed)


@pytest.mark.parametrize("algorithm", ["SA", "GA", "DP", "BE"])
def test_the_budget_holds_within_50_ms(algorithm):
    problem = large_cluster()
    t0, cpu0 = time.perf_counter(), time.thread_time()
    best = select_hosts(problem, algorithm, budget_s=0.3, seed=1)
    wall_s, cpu_s = time.perf_counter() - t0, time.thread_time() - cpu0
    assert not best.finished  # 400 machines: none of them finishes in 0.3 s
    # The search's own work past its deadline, in CPU time: on a loaded host the process may
    # be paused after the deadline, which wall time would blame on the algorithm (it failed
    # once in 13 runs at load average 4.4). This thread's CPU only: the search runs in it, and a
    # thread an earlier test left in the same pytest-xdist worker would count in process_time
    # (BE read 0.506 s so once). The wall-clock figure is the benchmark's
    # (benchmarks/bench_selection_optimality.py prints it).
    assert cpu_s <= 0.3 + TOLERANCE_S, f"{algorithm} used {cpu_s:.3f} s of CPU on a 0.3 s budget"
    assert wall_s >= 0.3  # it did search until the budget ran out
    assert best.workstations and best.predicted_s == pytest.approx(
        problem.predict_subset_s([int(w[1:]) for w in best.workstations]))


def test_brute_force_refuses_a_cluster_it_cannot_enumerate():
    with pytest.raises(ValueError, match=r"^workstations: brute force takes at most 20"):
        select_hosts(large_cluster(30), "BRUTE", budget_s=1.0)


@pytest.mark.parametrize("algorithm", ["SA", "GA", "DP", "BE"])
def test_a_budget_spent_before_the_first_evaluation_still_gives_a_schedule(algorithm):
    best = select_hosts(large_cluster(200), algorithm, budget_s=1e-9, seed=1)
    assert best.workstations and best.evaluations >= 1 and not best.finished
