"""Selection algorithms by name, and the one call a scheduler makes: `select_hosts`."""
from __future__ import annotations

from collections.abc import Callable

from scheduler.selection.annealing import annealing_as_printed, simulated_annealing
from scheduler.selection.box_elimination import box_elimination
from scheduler.selection.brute_force import brute_force
from scheduler.selection.dynamic import dynamic_programming
from scheduler.selection.genetic import genetic_algorithm, genetic_as_printed
from scheduler.selection.problem import Selection, SelectionProblem
from scheduler.selection.search import OutOfTime, Search

Algorithm = Callable[[Search, int], None]

_ALGORITHMS: dict[str, Algorithm] = {
    "SA": simulated_annealing,  # Fig. 1, sizes by promise (anytime)
    "GA": genetic_algorithm,  # Fig. 2, sizes by promise (anytime)
    "DP": dynamic_programming,  # Fig. 3, Eq. 2
    "BE": box_elimination,  # Figs. 4-6
    "BRUTE": brute_force,  # the optimum, for small clusters
    "SA-FIG1": annealing_as_printed,  # Fig. 1 as printed: max_procs down
    "GA-FIG2": genetic_as_printed,  # Fig. 2 as printed: max_procs down
}


def algorithm_names() -> list[str]:
    return list(_ALGORITHMS)


def select_hosts(problem: SelectionProblem, algorithm: str, budget_s: float, seed: int = 0,
                 max_evaluations: int | None = None, cpu_clock: bool = False) -> Selection:
    """The subset with the least predicted time that `algorithm` finds within `budget_s` seconds
    (and, if given, `max_evaluations` evaluations of the predictor, whichever ends first);
    `cpu_clock` counts the seconds in this thread's CPU time instead of wall-clock time.

    Like the paper's alarm(), running out of time is not a failure: the best subset found so
    far is returned, with `finished` False.
    """
    key = algorithm.strip().upper()
    if key not in _ALGORITHMS:
        raise ValueError(f"algorithm: unknown {algorithm!r}; known: {', '.join(algorithm_names())}")
    search = Search(problem, key, budget_s, max_evaluations, cpu_clock)
    try:
        _ALGORITHMS[key](search, seed)
    except OutOfTime:
        return search.result(finished=False)
    return search.result(finished=True)
