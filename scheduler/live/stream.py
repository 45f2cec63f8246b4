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

A rigid job's class has `rigid = True`: its argv is any command (an mpi4py module, a C MPI
binary, a delay) run as given on exactly the arrival's `size` workstations, with no control
channel; its length, where the program takes one, is a work argument in reference-seconds
(`python3 -m workloads.rigid --work W`, `nowlab-ring W N`). A `python3 -m` program runs on
the resident pool when the launcher has one, anything else through mpiexec.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from scheduler.model import Job, Knowledge, Model



@dataclass(frozen=True)
class JobClass:
    """A workload command line and its model; argv gets --job/--hosts/--control appended."""

    name: str
    argv: tuple[str, ...]
    model: Model
    rigid: bool = False  # argv runs as given (no --job/--hosts/--control), on exactly its arrival's size


@dataclass(frozen=True)
class Arrival:
    """One job of a live stream. A rigid class's arrival gives `size` (its exact processors) and
    may give `walltime_s` (it is killed at start + walltime_s, COMPLETED_WALLTIME_REACHED)."""

    id: int | str
    job_class: JobClass
    arrival: float  # seconds after the start of the run
    size: int | None = None
    walltime_s: float | None = None

    def __post_init__(self) -> None:
        if self.job_class.rigid and self.size is None:
            raise ValueError(f"job {self.id}: size: class {self.job_class.name} is rigid and needs its processors")
        if not self.job_class.rigid and self.size is not None:
            raise ValueError(f"job {self.id}: size: class {self.job_class.name} is malleable (give it no size)")
        if not self.job_class.rigid and self.walltime_s is not None:
            raise ValueError(f"job {self.id}: walltime_s: a live run kills only rigid jobs at their walltime")
        self.job()  # the model's checks: size >= 1, walltime > 0, arrival >= 0, one line each

    def job(self) -> Job:
        """The job as the state machine and the engine know it."""
        return Job(self.id, self.arrival, self.job_class.model, size=self.size, walltime=self.walltime_s)


@dataclass(frozen=True, slots=True)
class PmaxOnlyModel:
    """Only pmax is known. T(p) is NaN: policies needing T(1) or T(p) refuse these jobs."""

    pmax: int
    knows: frozenset[Knowledge] = field(default=frozenset({Knowledge.PMAX}), init=False)

    def T(self, p: int) -> float:
        return math.nan
