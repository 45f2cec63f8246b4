"""How far each algorithm's schedule is from the optimum, on clusters small enough for brute force."""
from __future__ import annotations

import numpy as np
import pandas as pd

from experiments.models.sv_model import SvModel
from experiments.studies.sanjay_vadhiyar.clusters import LoadMix, make_cluster
from scheduler.selection import select_hosts

ALGORITHMS = ("SA", "GA", "DP", "BE")


def optimality_gaps(sizes: tuple[int, ...], clusters: int, budget_s: float, model: SvModel, problem_size: float,
                    seed: int = 0) -> pd.DataFrame:
    """One row per (size, cluster, algorithm): its time, the optimum's, and gap = time/optimum - 1."""
    predict = model.predictor(problem_size)
    rows = []
    for n in sizes:
        for k in range(clusters):
            rng = np.random.default_rng([seed, n, k])
            problem = make_cluster(n, LoadMix.random(rng), rng).problem(predict)
            optimum = select_hosts(problem, "BRUTE", budget_s=3600.0)
            for algorithm in ALGORITHMS:
                found = select_hosts(problem, algorithm, budget_s, seed + k)
                rows.append({"size": n, "cluster": k, "algorithm": algorithm, "exec_s": found.predicted_s,
                             "optimum_s": optimum.predicted_s, "gap": found.predicted_s / optimum.predicted_s - 1,
                             "procs": len(found.workstations), "optimum_procs": len(optimum.workstations)})
    return pd.DataFrame(rows)
