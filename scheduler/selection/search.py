"""What every algorithm shares: the time budget (the paper's `alarm()`) and the best subset so far.

The algorithms call `check()` inside their innermost loops and before each evaluation,
so a budget is honoured to within one evaluation (well under 50 ms even at 1,024 machines).
A budget may also be counted in evaluations (`max_evaluations`): the same search then stops
at the same point on any host, which is what a test of quality-within-budget needs. Or the
budget may be counted in this thread's CPU seconds (`cpu_clock`): a long study run at low
priority on a shared host then gives every search the CPU the paper's budget names.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence

import numpy as np

from scheduler.selection.problem import Selection, SelectionProblem


class OutOfTime(Exception):
    """Raised inside a search when its budget is spent; `Search.run` turns it into a result."""


class Search:
    """A search's clock, its evaluation count and its incumbent (the best subset seen)."""

    def __init__(self, problem: SelectionProblem, algorithm: str, budget_s: float,
                 max_evaluations: int | None = None, cpu_clock: bool = False) -> None:
        if not (budget_s > 0 and math.isfinite(budget_s)):
            raise ValueError(f"budget_s: {budget_s:g} is not a number of seconds > 0")
        if max_evaluations is not None and max_evaluations < 1:
            raise ValueError(f"max_evaluations: {max_evaluations} is not >= 1")
        self.max_evaluations = max_evaluations
        self.problem = problem
        self.algorithm = algorithm
        self.budget_s = budget_s
        self.now = time.thread_time if cpu_clock else time.perf_counter
        self.t0 = self.now()
        self.deadline = self.t0 + budget_s
        self.evaluations = 0
        self.best_s = math.inf
        self.best: tuple[int, ...] = ()

    def check(self) -> None:
        """Stop the search here when the budget is spent, once there is an answer: the first
        subset is always evaluated, so a search on a busy host still returns a schedule."""
        if self.best and (self.now() >= self.deadline
                          or (self.max_evaluations is not None and self.evaluations >= self.max_evaluations)):
            raise OutOfTime

    def evaluate(self, subset: Sequence[int] | np.ndarray) -> float:
        """Eq. 1 on `subset`, counted and remembered if it is the best so far."""
        self.check()
        t_s = self.problem.predict_subset_s(subset)
        return self.offer(subset, t_s)

    def offer(self, subset: Sequence[int] | np.ndarray, t_s: float) -> float:
        """Record a prediction made elsewhere (DP evaluates candidates incrementally)."""
        self.evaluations += 1
        if t_s < self.best_s:
            self.best_s = t_s
            self.best = tuple(int(i) for i in subset)
        return t_s

    def tally(self, t_s: float, make_subset: Callable[[], Sequence[int]]) -> float:
        """`offer`, building the subset only when it is the best so far (DP scores n candidates a step)."""
        if t_s < self.best_s:
            return self.offer(make_subset(), t_s)
        self.evaluations += 1
        return t_s

    def result(self, finished: bool) -> Selection:
        return Selection(self.algorithm, self.problem.names(self.best), self.best_s, self.evaluations,
                         self.now() - self.t0, finished)
