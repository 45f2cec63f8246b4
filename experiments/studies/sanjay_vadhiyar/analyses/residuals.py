"""Why does Sanjay & Vadhiyar's Eq. 1 miss held-out live runs, and does a fitting variant the
paper's method permits do better? Answered from the stored runs, without running anything.

    python -m experiments.studies.sanjay_vadhiyar.analyses.residuals experiments/results/sanjay-vadhiyar/live-cg/cg-runs.csv \
        experiments/results/sanjay-vadhiyar/live-cg/fig7/runs.csv --application cg \
        --noise-floor experiments/results/sanjay-vadhiyar/noise-floor/runs.csv \
        --csv residuals-cg.csv --png residuals-cg.png

The learning curve (experiments/results/sanjay-vadhiyar/learning-curve.md) showed that more runs
do not bring the held-out error to 10%; what is left is the model's form or the runs' noise. A
learning curve cannot tell a bias from scatter; residuals can. This prints:

1. the held-out error of the model fitted as `nowlab select fit` fits it (sv_regression.fit);
2. its signed error by processors, problem size, minAvgAvailCPU, minAvgAvailBW, run length,
   load, and how many of the job's workstations carry a CPU load (from the run's `load`
   column: Eq. 1 sees only the most loaded one's availability, the minimum), and how much of
   the error a per-group rescaling would remove (bias against scatter);
3. how the training runs cover the held-out runs' region;
4. fitting variants (candidate families, how the phases are fitted), scored by leave-one-out
   cross-validation on the training runs only; the held-out error is then computed once, for
   the variant the rule picks (`choose`), never used to pick it;
5. the noise floor: repeated held-out cases if there are any, else the identical runs of
   noise-floor/runs.csv.

The variants are fitted by a batched copy of sv_regression's two-phase search (every choice at
once, closed-form two-column NNLS) so that a joint search and leave-one-out stay cheap; the
script first checks that its `base` variant picks what sv_regression.fit picks.
"""
from __future__ import annotations

import argparse
import itertools
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from experiments.analysis_io import console, table

from experiments.models.sv_functions import LOAD, PROBLEM_SIZE, PROCESSORS, Fn, shown
from experiments.models.sv_model import GBIT, SvModel
from experiments.models.sv_regression import (KEEP, MIN_UNLOADED_RUNS, TIE, UNLOADED_SHARE,
                                              TrainingRun, fit)

EXTRA_LOAD: dict[str, Fn] = {"x^1.5": lambda x: x ** 1.5, "x^3": lambda x: x ** 3}
EXTRA_PROCS: dict[str, Fn] = {"P log P": lambda p: p * (np.log2(p) + 1.0)}
LAD_STEPS = 30  # iteratively reweighted least squares steps of a MAPE fit
Solver = Callable[[np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


# ---- the runs -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Runs:
    """Eq. 1's inputs and the measured times, as arrays (bw in Gbit/s, as sv_functions takes it)."""

    n: np.ndarray
    p: np.ndarray
    cpu: np.ndarray
    bw: np.ndarray
    t: np.ndarray

    @classmethod
    def of(cls, frame: pd.DataFrame, elapsed: str) -> Runs:
        return cls(frame.problem_size.to_numpy(float), frame.procs.to_numpy(float),
                   frame.min_avail_cpu.to_numpy(float), frame.min_avail_bw_bit_s.to_numpy(float) / GBIT,
                   frame[elapsed].to_numpy(float))

    def take(self, keep: np.ndarray) -> Runs:
        return Runs(self.n[keep], self.p[keep], self.cpu[keep], self.bw[keep], self.t[keep])

    def unloaded(self) -> np.ndarray:
        """sv_regression's phase-1 runs: CPU and bandwidth within 10% of the best seen."""
        return (self.cpu >= UNLOADED_SHARE * self.cpu.max()) & (self.bw >= UNLOADED_SHARE * self.bw.max())

    def training_runs(self) -> list[TrainingRun]:
        return [TrainingRun(float(n), int(p), float(c), float(b) * GBIT, float(t))
                for n, p, c, b, t in zip(self.n, self.p, self.cpu, self.bw, self.t)]


def loaded_workstations(workstations: str, load: str) -> int:
    """How many of the job's workstations the run's load left less than all of their CPU."""
    cpu_part = load.split(";")[0]
    capped = {ws for ws, _ in re.findall(r"(ws\d+):([\d.]+)%", cpu_part)}
    return len(capped & set(workstations.split()))


def read(train_csv: Path, heldout_csv: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Finished training runs and measured held-out runs (a reused row copies another's time)."""
    train = pd.read_csv(train_csv)
    train = train[train.status == "done"].rename(columns={"elapsed_s": "actual_s"}).reset_index(drop=True)
    held = pd.read_csv(heldout_csv)
    held = held[(held.status == "done") & (~held.reused.astype(bool))].reset_index(drop=True)
    for frame in (train, held):
        frame["loaded_ws"] = [loaded_workstations(w, ld) for w, ld in zip(frame.workstations, frame.load)]
    return train, held


# ---- batched Eq. 1 fits ---------------------------------------------------------------------------

def nnls2(c1: np.ndarray, c2: np.ndarray, t: np.ndarray, w: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Non-negative a, b minimising sum w (a c1/t + b c2/t - 1)^2 for each row of c1, c2 (k x n):
    sv_regression's fit, closed-form (the optimum lies on the open quadrant or one of its edges).
    Returns the coefficients (k x 2) and each row's mean absolute percentage error."""
    sw = np.ones_like(c1) if w is None else np.sqrt(np.broadcast_to(w, c1.shape))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        a1, a2 = c1 / t * sw, c2 / t * sw
    bad = ~(np.isfinite(a1).all(1) & np.isfinite(a2).all(1))
    a1, a2 = np.where(np.isfinite(a1), a1, 0.0), np.where(np.isfinite(a2), a2, 0.0)
    n1 = np.where((s := np.linalg.norm(a1, axis=1)) > 0, s, 1.0)
    n2 = np.where((s := np.linalg.norm(a2, axis=1)) > 0, s, 1.0)
    u1, u2 = a1 / n1[:, None], a2 / n2[:, None]  # unit columns: the normal equations stay well scaled
    s11, s22, s12 = (u1 * u1).sum(1), (u2 * u2).sum(1), (u1 * u2).sum(1)
    b1, b2 = (u1 * sw).sum(1), (u2 * sw).sum(1)
    det = s11 * s22 - s12 ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        x1, x2 = (s22 * b1 - s12 * b2) / det, (s11 * b2 - s12 * b1) / det
        inner = (det > 1e-12) & (x1 >= 0) & (x2 >= 0)
        edge1, edge2 = np.maximum(b1 / s11, 0.0), np.maximum(b2 / s22, 0.0)
    zero = np.zeros_like(b1)
    best, z1, z2 = np.full_like(b1, np.inf), zero.copy(), zero.copy()
    for y1, y2, ok in ((np.where(inner, x1, 0), np.where(inner, x2, 0), inner),
                       (edge1, zero, np.ones_like(inner)), (zero, edge2, np.ones_like(inner))):
        r = (sw ** 2).sum(1) - 2 * (b1 * y1 + b2 * y2) + s11 * y1 ** 2 + s22 * y2 ** 2 + 2 * s12 * y1 * y2
        better = ok & (r < best - 1e-12)
        best, z1, z2 = np.where(better, r, best), np.where(better, y1, z1), np.where(better, y2, z2)
    coef = np.column_stack([z1 / n1, z2 / n2])
    return coef, _mape(coef, c1, c2, t, bad)


def lad2(c1: np.ndarray, c2: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """As nnls2, but the coefficients minimise the mean absolute percentage error itself, the
    paper's criterion (least squares on relative error only approximates it)."""
    coef, mape = nnls2(c1, c2, t)
    for _ in range(LAD_STEPS):
        with np.errstate(invalid="ignore", over="ignore"):
            r = np.abs(c1 * coef[:, :1] + c2 * coef[:, 1:] - t) / t
        coef, _ = nnls2(c1, c2, t, 1.0 / np.maximum(np.nan_to_num(r, nan=1.0), 1e-4))
    return coef, _mape(coef, c1, c2, t, ~np.isfinite(mape))


def _mape(coef: np.ndarray, c1: np.ndarray, c2: np.ndarray, t: np.ndarray, bad: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", over="ignore"):
        mape = np.mean(np.abs(c1 * coef[:, :1] + c2 * coef[:, 1:] - t) / t, axis=1)
    return np.where(bad | ~np.isfinite(mape), np.inf, mape)


def loo_mape(c1: np.ndarray, c2: np.ndarray, t: np.ndarray, solve: Solver) -> np.ndarray:
    """Each row's leave-one-out mean absolute percentage error: a choice judged on runs it was
    not fitted on, not on its own fit."""
    total = np.zeros(len(c1))
    for i in range(t.size):
        rest = np.arange(t.size) != i
        coef, _ = solve(c1[:, rest], c2[:, rest], t[rest])
        with np.errstate(invalid="ignore", over="ignore"):
            total += np.nan_to_num(np.abs(coef[:, 0] * c1[:, i] + coef[:, 1] * c2[:, i] - t[i]) / t[i], nan=np.inf)
    return total / t.size


# ---- variants -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Variant:
    """One way to fit Eq. 1; `base` is sv_regression.fit's."""

    name: str
    what: str
    joint: bool = False  # one phase: every choice of all six functions on all runs
    phase1_loo: bool = False  # phase 1 ranks choices by leave-one-out error, not by their own fit
    refit: bool = True  # phase 2 refits the coefficients (False: keeps phase 1's)
    keep: int = KEEP
    lad: bool = False
    load: dict[str, Fn] = field(default_factory=lambda: dict(LOAD))
    procs: dict[str, Fn] = field(default_factory=lambda: dict(PROCESSORS))

    @property
    def solve(self) -> Solver:
        return lad2 if self.lad else nnls2


VARIANTS: tuple[Variant, ...] = (
    Variant("base", "sv_regression.fit: phase 1 on unloaded runs, 12 kept, phase 2 refits"),
    Variant("phase1-loo", "phase 1 ranks its choices by leave-one-out error", phase1_loo=True),
    Variant("no-refit", "phase 2 picks f_cpu, f_bw but keeps phase 1's coefficients", refit=False),
    Variant("keep-1", "only phase 1's best choice goes on", keep=1),
    Variant("keep-48", "phase 1's best 48 choices go on", keep=48),
    Variant("joint", "one phase: all 7^4 x 4^2 choices on all runs", joint=True),
    Variant("load+", "f_cpu, f_bw may also be x^1.5, x^3", load={**LOAD, **EXTRA_LOAD}),
    Variant("procs+", "f_Pcomp, f_Pcomm may also be P log P", procs={**PROCESSORS, **EXTRA_PROCS}),
    Variant("mape-fit", "coefficients minimise MAPE (IRLS), not least squares", lad=True),
    Variant("joint+mape-fit", "joint, with coefficients minimising MAPE", joint=True, lad=True),
)


@dataclass(frozen=True)
class Fitted:
    """Eq. 1 with its six functions (f_comp, f_comm, f_Pcomp, f_Pcomm, f_cpu, f_bw) and a, b."""

    names: tuple[str, str, str, str, str, str]
    coef: tuple[float, float]
    variant: Variant
    mape: float

    def terms(self, r: Runs) -> tuple[np.ndarray, np.ndarray]:
        c1, c2 = columns(self.names, self.variant, r)
        return self.coef[0] * c1, self.coef[1] * c2

    def predict(self, r: Runs) -> np.ndarray:
        comp, comm = self.terms(r)
        return comp + comm

    def describe(self) -> str:
        fc, fm, pc, pm, fcpu, fbw = self.names
        return (f"{self.coef[0]:.4g}·{fc}/({shown(fcpu, 'cpu')}·{pc}) + "
                f"{self.coef[1]:.4g}·{fm}/({shown(fbw, 'bw')}·{pm})")


def columns(names: Sequence[str], v: Variant, r: Runs) -> tuple[np.ndarray, np.ndarray]:
    fc, fm, pc, pm, fcpu, fbw = names
    return (PROBLEM_SIZE[fc](r.n) / (v.procs[pc](r.p) * v.load[fcpu](r.cpu)),
            PROBLEM_SIZE[fm](r.n) / (v.procs[pm](r.p) * v.load[fbw](r.bw)))


def fit_variant(r: Runs, v: Variant) -> Fitted:
    """Eq. 1 fitted to `r` the variant's way; ties go to the earlier candidates, as in sv_regression."""
    if r.unloaded().sum() < MIN_UNLOADED_RUNS:
        raise ValueError(f"{int(r.unloaded().sum())} unloaded runs; phase 1 needs {MIN_UNLOADED_RUNS}")
    return _fit_joint(r, v) if v.joint else _fit_phases(r, v)


def _fit_joint(r: Runs, v: Variant) -> Fitted:
    halves = list(itertools.product(PROBLEM_SIZE, v.procs, v.load))  # (f(N), f(P), f(load)) of one term
    comp = np.array([PROBLEM_SIZE[a](r.n) / (v.procs[b](r.p) * v.load[c](r.cpu)) for a, b, c in halves])
    comm = np.array([PROBLEM_SIZE[a](r.n) / (v.procs[b](r.p) * v.load[c](r.bw)) for a, b, c in halves])
    i1, i2 = (ix.ravel() for ix in np.meshgrid(np.arange(len(halves)), np.arange(len(halves)), indexing="ij"))
    coef, mape = v.solve(comp[i1], comm[i2], r.t)
    best = int(np.argsort(np.round(mape / TIE), kind="stable")[0])
    (fc, pc, fcpu), (fm, pm, fbw) = halves[i1[best]], halves[i2[best]]
    return Fitted((fc, fm, pc, pm, fcpu, fbw), (float(coef[best, 0]), float(coef[best, 1])), v, float(mape[best]))


def _fit_phases(r: Runs, v: Variant) -> Fitted:
    u = r.take(r.unloaded())
    choices = list(itertools.product(PROBLEM_SIZE, PROBLEM_SIZE, v.procs, v.procs))
    c1 = np.array([PROBLEM_SIZE[fc](u.n) / v.procs[pc](u.p) for fc, _, pc, _ in choices])
    c2 = np.array([PROBLEM_SIZE[fm](u.n) / v.procs[pm](u.p) for _, fm, _, pm in choices])
    coef1, mape1 = v.solve(c1, c2, u.t)
    score = loo_mape(c1, c2, u.t, v.solve) if v.phase1_loo else mape1
    best: Fitted | None = None
    for j in np.argsort(np.round(score / TIE), kind="stable")[:v.keep]:
        for fcpu, fbw in itertools.product(v.load, v.load):
            names = (*choices[j], fcpu, fbw)
            a1, a2 = columns(names, v, r)
            if v.refit:
                coef, mape = v.solve(a1[None], a2[None], r.t)
                coef, m = coef[0], float(mape[0])
            else:
                coef = coef1[j]
                m = float(np.mean(np.abs(coef[0] * a1 + coef[1] * a2 - r.t) / r.t))
            if best is None or m < best.mape - TIE:
                best = Fitted(names, (float(coef[0]), float(coef[1])), v, m)
    assert best is not None
    return best


def loo_errors(r: Runs, v: Variant) -> np.ndarray:
    """Signed relative error on each training run of the variant fitted on all the others."""
    out = np.empty(r.t.size)
    for i in range(r.t.size):
        model = fit_variant(r.take(np.arange(r.t.size) != i), v)
        out[i] = (model.predict(r.take(np.array([i])))[0] - r.t[i]) / r.t[i]
    return out


def check_base(r: Runs, model: SvModel) -> None:
    """The batched search must pick what sv_regression.fit picks, or nothing below means much."""
    mine = fit_variant(r, VARIANTS[0])
    theirs = (model.f_comp, model.f_comm, model.f_pcomp, model.f_pcomm, model.f_cpu, model.f_bw)
    if mine.names != theirs or not np.allclose(mine.coef, (model.a_comp_s, model.a_comm_s), rtol=1e-4):
        sys.exit(f"batched fit disagrees with sv_regression.fit: {mine.names} {mine.coef} against {theirs}")


@dataclass(frozen=True)
class Scored:
    variant: Variant
    loo: np.ndarray  # signed LOO errors on the training runs
    full: Fitted  # fitted on every training run


def choose(scored: Sequence[Scored]) -> Scored:
    """The rule, fixed before any held-out error is looked at: the least leave-one-out MAPE,
    unless it beats `base` by less than one standard error of the paired difference (then base)."""
    base = scored[0]
    best = min(scored, key=lambda s: np.abs(s.loo).mean())
    diff = np.abs(base.loo) - np.abs(best.loo)
    se = diff.std(ddof=1) / np.sqrt(diff.size) if diff.size > 1 else np.inf
    return best if diff.mean() > se else base


# ---- tables ---------------------------------------------------------------------------------------

def pct(x: float) -> str:
    return f"{100 * x:+.1f}%" if np.isfinite(x) else "-"


def by(frame: pd.DataFrame, column: str, bins: Sequence[float] | None, title: str) -> None:
    """Signed and absolute error of frame.err grouped by a column (binned if bins)."""
    key = pd.cut(frame[column], bins) if bins is not None else frame[column]
    g = frame.groupby(key, observed=True).err
    table(title, [column, "runs", "signed", "|error|"],
          [[str(k), str(len(e)), pct(e.mean()), f"{100 * e.abs().mean():.1f}%"] for k, e in g])


def residual_tables(frame: pd.DataFrame, label: str) -> None:
    frame = frame.assign(bw_mbit=frame.min_avail_bw_bit_s / 1e6, cpu_loaded=frame.loaded_ws > 0)
    for column, bins in (("procs", [0, 1, 4, 8, 12, 14, 16]), ("problem_size", None),
                         ("min_avail_cpu", [0, 0.2, 0.4, 0.6, 0.99, 1.0]), ("bw_mbit", [0, 10, 20, 40, 80, 100]),
                         ("actual_s", [0, 4, 8, 12, 20, 100]), ("cpu_loaded", None),
                         ("loaded_ws", [-1, 0, 1, 3, 7, 12, 16]), ("comm_share", [0, 0.02, 0.05, 0.1, 0.2, 1])):
        by(frame, column, bins, f"{label}: signed error (predicted - actual) / actual by {column}")


def matched(frame: pd.DataFrame, label: str) -> None:
    """CPU-loaded runs at matched minAvgAvailCPU: one loaded workstation in the job against several.
    Eq. 1 sees both as the same minimum; a gap between the columns is what it cannot see."""
    loaded = frame[frame.loaded_ws > 0]
    cpu_band = pd.cut(loaded.min_avail_cpu, [0, 0.3, 0.65, 1.0])
    ws_band = pd.cut(loaded.loaded_ws, [0, 1, 5, 16], labels=["1", "2-5", "6-16"])
    rows = []
    for band, g in loaded.groupby(cpu_band, observed=True):
        cells = [g[ws_band.loc[g.index] == w].err for w in ("1", "2-5", "6-16")]
        rows.append([str(band)] + [f"{pct(e.mean())} ({len(e)})" if len(e) else "-" for e in cells])
    table(f"{label}: signed error of CPU-loaded runs (runs) by minAvgAvailCPU and loaded workstations in the job",
          ["minAvgAvailCPU", "1 loaded", "2-5 loaded", "6-16 loaded"], rows)


def best_scale(pred: np.ndarray, actual: np.ndarray) -> float:
    """The one factor on the predictions with the least mean absolute percentage error."""
    grid = np.exp(np.linspace(-1.0, 1.0, 2001))
    mape = (np.abs(np.outer(grid, pred) - actual) / actual).mean(axis=1)
    return float(grid[np.argmin(mape)])


def bias_and_scatter(frame: pd.DataFrame, label: str) -> None:
    """How much of the error a bias is: the error left after the best single factor on all
    predictions, and after the best factor per group (an oracle that reads the runs it scores:
    it splits the error, it is not a model)."""
    rows = [["as fitted", f"{100 * frame.err.abs().mean():.1f}%"]]
    groups = {"one factor for all runs": pd.Series(0, index=frame.index),
              "one per loaded-workstation band (0, 1, 2-5, 6-16)": pd.cut(frame.loaded_ws, [-1, 0, 1, 5, 16]),
              "one per minAvgAvailCPU band": pd.cut(frame.min_avail_cpu, [0, 0.2, 0.4, 0.6, 0.99, 1.0])}
    for name, key in groups.items():
        errs = []
        for _, g in frame.groupby(key, observed=True):
            k = best_scale(g.predicted_s.to_numpy(), g.actual_s.to_numpy())
            errs.append(np.abs(k * g.predicted_s - g.actual_s) / g.actual_s)
        rows.append([name, f"{100 * pd.concat(errs).mean():.1f}%"])
    table(f"{label}: mean absolute error left after rescaling (oracle split of bias and scatter)",
          ["predictions", "mean |error|"], rows)


def coverage(train: pd.DataFrame, held: pd.DataFrame) -> None:
    """Training runs against held-out runs per (processors, minAvgAvailCPU) cell: an empty training
    cell under a full held-out one is an extrapolation."""
    def cells(f: pd.DataFrame) -> pd.Series:
        return f.groupby([pd.cut(f.procs, [0, 2, 8, 12, 16]), pd.cut(f.min_avail_cpu, [0, 0.2, 0.4, 0.99, 1.0])],
                         observed=False).size()
    tr, ho = cells(train), cells(held)
    p_bands = tr.index.levels[0]
    c_bands = tr.index.levels[1]
    table("runs per cell, training / held-out (rows: processors, columns: minAvgAvailCPU)",
          ["P"] + [str(c) for c in c_bands],
          [[str(p)] + [f"{tr[(p, c)]} / {ho[(p, c)]}" for c in c_bands] for p in p_bands])
    for name, f in (("training", train), ("held-out", held)):
        console.print(f"{name}: P {f.procs.min()}-{f.procs.max()}, N {f.problem_size.min()}-{f.problem_size.max()}, "
                      f"cpu {f.min_avail_cpu.min():.3f}-{f.min_avail_cpu.max():.3f}, bw "
                      f"{f.min_avail_bw_bit_s.min() / 1e6:.1f}-{f.min_avail_bw_bit_s.max() / 1e6:.1f} Mbit/s, "
                      f"loaded workstations in the job median {f[f.loaded_ws > 0].loaded_ws.median():.0f}, "
                      f"time median {f.actual_s.median():.1f} s")


def size_scaling(held: pd.DataFrame, model: SvModel) -> None:
    """Unloaded held-out runs at one P and two sizes: the exponent of N the times show against the
    model's, where the computation term is nearly all of the time (f_comp's own test)."""
    free = held[(held.loaded_ws == 0)]
    for p, g in free.groupby("procs"):
        sizes = g.groupby("problem_size").actual_s.median()
        if len(sizes) < 2:
            continue
        (n0, t0), (n1, t1) = list(sizes.items())[0], list(sizes.items())[-1]
        comp, comm = model.terms_s(np.array([n0, n1]), p, 1.0, g.min_avail_bw_bit_s.median())
        model_t = comp + comm
        console.print(f"unloaded held-out runs on P={p}: median {t0:.2f} s at N={n0}, {t1:.2f} s at N={n1}: "
                      f"time ~ N^{np.log(t1 / t0) / np.log(n1 / n0):.2f}; the model's ~ "
                      f"N^{np.log(model_t[1] / model_t[0]) / np.log(n1 / n0):.2f}, computation "
                      f"{100 * comp.sum() / model_t.sum():.0f}% of it ({len(g)} runs)")


def variant_table(scored: Sequence[Scored]) -> None:
    base = np.abs(scored[0].loo)
    rows = []
    for s in scored:
        diff = base - np.abs(s.loo)
        se = diff.std(ddof=1) / np.sqrt(diff.size)
        rows.append([s.variant.name, s.variant.what, f"{100 * np.abs(s.loo).mean():.1f}%", pct(s.loo.mean()),
                     f"{100 * diff.mean():+.1f} ± {100 * se:.1f}", s.full.describe(), f"{100 * s.full.mape:.1f}%"])
    table("leave-one-out on the training runs (held-out runs not used)",
          ["variant", "what changes", "LOO MAPE", "LOO signed", "better than base by (± SE)",
           "fitted on all training runs", "own fit"], rows)


def floors(held: pd.DataFrame, noise_csv: Path | None) -> None:
    """The least error any model could reach: each case's median as its prediction."""
    key = held.experiment.astype(str) + "|" + held.problem_size.astype(str) + "|" + held.workstations
    counts = key.value_counts()
    repeated = held[key.isin(counts[counts > 1].index)]
    if len(repeated):
        med = repeated.groupby(key).actual_s.transform("median")
        console.print(f"case-median floor over the {len(repeated)} held-out runs in repeated cases: "
                      f"{100 * float((repeated.actual_s / med - 1).abs().mean()):.1f}%")
    else:
        console.print(f"no held-out case (experiment, N, workstations) was measured twice ({len(held)} runs, "
                      f"{len(counts)} cases): a case-median floor cannot be taken from these runs")
    if noise_csv is None:
        return
    runs = pd.read_csv(noise_csv)
    runs = runs[runs.status == "done"]
    dev = (runs.compute_s / runs.groupby(["load", "procs"]).compute_s.transform("median") - 1).abs()
    kinds = dev.groupby(runs.load).mean()
    share = float((held.loaded_ws > 0).mean())
    mixed = share * kinds.get("fixed", np.nan) + (1 - share) * kinds.get("none", np.nan)
    console.print(f"identical runs ({noise_csv}): mean |t - case median| / median "
                  + ", ".join(f"{k} {100 * v:.1f}%" for k, v in kinds.items())
                  + f", all {100 * float(dev.mean()):.1f}%; weighted to the held-out runs' mix "
                  f"({100 * share:.0f}% CPU-loaded): {100 * mixed:.1f}%")


# ---- outputs --------------------------------------------------------------------------------------

def plot(held: pd.DataFrame, train: pd.DataFrame, path: Path, title: str) -> None:
    """Signed error against minAvgAvailCPU, P and run length, coloured by loaded workstations."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6), sharey=True)
    for ax, column, label in zip(axes, ("min_avail_cpu", "procs", "actual_s"),
                                 ("minAvgAvailCPU", "processors P", "measured time (s)")):
        ax.scatter(train[column], 100 * train.err, marker="x", color="0.6", s=18, label="training (own fit)")
        sc = ax.scatter(held[column], 100 * held.err, c=held.loaded_ws, cmap="viridis", vmin=0, vmax=16, s=22,
                        label="held-out")
        ax.axhline(0, color="0.3", lw=0.8)
        ax.axhspan(-10, 10, color="0.92", zorder=0)
        ax.set_xlabel(label)
    axes[2].set_xscale("log")
    axes[2].xaxis.set_minor_formatter(NullFormatter())
    axes[2].set_xticks([2, 4, 8, 16, 32, 64], ["2", "4", "8", "16", "32", "64"])
    axes[0].set_ylabel("(predicted - actual) / actual, %")
    axes[0].legend(fontsize=7, loc="lower right")
    fig.colorbar(sc, ax=axes, label="loaded workstations in the job", shrink=0.9)
    fig.suptitle(title, fontsize=10)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)


def per_run(train: pd.DataFrame, held: pd.DataFrame) -> pd.DataFrame:
    cols = ["set", "experiment", "algorithm", "budget_s", "problem_size", "procs", "min_avail_cpu",
            "min_avail_bw_bit_s", "loaded_ws", "actual_s", "comp_s", "comm_s", "predicted_s", "err",
            "loo_predicted_s", "chosen_predicted_s"]
    both = pd.concat([train.assign(set="training"), held.assign(set="held-out")], ignore_index=True)
    return both.reindex(columns=cols)


# ---- main -----------------------------------------------------------------------------------------

def with_predictions(frame: pd.DataFrame, model: SvModel) -> pd.DataFrame:
    comp, comm = model.terms_s(frame.problem_size.to_numpy(float), frame.procs.to_numpy(float),
                               frame.min_avail_cpu.to_numpy(float), frame.min_avail_bw_bit_s.to_numpy(float))
    pred = comp + comm
    return frame.assign(comp_s=comp, comm_s=comm, predicted_s=pred, comm_share=comm / pred,
                        err=(pred - frame.actual_s) / frame.actual_s)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("train", type=Path, help="`nowlab select train`'s CSV")
    ap.add_argument("heldout", type=Path, help="`nowlab select live`'s runs.csv")
    ap.add_argument("--application", default="cg")
    ap.add_argument("--noise-floor", type=Path, default=None, help="sv_noise_floor.py's runs.csv")
    ap.add_argument("--variants", default=",".join(v.name for v in VARIANTS),
                    help="comma-separated; base is always scored")
    ap.add_argument("--csv", type=Path, default=None, help="every run's residual, one row each")
    ap.add_argument("--png", type=Path, default=None, help="the residuals against cpu, P and length")
    a = ap.parse_args()
    console.width = max(console.width, 180)
    train, held = read(a.train, a.heldout)
    tr_runs, ho_runs = Runs.of(train, "actual_s"), Runs.of(held, "actual_s")
    model = fit(tr_runs.training_runs(), a.application)
    check_base(tr_runs, model)
    train, held = with_predictions(train, model), with_predictions(held, model)
    console.print(f"{len(train)} training runs, {len(held)} held-out runs; {model.describe()}", markup=False)
    console.print(f"held-out: mean absolute error {100 * held.err.abs().mean():.1f}%, signed {pct(held.err.mean())}, "
                  f"within 10%: {100 * (held.err.abs() <= 0.1).mean():.0f}% of runs")

    residual_tables(held, "held-out")
    bias_and_scatter(held, "held-out")
    matched(held, "held-out")
    matched(train, "training (own fit)")
    size_scaling(held, model)
    coverage(train, held)

    wanted = {s.strip() for s in a.variants.split(",")} | {"base"}
    scored = [Scored(v, loo_errors(tr_runs, v), fit_variant(tr_runs, v)) for v in VARIANTS if v.name in wanted]
    variant_table(scored)
    chosen = choose(scored)
    chosen_pred = chosen.full.predict(ho_runs)
    chosen_err = (chosen_pred - held.actual_s.to_numpy()) / held.actual_s.to_numpy()
    console.print(f"chosen by the rule (least LOO MAPE, and better than base by more than one SE): "
                  f"{chosen.variant.name}: {chosen.full.describe()}")
    console.print(f"held-out, computed once for the chosen variant: mean absolute error "
                  f"{100 * np.abs(chosen_err).mean():.1f}%, signed {pct(chosen_err.mean())} (base: "
                  f"{100 * held.err.abs().mean():.1f}%)")
    floors(held, a.noise_floor)

    train = train.assign(loo_predicted_s=train.actual_s * (1 + scored[0].loo))
    held = held.assign(chosen_predicted_s=chosen_pred)
    if a.csv:
        per_run(train, held).to_csv(a.csv, index=False, float_format="%.6g")
    if a.png:
        plot(held, train, a.png, f"{model.describe().split(' [')[0]}: residuals; held-out mean |error| "
                                 f"{100 * held.err.abs().mean():.1f}%")


if __name__ == "__main__":
    main()
