"""The multi-phase linear regression that picks Eq. 1's functions (§3, after [45]).

Eq. 1 is linear in its two coefficients once its six functions are chosen, so each choice is
a two-column least-squares fit; the choice kept is the one with the least mean absolute
percentage error, the paper's criterion. Trying all 7^4 x 4^2 choices at once would cost
40,000 fits and lets load and scaling trade off against each other, so, as [45] does, the
fit goes in phases:

1. runs without load (CPU and bandwidth within 10% of the best seen) choose f_comp, f_comm,
   f_Pcomp and f_Pcomm, with f_cpu = f_bw = 1; the best `KEEP` choices go on (the two terms
   are interchangeable here, so both orders of a pair survive);
2. all runs choose f_cpu and f_bw for each kept choice, and the coefficients are refitted.

Fits weigh each run by 1/T (least squares on relative error, matching the criterion), and
coefficients are kept non-negative (scipy's NNLS): a time is a sum of costs.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import nnls

from experiments.models.sv_functions import LOAD, PROBLEM_SIZE, PROCESSORS
from experiments.models.sv_model import GBIT, SvModel, SvModelError

UNLOADED_SHARE = 0.9  # a run is unloaded when its CPU and bandwidth are within 10% of the best
KEEP = 12  # phase-1 choices carried to phase 2
MIN_UNLOADED_RUNS = 6
TIE = 1e-9  # MAPEs this close are a tie: the simpler (earlier) candidates win


@dataclass(frozen=True)
class TrainingRun:
    """One measured run: its input, the monitor's minima during it, and its time."""

    problem_size: float
    procs: int
    min_avail_cpu: float  # fraction
    min_avail_bw_bit_s: float
    elapsed_s: float

    def __post_init__(self) -> None:
        for name in ("problem_size", "min_avail_cpu", "min_avail_bw_bit_s", "elapsed_s"):
            value = getattr(self, name)
            if not (value > 0 and math.isfinite(value)):
                raise SvModelError(f"runs: {name} {value} is not > 0")
        if self.procs < 1:
            raise SvModelError(f"runs: procs {self.procs} is not >= 1")


@dataclass(frozen=True)
class _Fit:
    mape: float
    coef: tuple[float, float]
    names: tuple[str, ...]


def _fit(columns: np.ndarray, t: np.ndarray) -> tuple[float, tuple[float, float]]:
    a = columns / t[:, None]
    if not np.all(np.isfinite(a)):
        return math.inf, (0.0, 0.0)
    coef, _ = nnls(a, np.ones_like(t))
    mape = float(np.mean(np.abs(columns @ coef - t) / t))
    return mape, (float(coef[0]), float(coef[1]))


def fit(runs: Sequence[TrainingRun], application: str) -> SvModel:
    """Eq. 1 for `application` from its training runs."""
    if not runs:
        raise SvModelError("runs: none given")
    n = np.array([r.problem_size for r in runs])
    p = np.array([r.procs for r in runs], dtype=float)
    cpu = np.array([r.min_avail_cpu for r in runs])
    bw = np.array([r.min_avail_bw_bit_s for r in runs]) / GBIT
    t = np.array([r.elapsed_s for r in runs])
    unloaded = (cpu >= UNLOADED_SHARE * cpu.max()) & (bw >= UNLOADED_SHARE * bw.max())
    if unloaded.sum() < MIN_UNLOADED_RUNS:
        raise SvModelError(f"runs: {int(unloaded.sum())} runs without load; phase 1 needs at least "
                           f"{MIN_UNLOADED_RUNS}, at several problem sizes and processor counts")

    # Phase 1: the problem-size and processor functions, on unloaded runs.
    nu, pu, tu = n[unloaded], p[unloaded], t[unloaded]
    size_cols = {k: f(nu) for k, f in PROBLEM_SIZE.items()}
    proc_cols = {k: f(pu) for k, f in PROCESSORS.items()}
    phase1: list[_Fit] = []
    for fc, fm, pc, pm in itertools.product(PROBLEM_SIZE, PROBLEM_SIZE, PROCESSORS, PROCESSORS):
        cols = np.column_stack([size_cols[fc] / proc_cols[pc], size_cols[fm] / proc_cols[pm]])
        mape, coef = _fit(cols, tu)
        phase1.append(_Fit(mape, coef, (fc, fm, pc, pm)))
    phase1.sort(key=lambda f: round(f.mape / TIE))  # stable: ties keep candidate order

    # Phase 2: the load functions for the best phase-1 choices, on all runs; coefficients refitted.
    best: _Fit | None = None
    for kept in phase1[:KEEP]:
        fc, fm, pc, pm = kept.names
        comp = PROBLEM_SIZE[fc](n) / PROCESSORS[pc](p)
        comm = PROBLEM_SIZE[fm](n) / PROCESSORS[pm](p)
        for f_cpu, f_bw in itertools.product(LOAD, LOAD):
            cols = np.column_stack([comp / LOAD[f_cpu](cpu), comm / LOAD[f_bw](bw)])
            mape, coef = _fit(cols, t)
            if best is None or mape < best.mape - TIE:
                best = _Fit(mape, coef, (fc, fm, pc, pm, f_cpu, f_bw))
    assert best is not None
    fc, fm, pc, pm, f_cpu, f_bw = best.names
    return SvModel(application=application, problem_size_range=(float(n.min()), float(n.max())),
                   f_comp=fc, f_comm=fm, f_cpu=f_cpu, f_bw=f_bw, f_pcomp=pc, f_pcomm=pm,
                   a_comp_s=best.coef[0], a_comm_s=best.coef[1], mape=best.mape, runs=len(runs))


def holdout_mape(model: SvModel, runs: Sequence[TrainingRun]) -> float:
    """Mean absolute percentage error of `model` on runs it was not fitted on."""
    errors = [abs(model.predict_s(r.problem_size, r.procs, r.min_avail_cpu, r.min_avail_bw_bit_s) - r.elapsed_s)
              / r.elapsed_s for r in runs]
    return float(np.mean(errors))
