"""Synchronisation delay per cell, measured and predicted (Padhye & Dowdy §2.3, Fig. 3).

"A job that has been preempted is forced to wait until all the remaining
running jobs free their partitions. This synchronization delay may be a
source of significant overhead." Here it is, per resize, the time from the
job's acknowledgment to its new partition: live, `ResizeRecord.held_s`
(stored in the results store's resizes table); in the simulator, the time
from a job's `ack` row to its next `resize` row in the timeline. A cell's
figure is the mean over its resizes of jobs past warm-up; a cell without any
resize (RA never preempts) has none (NaN), not zero.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import pandas as pd

from scheduler.jobs import EventKind
from scheduler.results import TimelineEvent

COLUMNS = ["policy", "rate", "replication", "sync_delay", "resizes"]


def timeline_delays(timeline: Iterable[TimelineEvent]) -> list[tuple[int | str, float]]:
    """(job, seconds from its ack to its next resize) for every acknowledged preemption that was resized.

    An ack with no resize after it (cannot happen in the engine, which
    restarts every preempted job) is left out.
    """
    pending: dict[int | str, float] = {}
    out = []
    for e in timeline:
        if e.event == EventKind.ACK:
            pending[e.job] = e.time
        elif e.event == EventKind.RESIZE and e.job in pending:
            out.append((e.job, e.time - pending.pop(e.job)))
    return out


def cell_mean(delays: Sequence[tuple[int | str, float]], warmup: int) -> tuple[float, int]:
    """Mean delay over resizes of jobs with id >= warmup (ids are stream positions), and their number."""
    kept = [d for job, d in delays if not isinstance(job, int) or job >= warmup]
    return (math.fsum(kept) / len(kept) if kept else math.nan), len(kept)


def measured(store, cells: pd.DataFrame, warmup: int) -> pd.DataFrame:
    """Per cell (policy, rate, replication): the mean `held_s` of its live resizes."""
    rows = []
    for r in cells.itertuples(index=False):
        delays = [(int(x.job), float(x.held_s)) for x in store.resizes(int(r.cell_id)) if x.held_s is not None]
        mean, n = cell_mean(delays, warmup)
        rows.append({"policy": r.policy, "rate": float(r.rate), "replication": int(r.replication),
                     "sync_delay": mean, "resizes": n})
    return pd.DataFrame(rows, columns=COLUMNS)


def predicted(store, cells: pd.DataFrame, warmup: int) -> pd.DataFrame:
    """Per cell: the same streams replayed as the stored predictions were (experiments/replay.py),
    with the timeline kept, and the mean ack-to-resize time in it. Empty when the store cannot be
    replayed yet (no profile, no segment)."""
    from experiments.config import ExperimentConfig
    from experiments.predict import engine_jobs
    from experiments.replay import class_models, owner_load, speeds_for
    from scheduler.engine import simulate

    config = ExperimentConfig.model_validate(store.config)
    profiles = store.profiles()
    if cells.empty or set(config.classes) - set(profiles):
        return pd.DataFrame(columns=COLUMNS)
    models = class_models(config, profiles)
    calibration = store.latest_calibration()
    rows = []
    for r in cells.itertuples(index=False):
        cell_id = int(r.cell_id)
        segments = store.segments(cell_id)
        hosts = segments[0]["hosts"] if segments else []
        if not hosts:
            continue
        avail, schedule = owner_load(config, store, cell_id, int(r.replication), hosts)
        result = simulate(engine_jobs(store.stream_of(cell_id), models), r.policy, len(hosts),
                          speeds=speeds_for(calibration, hosts), availability=avail, schedule=schedule)
        mean, n = cell_mean(timeline_delays(result.timeline), warmup)
        rows.append({"policy": r.policy, "rate": float(r.rate), "replication": int(r.replication),
                     "sync_delay": mean, "resizes": n})
    return pd.DataFrame(rows, columns=COLUMNS)


def merge(reps: pd.DataFrame, delays: pd.DataFrame) -> pd.DataFrame:
    """The replications' table with a sync_delay column (NaN where no delay is known)."""
    if delays.empty:
        return reps.assign(sync_delay=math.nan)
    keys = ["policy", "rate", "replication"]
    d = delays[[*keys, "sync_delay"]].astype({"rate": float, "replication": int})
    return reps.astype({"rate": float, "replication": int}).merge(d, on=keys, how="left")
