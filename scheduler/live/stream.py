"""The live run's inputs as types: a job class (what to run, and its model) and an arrival.

Reading them from files (the classes TOML and the stream CSV) is
`experiments/traces/live_inputs.py`'s: the scheduler reads no files. A job class is a
workload command line plus what a policy may know about it: a Sevcik model (W, alpha,
beta, optional pmax), or only T(1), or only `pmax`. In a classes file:

    [class.short]
    argv = ["python3", "-m", "workloads.synthetic", "--phases", "6", "--mults", "4000000"]
    W = 6.0
    alpha = 0.5
    beta = 0.2
    pmax = 4

    [class.cg]
    argv = ["python3", "-m", "workloads.cg", "--n", "500"]
    profile = "profiles/cg500/fit.json"   # W, alpha, beta from a dedicated-run fit

The stream is a CSV with columns `class, arrival` and optionally `id`
(default: the row number from 0). Arrivals are seconds after the run starts,
non-negative and non-decreasing. Every problem is one ValueError naming the
file and line, so the CLI prints it as is. Nothing here starts anything.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from scheduler.model import Knowledge, Model



@dataclass(frozen=True)
class JobClass:
    """A workload command line and its model; argv gets --job/--hosts/--control appended."""

    name: str
    argv: tuple[str, ...]
    model: Model


@dataclass(frozen=True)
class Arrival:
    id: int | str
    job_class: JobClass
    arrival: float  # seconds after the start of the run


@dataclass(frozen=True, slots=True)
class PmaxOnlyModel:
    """Only pmax is known. T(p) is NaN: policies needing T(1) or T(p) refuse these jobs."""

    pmax: int
    knows: frozenset[Knowledge] = field(default=frozenset({Knowledge.PMAX}), init=False)

    def T(self, p: int) -> float:
        return math.nan
