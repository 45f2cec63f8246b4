"""How far each algorithm's schedule is from the optimum, on clusters small enough for brute force."""
from __future__ import annotations

import numpy as np
import pandas as pd

from experiments.models.sv_model import SvModel
from experiments.studies.sanjay_vadhiyar.clusters import LoadMix, make_cluster
from scheduler.selection import SelectionProblem, SubsetSummary, Workstation, select_hosts

ALGORITHMS = ("SA", "GA", "DP", "BE")


def optimality_gaps(sizes: tuple[int, ...], clusters: int, budget_s: float, model: SvModel, problem_size: float,
                    seed: int = 0) -> pd.DataFrame:
    """One row per (size, cluster, algorithm): its time, the optimum's, and gap = time/optimum - 1."""
    rows = []
    for n, k, problem, optimum in _clusters_with_optimum(sizes, clusters, model, problem_size, seed):
        for algorithm in ALGORITHMS:
            found = select_hosts(problem, algorithm, budget_s, seed + k)
            rows.append({"size": n, "cluster": k, "algorithm": algorithm, "exec_s": found.predicted_s,
                         "optimum_s": optimum.predicted_s, "gap": found.predicted_s / optimum.predicted_s - 1,
                         "procs": len(found.workstations), "optimum_procs": len(optimum.workstations)})
    return pd.DataFrame(rows)


def _clusters_with_optimum(sizes: tuple[int, ...], clusters: int, model: SvModel, problem_size: float, seed: int):
    """(size, cluster index, problem, brute-force optimum) for each random cluster, drawn from
    (seed, size, index) so both studies below search the same clusters."""
    predict = model.predictor(problem_size)
    for n in sizes:
        for k in range(clusters):
            rng = np.random.default_rng([seed, n, k])
            problem = make_cluster(n, LoadMix.random(rng), rng).problem(predict)
            yield n, k, problem, select_hosts(problem, "BRUTE", budget_s=3600.0)


def anytime_gaps(sizes: tuple[int, ...], clusters: int, budgets_s: tuple[float, ...], model: SvModel,
                 problem_size: float, algorithms: tuple[str, ...] = ALGORITHMS, seed: int = 0) -> pd.DataFrame:
    """One row per (size, cluster, budget, algorithm): gap = time/optimum - 1, the optimum by brute
    force (each cluster's is computed once, whatever the budgets)."""
    rows = []
    for n, k, problem, optimum in _clusters_with_optimum(sizes, clusters, model, problem_size, seed):
        for budget_s in budgets_s:
            for algorithm in algorithms:
                found = select_hosts(problem, algorithm, budget_s, seed + k)
                rows.append({"size": n, "cluster": k, "budget_s": budget_s, "algorithm": algorithm,
                             "gap": found.predicted_s / optimum.predicted_s - 1,
                             "evaluations": found.evaluations, "finished": found.finished})
    return pd.DataFrame(rows)


def budget_cluster(n: int, seed: int = 5) -> SelectionProblem:
    """A cluster too large for any search to finish in a short budget (random speeds and links,
    a predictor that falls with P): what the time-budget test and benchmark search."""
    rng = np.random.default_rng(seed)
    workstations = tuple(Workstation(f"w{i:04d}", float(rng.uniform(0.05, 1.0))) for i in range(n))
    bw = rng.uniform(2e8, 8e8, (n, n))
    bw = np.minimum(bw, bw.T)
    np.fill_diagonal(bw, np.inf)

    def predict(s: SubsetSummary) -> float:
        return 500.0 / (s.min_avail_cpu * s.procs) + 20.0 / (s.min_avail_bw_bit_s / 1e9) * np.log2(s.procs + 1) / s.procs

    return SelectionProblem(workstations, bw, predict)
