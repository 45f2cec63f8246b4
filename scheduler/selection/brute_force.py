"""Every subset of every size: the optimum, for clusters small enough (2^n - 1 subsets)."""
from __future__ import annotations

from itertools import combinations

from scheduler.selection.search import Search

#: 2^20 subsets is about a minute of evaluations; beyond that brute force is not an option.
MAX_MACHINES = 20


def brute_force(search: Search, seed: int) -> None:
    """Evaluate all subsets, smallest first (seed unused: there is no randomness)."""
    n = search.problem.size
    if n > MAX_MACHINES:
        raise ValueError(f"workstations: brute force takes at most {MAX_MACHINES} machines, not {n}")
    for k in range(1, n + 1):
        for subset in combinations(range(n), k):
            search.evaluate(subset)
