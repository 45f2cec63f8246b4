"""Each finished cell of a stored run as an SWF file, partitions from its timeline.

A job's partial executions are the stretches between its start, each resize
and its finish, read from the executor's timeline (one artifact per segment),
so a preempted and resized job is written with the archive's conventions
(experiments/traces/swf.py).
"""
from __future__ import annotations

import io
from pathlib import Path

import pandas as pd

from experiments.traces.intervals import interval_count
from experiments.store import ResultsStore
from experiments.traces.swf import write_swf
from scheduler.jobs import EventKind, FinishedJob


def partitions(timeline: pd.DataFrame) -> dict[int, list[tuple[float, float, int]]]:
    """job -> [(start, end, processors)] from start/resize/finish rows (stream clock)."""
    out: dict[int, list[tuple[float, float, int]]] = {}
    open_: dict[int, tuple[float, int]] = {}
    for row in timeline.sort_values("time", kind="stable").itertuples():
        job = int(row.job)
        if row.event in (EventKind.START, EventKind.RESIZE):
            if job in open_:
                t0, n = open_[job]
                out.setdefault(job, []).append((t0, row.time, n))
            open_[job] = (row.time, interval_count(str(row.processors)))
        elif row.event == EventKind.FINISH and job in open_:
            t0, n = open_.pop(job)
            out.setdefault(job, []).append((t0, row.time, n))
    return out


def export(store: ResultsStore, out_dir: Path) -> list[Path]:
    """One `POLICY-RATE-rREP.swf` per cell with stored jobs."""
    jobs = store.jobs_frame()
    if jobs.empty:
        return []
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for cell in store.cells_frame().itertuples():
        mine = jobs[jobs.cell_id == cell.cell_id]
        if mine.empty:
            continue
        outcomes = [FinishedJob.from_row(r) for r in mine.to_dict("records")]
        segs: dict[int, list[tuple[float, float, int]]] = {}
        for name, text in sorted(store.artifacts(int(cell.cell_id)).items()):
            if name.startswith("timeline-") and text.strip():
                for job, parts in partitions(pd.read_csv(io.StringIO(text))).items():
                    segs.setdefault(job, []).extend(parts)
        ids = {o.id for o in outcomes}
        segs = {j: p for j, p in segs.items() if j in ids}
        path = out_dir / f"{cell.policy}-{cell.rate:g}-r{cell.replication}.swf"
        write_swf(path, outcomes, segments=segs,
                  header={"Computer": "nowlab emulated NOW", "Note": f"policy {cell.policy}, rate {cell.rate:g}/s, "
                          f"replication {cell.replication}; times in s since the run started"})
        paths.append(path)
    return paths
