"""What makes two identical jobs differ, measured: a noise model estimated from stored live runs.

The replays that give a cell its 90% band need to know how far a live job strays from its
class model. Profiling alone says too little: a few dedicated runs per size gave `run_sigma`
from 0.010 to 0.145 for one class, and the live spread of unresized jobs was larger in 17 of
26 class sizes. The cleanest live evidence is the jobs that ran on one set from start to end
(`experiments.unresized`): each gives log(measured / profiled execution), on the basis the
report compares on (normalised by the meter where the job was metered, raw otherwise). Those
logs are split, by a one-way random-effects analysis of variance with cells as groups, into

* `offset`: their mean, how far live jobs run from the profile on average (the profile is
  taken once, at the start, on an idle cluster);
* `sigma_cell`: the spread of a cell's common factor about that mean, what all jobs of one
  cell share (the host's speed over the cell's minutes, the governor's hold, the co-located
  load) -- the source the old bands left out, and the one a cell mean cannot average away;
* `sigma_job`: the spread of one job about its cell's factor (the class's own run-to-run
  spread, launch and resize timing, co-located jobs on one core).

Each comes with its uncertainty (degrees of freedom; the offset's standard error), and a
replay draws the parameters themselves from it before it draws the factors (`draw`), so a
model estimated from few runs gives wider bands. Pooled over classes and partition sizes:
no class size has the 20+ unresized jobs in a few cells that a per-size split of the cell
and job terms needs (most have under 10 per run).

A run's evidence is kept as sufficient statistics (`RunNoise`), so a model for one run is
estimated from the others (`for_run`): out of sample, by construction, as the coverage
benchmark and the replay both need. Which runs a model pools is stated (`NoiseModel.source`):
the runs of the same config where there are two or more, else the same paper's, else all.
"""
from __future__ import annotations

import json
import math
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

#: Where the committed results and their noise evidence live.
RESULTS = Path(__file__).resolve().parent / "results"
LIBRARY = RESULTS / "noise" / "runs.json"
#: Fewest runs (besides the one predicted) a config's own pool needs before it is used alone.
MIN_FAMILY_RUNS = 2
#: Fewest unresized jobs a pool needs; below it the next wider pool is used.
MIN_JOBS = 30


@dataclass(frozen=True)
class RunNoise:
    """One stored run's unresized jobs, as sufficient statistics: per cell, how many and the
    mean of their log ratios, and the within-cell sum of squares."""

    run: str  # the store's path relative to experiments/results (its identity)
    family: str  # the config's name: runs of one config share a model first
    paper: str  # the results folder the run sits in (padhye-dowdy, demo, ...)
    cell_n: tuple[int, ...]
    cell_mean: tuple[float, ...]
    within_ss: float
    created_at: float = 0.0  # the store's creation time: a copy of a committed store is the same run

    @property
    def jobs(self) -> int:
        return sum(self.cell_n)

    @property
    def within_dof(self) -> int:
        return sum(n - 1 for n in self.cell_n)

    @classmethod
    def of(cls, frame: pd.DataFrame, run: str, family: str, paper: str, created_at: float = 0.0) -> RunNoise:
        """From `experiments.unresized.unresized`'s frame: log of ratio_norm where metered, else ratio."""
        basis = frame["ratio_norm"].astype(float).fillna(frame["ratio"].astype(float)) if len(frame) else pd.Series(dtype=float)
        x = np.log(basis.where(basis > 0))
        g = pd.DataFrame({"cell": frame["cell_id"] if len(frame) else [], "x": x}).dropna()
        ns, means, ss = [], [], 0.0
        for _, v in g.groupby("cell", sort=True).x:
            ns.append(len(v))
            means.append(float(v.mean()))
            ss += float(((v - v.mean()) ** 2).sum())
        return cls(run, family, paper, tuple(ns), tuple(means), ss, created_at)


class RunDraw(NamedTuple):
    """One replay's draw of what a whole run shares: the shift of every job's log time
    (offset plus this run's own factor) and the spreads to draw cells and jobs with."""

    shift: float
    sigma_cell: float
    sigma_job: float


@dataclass(frozen=True)
class NoiseModel:
    """Log-scale noise of a live job's execution against its replay (see the module doc)."""

    offset: float
    offset_se: float
    sigma_run: float
    run_dof: int
    sigma_cell: float
    cell_dof: int
    sigma_job: float
    job_dof: int
    runs: int
    cells: int
    jobs: int
    source: str  # which runs it pools, in words

    def draws(self, replicas: int, seed: int) -> list[RunDraw]:
        """One RunDraw per replay, for every cell of a run alike (a cell's figure and its
        replications share the run's factor, so their mean cannot average it away). Each
        draws the parameters from their own uncertainty first: the offset from its normal,
        each variance from its scaled inverse chi-square."""
        rng = random.Random(seed)
        out = []
        for _ in range(replicas):
            offset = rng.gauss(self.offset, self.offset_se)
            run = rng.gauss(0.0, _inverse_chi2(self.sigma_run, self.run_dof, rng))
            out.append(RunDraw(offset + run, _inverse_chi2(self.sigma_cell, self.cell_dof, rng),
                               _inverse_chi2(self.sigma_job, self.job_dof, rng)))
        return out

    def text(self) -> str:
        return (f"offset {self.offset:+.3f} ± {self.offset_se:.3f}, run sd {self.sigma_run:.3f} ({self.run_dof} dof), "
                f"cell sd {self.sigma_cell:.3f} ({self.cell_dof} dof), job sd {self.sigma_job:.3f} "
                f"({self.job_dof} dof); {self.source}")


def _inverse_chi2(sigma: float, dof: int, rng: random.Random) -> float:
    if sigma <= 0 or dof < 1:
        return max(sigma, 0.0)
    return sigma * math.sqrt(dof / rng.gammavariate(dof / 2.0, 2.0))


def estimate(runs: Sequence[RunNoise], source: str = "") -> NoiseModel:
    """The pooled model of these runs: a nested (runs > cells > jobs) random-effects analysis
    of variance by the method of moments, for unbalanced groups.

    sigma_job^2: the pooled within-cell variance. sigma_cell^2: the pooled variance of cell
    means about their run's mean, less what job noise puts there (sigma_job^2 times the mean
    of 1/n). sigma_run^2: the variance of the runs' means (each the mean of its cells) less
    what cells and jobs put there. Each floored at 0, each with its degrees of freedom. The
    offset is the mean of the runs' means, its standard error from their spread (from the
    cells' when there is one run)."""
    used = [r for r in runs if r.cell_n]
    if not used:
        raise ValueError("noise: no unresized job in the runs given")
    ns = np.array([n for r in used for n in r.cell_n], dtype=float)
    ss = sum(r.within_ss for r in used)
    job_dof = int(sum(r.within_dof for r in used))
    var_job = ss / job_dof if job_dof else 0.0
    inv_n = float(np.mean(1.0 / ns))
    between_ss = sum(float(((np.array(r.cell_mean) - np.mean(r.cell_mean)) ** 2).sum()) for r in used)
    cell_dof = int(sum(len(r.cell_n) - 1 for r in used))
    var_cell = max(0.0, (between_ss / cell_dof if cell_dof else 0.0) - var_job * inv_n)
    run_means = np.array([np.mean(r.cell_mean) for r in used])
    run_dof = len(used) - 1
    var_runs = float(np.var(run_means, ddof=1)) if run_dof else 0.0
    per_run = float(np.mean([1.0 / len(r.cell_n) for r in used]))
    var_run = max(0.0, var_runs - (var_cell + var_job * inv_n) * per_run)
    offset = float(np.mean(run_means))
    if run_dof:
        offset_se = math.sqrt(var_runs / len(used))
    else:
        offset_se = math.sqrt((var_cell + var_job * inv_n) / len(ns))
    return NoiseModel(offset, offset_se, math.sqrt(var_run), run_dof, math.sqrt(var_cell), cell_dof,
                      math.sqrt(var_job), job_dof, len(used), int(ns.size), int(ns.sum()), source or f"{len(used)} runs")


def for_run(library: Sequence[RunNoise], run: str, family: str, paper: str,
            created_at: float = 0.0) -> NoiseModel | None:
    """The model for one run from every other run of the library: the same config's runs where
    there are MIN_FAMILY_RUNS with MIN_JOBS jobs, else the same paper's, else all. None when
    no other run has an unresized job. A library run with the same path, or (when given) the
    same creation time, is this run (a copy of a committed store), and is left out."""
    others = [r for r in library if r.run != run and r.jobs > 0 and not (created_at and r.created_at == created_at)]
    for label, pool in ((f"config {family}", [r for r in others if r.family == family]),
                        (f"paper {paper}", [r for r in others if r.paper == paper]),
                        ("every committed run", others)):
        enough = len(pool) >= (MIN_FAMILY_RUNS if label.startswith("config") else 1)
        if enough and sum(r.jobs for r in pool) >= MIN_JOBS:
            jobs = sum(r.jobs for r in pool)
            return estimate(pool, f"pooled over classes and sizes from {label}: {len(pool)} other runs, {jobs} unresized jobs")
    return None


@dataclass
class Library:
    """Every committed run's evidence, as one JSON file (`experiments/results/noise/runs.json`)."""

    runs: list[RunNoise] = field(default_factory=list)

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps([asdict(r) for r in self.runs], indent=1, sort_keys=True) + "\n")

    @classmethod
    def load(cls, path: Path) -> Library:
        """The library at `path`; empty when there is none (a fresh checkout before any run)."""
        if not path.exists():
            return cls()
        try:
            rows = json.loads(path.read_text())
            return cls([RunNoise(r["run"], r["family"], r["paper"], tuple(int(n) for n in r["cell_n"]),
                                 tuple(float(m) for m in r["cell_mean"]), float(r["within_ss"]),
                                 float(r.get("created_at", 0.0))) for r in rows])
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"noise library {path}: not a list of runs ({exc})") from None


__all__ = ["Library", "NoiseModel", "RunDraw", "RunNoise", "estimate", "for_run"]
