"""Task-graph and workstation files: TOML read through the project's one loader.

The models live in `scheduler/taskgraph/` (pure); reading files is here, where the loader
(`testbed/config_loader.py`) may be imported. Every error is one line naming the file and
the task, arc or key.
"""
from __future__ import annotations

from pathlib import Path

from scheduler.taskgraph.spec import TaskGraph, TaskGraphError
from scheduler.taskgraph.workstations import WorkstationSet
from testbed.config_loader import load_toml

TASKGRAPHS_DIR = Path(__file__).resolve().parent / "configs" / "taskgraphs"


class WorkstationsError(ValueError):
    """A workstations file that cannot be used: one line naming the key."""


def resolve(name_or_path: str | Path) -> Path:
    """A path as given, or a shipped file by name (`wavefront` -> configs/taskgraphs/wavefront.toml)."""
    path = Path(name_or_path)
    if path.exists() or path.suffix:
        return path
    return TASKGRAPHS_DIR / f"{path.name}.toml"


def load_graph(name_or_path: str | Path) -> TaskGraph:
    return load_toml(resolve(name_or_path), TaskGraph, TaskGraphError, kind="task graph")


def load_workstations(name_or_path: str | Path) -> WorkstationSet:
    return load_toml(resolve(name_or_path), WorkstationSet, WorkstationsError, kind="workstations file")
