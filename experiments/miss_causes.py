"""Why a cell misses its prediction target, computed from its jobs rather than written by hand.

A cell's figure can miss for four reasons, which call for different remedies:
- chance: the measured figure lies inside the model's own 90% band (`predict.ensemble`), so
  an exact model would miss as often; only more jobs help;
- host speed: brought to the profile's speed by the meter, the cell meets the target, so the
  host ran slower or faster than when it was profiled;
- schedule: the live policy gave jobs other partitions than the replay did. Policies such as
  RA decide on the queue's length at an arrival or a completion, so a job finishing a fraction
  of a second either side of an arrival sends the rest of the cell down another branch. Which
  side it falls is the job times': replayed with each job's measured time, the engine places
  98% of RA's jobs as the live run did (experiments/studies/padhye_dowdy/analyses/schedule_oracle.py);
- job time: the jobs took longer or shorter than their class model on the partitions they had.

Schedule and job time are split against the single replay (the profile's mean work,
`store.predictions_frame`): each job's replayed execution is repriced at its live partition with
the class model, x T(p_live)/T(p_replay), so that
  replay - measured = (replay - repriced: the schedule) + (repriced - measured: job time),
and over the measured figure the two parts add up to the single replay's error. A resized job is
priced at its mean partition (the model interpolated between whole sizes), an approximation.
For mean response the parts are seconds over the measured response: the waiting goes to the
schedule when any job was placed differently, else to job time (the jobs ahead ran slower).
The counted error is against the ensemble's mean, the split against the single replay; the
report shows both so a reader sees when they part.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from experiments.config import ExperimentConfig
from experiments.predict import ClassModel
from experiments.replay import class_models
from experiments.reporting.stats import in_band
from scheduler.jobs import Outcome

#: A live and a replayed partition further apart than this many workstations count as a
#: different placement (RA's are whole; a resized job's mean partition wanders a little).
PLACEMENT_TOLERANCE = 0.5

@dataclass(frozen=True)
class Miss:
    """One cell's miss of one target, with the figures its cause is read from."""

    policy: str
    rate: float
    statistic: str  # "response" (mean) or "median execution"
    error: float  # (predicted - measured) / measured, as the summary counts it
    target: float
    in_band: bool | None  # measured (speed-normalised where metered) inside the 90% band
    error_normalised: float  # the same error with times brought to the profile's speed (NaN: not metered)
    workstations_live: float  # mean partition of the cell's jobs, live
    workstations_replay: float  # and in the single replay
    placed_differently: int  # jobs whose live partition differs from the replay's
    jobs: int
    first_divergence: str  # "replication 2, job 3: 4 live, 8 replayed" or ""
    schedule_part: float  # the part of the single replay's error the live partitions explain
    job_time_part: float  # the rest: the jobs' own times on the partitions they had
    cause: str

    def row(self) -> dict[str, Any]:
        return asdict(self)


COLUMNS = list(Miss.__dataclass_fields__)


def misses(compared: pd.DataFrame, jobs: pd.DataFrame, predictions: pd.DataFrame,
           models: Mapping[str, ClassModel], targets: Mapping[str, float], warmup: int) -> pd.DataFrame:
    """One row per (cell, target) that misses, with its cause; `compared` is the report's
    per-cell comparison (`report_stats.with_bands`), jobs and predictions the store's frames,
    models the class models the replay used (`models_for`); a class without one is not repriced."""
    if compared.empty or jobs.empty or predictions.empty:
        return pd.DataFrame(columns=COLUMNS)
    both = paired(jobs, predictions, models, warmup)
    stats = (("response", "response_rel", "response"), ("median_execution", "execution_rel", "median execution"))
    inside = {stat: in_band(compared, stat) for stat, _, _ in stats}
    rows = []
    for i, c in enumerate(compared.itertuples(index=False)):
        cell = both[(both.policy == c.policy) & np.isclose(both.rate.astype(float), float(c.rate))]
        for stat, key, name in stats:
            err, target = float(getattr(c, f"err_{stat}")), float(targets[key])
            if not math.isfinite(err) or abs(err) <= target:
                continue
            rows.append(_miss(c, cell, stat, name, err, target, inside[stat][i]).row())
    return pd.DataFrame(rows, columns=COLUMNS)


def counts_text(frame: pd.DataFrame) -> str:
    """'schedule 3, job time 2, chance 1': how many misses each cause explains, most first."""
    if frame.empty:
        return ""
    counts = frame.cause.value_counts()
    return ", ".join(f"{cause} {int(counts[cause])}" for cause in sorted(counts.index, key=lambda k: (-counts[k], k)))


def table(frame: pd.DataFrame) -> pd.DataFrame:
    """The misses formatted for a report."""
    def pct(x: float) -> str:
        return f"{x:+.1%}" if math.isfinite(x) else "n/a"

    return pd.DataFrame({
        "policy": frame.policy, "rate": [f"{float(r):g}" for r in frame.rate], "target": frame.statistic,
        "error": [pct(x) for x in frame.error],
        "in band": ["n/a" if b is None or (isinstance(b, float) and math.isnan(b)) else ("yes" if b else "no")
                    for b in frame.in_band],
        "error, speed-normalised": [pct(x) for x in frame.error_normalised],
        "workstations live / replay": [f"{a:.2f} / {b:.2f}" for a, b in zip(frame.workstations_live,
                                                                           frame.workstations_replay)],
        "placed differently": [f"{a} of {b}" for a, b in zip(frame.placed_differently, frame.jobs)],
        "first divergence": frame.first_divergence,
        "schedule part": [pct(x) for x in frame.schedule_part],
        "job-time part": [pct(x) for x in frame.job_time_part],
        "cause": frame.cause})


def models_for(config: Mapping[str, Any], profiles: Mapping[str, dict]) -> dict[str, ClassModel]:
    """The class models the replay used (`replay.class_models`, profile checks included);
    empty when they give none (the predictions could not have been made either)."""
    if not profiles:
        return {}
    try:
        return class_models(ExperimentConfig.model_validate(dict(config)), dict(profiles))
    except (ValueError, KeyError):  # a store whose profiles give no class model: nothing is repriced
        return {}


def paired(jobs: pd.DataFrame, predictions: pd.DataFrame, models: Mapping[str, ClassModel],
           warmup: int) -> pd.DataFrame:
    """The jobs past warm-up done both live and in the replay, side by side (the replay's as
    *_p), in each cell's arrival order, with `repriced`: the replay's execution at the live
    partition."""
    live = jobs[(jobs.status == Outcome.DONE) & (jobs.job_id >= warmup)]
    rep = predictions[predictions.status == Outcome.DONE][["cell_id", "job_id", "start", "wait", "execution", "response",
                                                     "mean_procs", "max_procs"]]
    out = live.merge(rep, on=["cell_id", "job_id"], suffixes=("", "_p"))
    out = out.sort_values(["cell_id", "arrival"]).reset_index(drop=True)
    out["repriced"] = [_repriced(r, models) for r in out.itertuples(index=False)]
    return out


def time_at(model: ClassModel, demand: float, p: float) -> float:
    """The class model's execution on p workstations, linear between whole sizes."""
    sevcik = model.model(demand)
    lo, hi = max(1, math.floor(p)), max(1, math.ceil(p))
    t_lo, t_hi = sevcik.T(lo) + model.pause(lo), sevcik.T(hi) + model.pause(hi)
    return t_lo if hi == lo else t_lo + (t_hi - t_lo) * (p - lo) / (hi - lo)


def _repriced(job: Any, models: Mapping[str, ClassModel]) -> float:
    """The replay's execution of the job at its live partition (unchanged when placed alike
    or when its class has no model)."""
    replayed = float(job.execution_p)
    live, rep = float(job.mean_procs), float(job.mean_procs_p)
    model = models.get(job.cls)
    if model is None or abs(live - rep) <= PLACEMENT_TOLERANCE:
        return replayed
    return replayed * time_at(model, float(job.demand), live) / time_at(model, float(job.demand), rep)


def _per_replication(cell: pd.DataFrame, stat: str) -> pd.Series:
    """measured, replay, repriced and dwait (waiting, live less replayed) of the statistic, each
    the mean over the cell's replications of its per-replication figure (as the report's cells are)."""
    if stat == "median_execution":
        per = cell.groupby("cell_id").agg(measured=("execution", "median"), replay=("execution_p", "median"),
                                          repriced=("repriced", "median")).assign(dwait=0.0)
    else:
        per = (cell.assign(repriced_response=cell.wait_p + cell.repriced, dwait=cell.wait - cell.wait_p)
               .groupby("cell_id").agg(measured=("response", "mean"), replay=("response_p", "mean"),
                                       repriced=("repriced_response", "mean"), dwait=("dwait", "mean")))
    return per.mean()


def _miss(c: Any, cell: pd.DataFrame, stat: str, name: str, err: float, target: float,
          inside: bool | None) -> Miss:
    err_norm = float(getattr(c, f"err_{stat}_norm", np.nan))
    differ = (cell.mean_procs.astype(float) - cell.mean_procs_p.astype(float)).abs() > PLACEMENT_TOLERANCE
    first = ""
    if differ.any():
        j = cell[differ].iloc[0]
        replication = sorted(cell.cell_id.unique()).index(j.cell_id) + 1
        first = (f"replication {replication}, job {int(j.job_id)}: {float(j.mean_procs):.3g} live, "
                 f"{float(j.mean_procs_p):.3g} replayed")
    schedule, job_time = math.nan, math.nan
    if not cell.empty:
        f = _per_replication(cell, stat)
        meas, rep, repriced, dwait = (float(f[k]) for k in ("measured", "replay", "repriced", "dwait"))
        d_sched, d_time = repriced - rep, meas - repriced  # seconds; they add up to meas - rep
        if stat == "response":  # waiting follows the placement (module docstring)
            d_sched, d_time = (d_sched + dwait, d_time - dwait) if differ.any() else (d_sched, d_time)
        # in the error's own sign, (predicted - measured) / measured: the parts add up to the replay's error
        schedule, job_time = -d_sched / meas, -d_time / meas
    cause = _cause(inside, err_norm, target, schedule, job_time)
    return Miss(str(c.policy), float(c.rate), name, err, target, inside, err_norm,
                float(cell.mean_procs.mean()) if not cell.empty else math.nan,
                float(cell.mean_procs_p.mean()) if not cell.empty else math.nan,
                int(differ.sum()), len(cell), first, schedule, job_time, cause)


def _cause(in_band: bool | None, err_norm: float, target: float, schedule: float, job_time: float) -> str:
    """The first of chance, host speed, then the larger of schedule and job time, that holds."""
    if in_band:
        return "chance"
    if math.isfinite(err_norm) and abs(err_norm) <= target:
        return "host speed"
    if not (math.isfinite(schedule) and math.isfinite(job_time)):
        return "job time" if math.isfinite(job_time) else "schedule"
    return "schedule" if abs(schedule) >= abs(job_time) else "job time"


#: What the report's and the summary's tables of misses say about their columns.
LEGEND = ("Why each miss, computed (`experiments/miss_causes.py`). In band: the measured figure (speed-normalised "
          "where metered) lies inside the model's own 90% band. Workstations: the cell's mean partition live and "
          "in the single replay of the profile's mean work; placed differently: jobs whose partitions differ by "
          "more than half a workstation, the first of them named. Schedule part and job-time part: the single "
          "replay's error split in two, by repricing each replayed job at its live partition with the class "
          "model; they add up to that replay's error, which may differ from the counted error (against the "
          "ensemble's mean). Cause: chance when in band; else host speed when the speed-normalised error meets "
          "the target; else the larger part. A schedule that diverged because jobs ran slower still counts as "
          "schedule: the split says what moved the figure, not what set the branch.")

__all__ = ["COLUMNS", "LEGEND", "Miss", "PLACEMENT_TOLERANCE", "counts_text", "misses", "models_for",
           "paired", "table", "time_at"]
