"""Sevcik's execution-time model T(p) = W/p + alpha + beta*p, fitted by NNLS.

W is the parallelisable work, alpha the fixed overhead, beta the cost that
grows with the partition (communication, synchronisation). The three are
physical amounts of time, so they are kept non-negative
(scipy.optimize.nnls) rather than fitted freely. Host side (venv).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy.optimize import nnls


@dataclass(frozen=True)
class SevcikFit:
    work_s: float      # W, seconds of work at p = 1 that divides over the ranks
    alpha_s: float     # fixed overhead (s)
    beta_s: float      # overhead per processor (s)

    def predict(self, p: float | np.ndarray) -> float | np.ndarray:
        return self.work_s / p + self.alpha_s + self.beta_s * p

    def speedup(self, p: float | np.ndarray) -> float | np.ndarray:
        return self.predict(1) / self.predict(p)

    def best_p(self) -> float:
        """The partition size with the shortest predicted time (sqrt(W/beta))."""
        return float(np.sqrt(self.work_s / self.beta_s)) if self.beta_s > 0 else float("inf")


@dataclass(frozen=True)
class FitPoint:
    p: int
    measured_s: float
    predicted_s: float

    @property
    def relative_error(self) -> float:
        return (self.predicted_s - self.measured_s) / self.measured_s


def fit(procs: Sequence[float], times_s: Sequence[float]) -> SevcikFit:
    """Least-squares fit with W, alpha, beta >= 0; repeated p values are fine (use every rep).

    Each row is scaled by 1/T so the fit minimises relative error: otherwise the
    long p=1 runs would dominate and the small times at large p would be ignored.
    """
    p = np.asarray(procs, dtype=float)
    t = np.asarray(times_s, dtype=float)
    if p.shape != t.shape or p.size < 3:
        raise ValueError("need at least three (p, time) points of equal length")
    if np.any(p <= 0) or np.any(t <= 0):
        raise ValueError("partition sizes and times must be positive")
    design = np.column_stack([1.0 / p, np.ones_like(p), p]) / t[:, None]
    coef, _ = nnls(design, np.ones_like(t))
    return SevcikFit(float(coef[0]), float(coef[1]), float(coef[2]))


def errors(model: SevcikFit, procs: Sequence[int], times_s: Sequence[float]) -> list[FitPoint]:
    """The fit against each measured point (use the mean per p for a table)."""
    return [FitPoint(int(p), float(t), float(model.predict(p))) for p, t in zip(procs, times_s)]
