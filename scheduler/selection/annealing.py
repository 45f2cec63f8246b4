"""Simulated Annealing, Fig. 1 (after Yarkhan & Dongarra), with Eq. 1 as objective and start.

The paper's: the ranking of single machines by Eq. 1 (lines 2-6), a schedule of `procs`
machines annealed by replacing one machine at random (line 14), the temperatures 100 to 1
in steps of 0.8 with 80 steps each (lines 10-12), a better schedule always accepted and a
worse one with probability exp(-(new - cur)/temperature). Line 23 reads
exp(-(prevExecTime - curExecTime)/temperature), a difference that does not depend on the
candidate (and prevExecTime is unset before the first acceptance); we use the Metropolis
rule the text describes.

Added, so that a budget that ends early still gives a good schedule (`promise.py`): every
size gets a start before any is annealed (line 8's top-procs schedule, or Eq. 2's greedy
chain when it predicts less), and sizes are annealed best start first instead of from
max_procs down (line 7). Each size's anneal is the paper's, started from that schedule.
`annealing_as_printed` keeps line 7's order and line 8's start, for comparison.
"""
from __future__ import annotations

import math

import numpy as np

from scheduler.selection.promise import promising_starts, ranked_machines
from scheduler.selection.search import Search

TEMPERATURE_START = 100.0  # line 10
TEMPERATURE_END = 1.0
TEMPERATURE_STEP = 0.8
STEPS_PER_TEMPERATURE = 80  # line 12


def simulated_annealing(search: Search, seed: int) -> None:
    """Anytime: sizes in the order of their start's promise, each annealed as Fig. 1 does."""
    rng = np.random.default_rng(seed)
    ranked = ranked_machines(search)
    n = search.problem.size
    for start in promising_starts(search, ranked):
        if 1 < start.procs < n:  # one machine: nothing to anneal (line 7 stops at 2); all: nothing to swap in
            chosen = np.array(start.schedule)
            _anneal(search, rng, chosen, np.setdiff1d(np.arange(n), chosen))


def annealing_as_printed(search: Search, seed: int) -> None:
    """Fig. 1 as printed: sizes from max_procs down, each from the top procs machines (line 8)."""
    rng = np.random.default_rng(seed)
    ranked = ranked_machines(search)
    for procs in range(search.problem.size, 1, -1):  # line 7
        if procs < ranked.size:
            _anneal(search, rng, ranked[:procs].copy(), ranked[procs:].copy())  # line 8
        else:
            search.evaluate(ranked)  # all machines: nothing to swap in


def _anneal(search: Search, rng: np.random.Generator, cur: np.ndarray, outside: np.ndarray) -> None:
    """Lines 8-30 for one size."""
    procs = cur.size
    cur_s = search.evaluate(cur)
    temperatures = np.arange(TEMPERATURE_START, TEMPERATURE_END - 1e-9, -TEMPERATURE_STEP)
    for temperature in temperatures:  # line 10
        for _ in range(STEPS_PER_TEMPERATURE):  # line 12
            a, b = int(rng.integers(procs)), int(rng.integers(outside.size))
            new = cur.copy()
            new[a] = outside[b]  # line 14: replace a machine at random
            new_s = search.evaluate(new)
            if new_s < cur_s or rng.random() < math.exp(-(new_s - cur_s) / temperature):
                outside[b] = cur[a]
                cur, cur_s = new, new_s
