"""Simulated Annealing, Fig. 1 (after Yarkhan & Dongarra), with Eq. 1 as objective and start.

One reading where the figure is not self-consistent: line 23 accepts a worse schedule with
probability exp(-(prevExecTime - curExecTime)/temperature), a difference that does not
depend on the candidate (and prevExecTime is unset before the first acceptance). We use
the Metropolis rule the text describes, exp(-(newExecTime - curExecTime)/temperature).
"""
from __future__ import annotations

import math

import numpy as np

from scheduler.selection.search import Search

TEMPERATURE_START = 100.0  # line 10
TEMPERATURE_END = 1.0
TEMPERATURE_STEP = 0.8
STEPS_PER_TEMPERATURE = 80  # line 12


def simulated_annealing(search: Search, seed: int) -> None:
    problem, rng = search.problem, np.random.default_rng(seed)
    n = problem.size
    # Lines 2-6: rank single machines by Eq. 1 (bandwidth: mean of the links to each).
    single_s = np.array([search.evaluate([i]) for i in range(n)])
    ranked = np.argsort(single_s, kind="stable")
    temperatures = np.arange(TEMPERATURE_START, TEMPERATURE_END - 1e-9, -TEMPERATURE_STEP)
    for procs in range(n, 1, -1):  # line 7
        cur = ranked[:procs].copy()  # line 8
        outside = ranked[procs:].copy()
        cur_s = search.evaluate(cur)
        if outside.size == 0:
            continue  # all machines: nothing to swap in
        for temperature in temperatures:  # line 10
            for _ in range(STEPS_PER_TEMPERATURE):  # line 12
                a, b = int(rng.integers(procs)), int(rng.integers(outside.size))
                new = cur.copy()
                new[a] = outside[b]  # line 14: replace a machine at random
                new_s = search.evaluate(new)
                if new_s < cur_s or rng.random() < math.exp(-(new_s - cur_s) / temperature):
                    outside[b] = cur[a]
                    cur, cur_s = new, new_s
