"""The noise library from stored runs: each committed store's unresized jobs as `noise.RunNoise`.


Kept apart from `experiments.noise` (pure arithmetic) because reading a store's unresized
jobs needs the report's speed basis and the class models; the replay reads only the JSON
this writes (`noise.LIBRARY`), never the other stores themselves.
"""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from experiments import noise
from experiments.replay import run_identity
from experiments.report import on_speed_basis
from experiments.store import ResultsStore
from scheduler.jobs import Outcome


def residuals(jobs: pd.DataFrame, predictions: pd.DataFrame) -> pd.DataFrame:
    """Per job that ran on one set from start to end both live and in the cell's replay, on
    the same number of workstations: measured execution (brought to the assumed speed by the
    meter where metered, `ratio_norm`) over the replay's. The replay's figure, not the bare
    class model, so owners and workstation speeds are already in it: a job on an owned
    workstation is not counted as model noise (it made the demo's p = 8 synthetic jobs look
    70% slower than their class model)."""
    cols = ["cell_id", "job_id", "ratio", "ratio_norm"]
    if jobs.empty or predictions.empty:
        return pd.DataFrame(columns=cols)
    m = jobs.merge(predictions, on=["cell_id", "job_id"], suffixes=("", "_p"))
    procs = [m[c].astype(float) for c in ("mean_procs", "max_procs", "mean_procs_p", "max_procs_p")]
    keep = ((m.status == Outcome.DONE) & (m.status_p == Outcome.DONE) & (m.preemptions == 0) & (m.preemptions_p == 0)
            & (procs[0] == procs[1]) & (procs[2] == procs[3]) & (procs[1] == procs[3]) & (m.execution_p > 0))
    m = m[keep]
    speed = pd.to_numeric(m.delivered_speed, errors="coerce")
    ratio = m.execution.astype(float) / m.execution_p.astype(float)
    return pd.DataFrame({"cell_id": m.cell_id, "job_id": m.job_id, "ratio": ratio,
                         "ratio_norm": ratio * speed.where(speed > 0)}, columns=cols)


def run_noise(path: Path) -> noise.RunNoise:
    """One store's evidence (no cell when it has no prediction or no job unresized on both sides)."""
    with ResultsStore.open(path, readonly=True) as store:
        config, jobs, profiles, predictions = store.config, store.jobs_frame(), store.profiles(), store.predictions_frame()
        created_at = float(store.timeline()["created_at"] or 0.0)
    basis = (config.get("profile") or {}).get("speed_basis", "reference")
    return noise.RunNoise.of(residuals(on_speed_basis(jobs, profiles, basis), predictions), *run_identity(path, config),
                            created_at=created_at)


def committed_stores(root: Path = noise.RESULTS) -> list[Path]:
    """Every live store under experiments/results, in path order."""
    return sorted(root.rglob("*.sqlite"))


def build(paths: Iterable[Path]) -> noise.Library:
    return noise.Library([run_noise(p) for p in paths])


__all__ = ["build", "committed_stores", "run_noise"]
