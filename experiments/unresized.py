"""The jobs that ran on one set from start to end, against their class's profile.

A job that was never resized is the cleanest check a live run offers of the model a
prediction rests on: its execution should be the profile's T(p) plus its start-up pause
on p workstations (`predict.ClassModel`), whatever the policy did around it. Read over the
run's own clock, the ratio shows how far the profile's speed held: a profile is taken once,
at the start, and the host's speed drifts over the hour that follows (see
`../shared/probes/noise.py`). A cell's execution error that these jobs share is the
profile's; one they do not share is the schedule's.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from experiments.config import ExperimentConfig
from experiments.replay import class_models
from scheduler.jobs import Outcome

COLUMNS = ["cell_id", "policy", "rate", "job_id", "cls", "p", "measured_s", "predicted_s", "ratio", "ratio_norm"]


def unresized(jobs: pd.DataFrame, config: Mapping[str, Any], profiles: Mapping[str, dict]) -> pd.DataFrame:
    """One row per done job that kept the same number of workstations throughout and was never
    preempted: its execution measured and as its class model predicts it alone on that many.
    Empty when the config or a profile gives no class model (as the predictions need).
    Rows are in the run's order (cells run in id order). `ratio_norm`: the measured time
    brought to the profile's speed by the meter (NaN without one)."""
    if jobs.empty or not profiles:
        return pd.DataFrame(columns=COLUMNS)
    try:
        models = class_models(ExperimentConfig.model_validate(dict(config)), dict(profiles))
    except (ValueError, KeyError):  # a store whose config or profiles give no class model: nothing to check
        return pd.DataFrame(columns=COLUMNS)
    done = jobs[(jobs.status == Outcome.DONE) & (jobs.preemptions == 0)
                & (jobs.mean_procs.astype(float) == jobs.max_procs.astype(float)) & jobs.cls.isin(list(models))]
    if done.empty:
        return pd.DataFrame(columns=COLUMNS)
    rows = []
    for j in done.sort_values(["cell_id", "finish"]).itertuples(index=False):
        cm, p = models[j.cls], int(j.max_procs)
        predicted = cm.model(float(j.demand)).T(p) + cm.pause(p)
        measured = float(j.finish) - float(j.start)
        speed = float(j.delivered_speed) if j.delivered_speed is not None else np.nan
        rows.append({"cell_id": j.cell_id, "policy": j.policy, "rate": j.rate, "job_id": j.job_id, "cls": j.cls,
                     "p": p, "measured_s": measured,
                     "predicted_s": predicted, "ratio": measured / predicted,
                     "ratio_norm": measured * speed / predicted if speed > 0 else np.nan})
    return pd.DataFrame(rows, columns=COLUMNS)


def drift_text(frame: pd.DataFrame) -> str:
    """'1.08 (1.05 -> 1.10, n 122)': the median measured/predicted ratio of the unresized jobs,
    then over the first and the second half of them in the run's order; '' when fewer than 4."""
    if len(frame) < 4:
        return ""
    ratio = frame.ratio.astype(float).reset_index(drop=True)
    early, late = ratio[: len(ratio) // 2], ratio[len(ratio) // 2:]
    return f"{ratio.median():.2f} ({early.median():.2f} -> {late.median():.2f}, n {len(frame)})"


def by_size(frame: pd.DataFrame) -> pd.DataFrame:
    """Per class and partition size: how many such jobs, their median measured and profiled
    execution, and the median of their ratios (the report's table)."""
    cols = ["class", "workstations", "jobs", "measured median (s)", "profiled (s)", "measured / profiled"]
    if frame.empty:
        return pd.DataFrame(columns=cols)
    rows = [{"class": cls, "workstations": int(p), "jobs": len(g),
             "measured median (s)": f"{g.measured_s.median():.2f}", "profiled (s)": f"{g.predicted_s.median():.2f}",
             "measured / profiled": f"{g.ratio.median():.2f}"}
            for (cls, p), g in frame.groupby(["cls", "p"], sort=True)]
    return pd.DataFrame(rows, columns=cols)


__all__ = ["COLUMNS", "by_size", "drift_text", "unresized"]
