"""The records every part of an experiment passes around: stream jobs and job outcomes.

A job's vocabulary from stream to report: a `StreamJob` (what arrives) runs
as a scheduler job (`scheduler.model.Job` simulated, a live `Arrival`), the
scheduler records it as a `scheduler.results.JobRecord` either way, and
`JobOutcome.of` puts that record back beside its stream job, on the stream's
clock, for the store, the predictions and the report.

Kept apart from the code that makes or consumes them so the arrival
generator, the SWF reader, the runner, the predictor, the results store and
the report agree on one shape without importing each other.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from scheduler.results import JobRecord


@dataclass(frozen=True)
class StreamJob:
    """One job of an arrival stream, before it runs.

    `demand` multiplies the class's mean demand: 1.0 for constant demand, an
    Exp(1) draw for exponential demand, a scaled runtime ratio for SWF jobs.
    `requested` is the processors the job asks for (None: the class's pmax).
    """

    id: int
    cls: str
    arrival: float  # seconds after the start of the run
    demand: float = 1.0
    requested: int | None = None

    def __post_init__(self) -> None:
        if not (math.isfinite(self.arrival) and self.arrival >= 0):
            raise ValueError(f"job {self.id}: arrival must be a finite time >= 0, got {self.arrival}")
        if not (math.isfinite(self.demand) and self.demand > 0):
            raise ValueError(f"job {self.id}: demand must be a finite number > 0, got {self.demand}")


@dataclass(frozen=True)
class JobOutcome:
    """One job after it ran (measured) or was replayed (predicted); times in seconds.

    Times are on the stream's clock (seconds after the start of the run), so
    a measured and a predicted outcome of the same job compare field by field.
    mean_procs is the time-weighted mean partition size between start and finish.
    """

    job_id: int
    cls: str
    demand: float
    arrival: float
    start: float
    finish: float
    mean_procs: float
    max_procs: int
    requested: int
    preemptions: int
    status: str = "done"  # done | failed
    error: str = ""
    # Speed the job's workstations delivered over its span, relative to the speed the prediction
    # assumed for them (1.0: as assumed); None until a host-core meter measured it. Predictions leave it None.
    delivered_speed: float | None = None

    @classmethod
    def of(cls, job: StreamJob, record: JobRecord, *, offset: float = 0.0, status: str = "done",
           error: str = "") -> "JobOutcome":
        """A stream job's outcome from the scheduler's record of it, measured or simulated alike.
        `offset` moves the record's times (seconds since its run started) onto the stream's clock."""
        return cls(job_id=job.id, cls=job.cls, demand=job.demand, arrival=job.arrival,
                   start=offset + record.start, finish=offset + record.finish, mean_procs=record.mean_partition,
                   max_procs=max((len(a) for a in record.allocations), default=0), requested=record.requested,
                   preemptions=record.preemptions, status=status, error=error)

    @property
    def wait(self) -> float:
        return self.start - self.arrival

    @property
    def execution(self) -> float:
        return self.finish - self.start

    @property
    def response(self) -> float:
        return self.finish - self.arrival

    def row(self) -> dict[str, Any]:
        """Plain columns, derived times included (for DataFrames and SQL)."""
        return {**asdict(self), "wait": self.wait, "execution": self.execution, "response": self.response}
