"""Task-graph and workstation files: TOML read through the project's one loader; timelines as CSV.

The models live in `scheduler/taskgraph/` (pure); reading files is here, where the loader
(`testbed/config_loader.py`) may be imported. Every error is one line naming the file and
the task, arc or key.
"""
from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

from experiments.models.tgs import TgsResult
from experiments.models.tgs_montecarlo import TaskMeans
from scheduler.taskgraph.spec import TaskGraph, TaskGraphError
from scheduler.taskgraph.workstations import WorkstationSet
from testbed.config_loader import load_toml

TASKGRAPHS_DIR = Path(__file__).resolve().parent / "configs"


class WorkstationsError(ValueError):
    """A workstations file that cannot be used: one line naming the key."""


def resolve(name_or_path: str | Path) -> Path:
    """A path as given, or a shipped file by name (`wavefront` -> configs/wavefront.toml, beside this module)."""
    path = Path(name_or_path)
    if path.exists() or path.suffix:
        return path
    return TASKGRAPHS_DIR / f"{path.name}.toml"


def load_graph(name_or_path: str | Path) -> TaskGraph:
    return load_toml(resolve(name_or_path), TaskGraph, TaskGraphError, kind="task graph")


def load_workstations(name_or_path: str | Path) -> WorkstationSet:
    return load_toml(resolve(name_or_path), WorkstationSet, WorkstationsError, kind="workstations file")


TIMELINE_COLUMNS = ("task", "workstation", "guests", "start_s", "finish_s", "mc_start_s", "mc_finish_s")


def write_timeline_csv(path: str | Path, result: TgsResult, means: Sequence[TaskMeans] = ()) -> Path:
    """Every task's placement and predicted start and finish, for a live runner and the reports.

    The Monte Carlo columns are empty when no Monte Carlo was run.
    """
    mc = {m.task: m for m in means}
    path = Path(path)
    with path.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(TIMELINE_COLUMNS)
        for t in result.timings:
            m = mc.get(t.task)
            out.writerow([t.task, t.workstation, t.guests, f"{t.start_s:.6f}", f"{t.finish_s:.6f}",
                          "" if m is None else f"{m.start_s:.6f}", "" if m is None else f"{m.finish_s:.6f}"])
    return path
