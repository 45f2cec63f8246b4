"""One vocabulary for a job, from its stream to its report: its statuses, its timeline's events and
one record per stage.

A job passes three stages, the same records in the simulator and live:
  * `SubmittedJob`: what arrives (a stream's job: its class, its arrival, its demand);
  * `JobRecord`: how the scheduler ran it, on its run's clock (start, finish, the processor sets
    it held, preemptions), from the state machine, simulated or live alike;
  * `FinishedJob`: the submitted job and its record together, on the stream's clock, with its
    `Outcome`: what the store keeps and the report reads, measured or predicted alike.
What one study needs beyond these (a machine-selection run's measured compute time, a time-shared
job's admission, a task's workstation) goes in `extra`, not in a record of its own. The records are
generic in their extra: a study that adds fields gives them as one frozen dataclass of its own
(`SubmittedJob[Admission]`, `FinishedJob[TaskPlace]`), typed where it is read; one that adds nothing
leaves the empty mapping `NO_EXTRA`.

The enums are `str`-valued (StrEnum), so a member is its text wherever it is written: SQLite,
CSV and JSON hold the same bytes they held when these were string literals, and a value read
back from a store (a plain str) compares equal to its member.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Generic, Mapping, NamedTuple, TypeVar

NO_EXTRA: Mapping[str, object] = MappingProxyType({})
"""A record's `extra` when the study adds nothing (read-only, so one object serves all)."""

E = TypeVar("E")
"""What a study adds to a job's record: a frozen dataclass of its own, or a mapping (NO_EXTRA)."""


class JobStatus(StrEnum):
    """Where a job is in the scheduler's state machine (queued -> running -> (preempting ->
    preempted -> running)* -> finished)."""

    QUEUED = "queued"
    RUNNING = "running"
    PREEMPTING = "preempting"  # asked to preempt, still running until its next safe point
    PREEMPTED = "preempted"  # acknowledged; holds its processors, makes no progress, awaits a resize
    FINISHED = "finished"


class Outcome(StrEnum):
    """How a finished job ended: the `status` column of a run's per-job tables and of the store."""

    DONE = "done"
    FAILED = "failed"
    TIMEOUT = "timeout"  # not done when its run's time ran out (a live run's timeout, a simulation's horizon)
    WALLTIME = "walltime"  # killed at start + its requested walltime (final_state COMPLETED_WALLTIME_REACHED)


class FinalState(StrEnum):
    """How a job left the scheduler, in Batsim's words (the `final_state` column of its jobs.csv)."""

    COMPLETED_SUCCESSFULLY = "COMPLETED_SUCCESSFULLY"
    COMPLETED_FAILED = "COMPLETED_FAILED"
    COMPLETED_WALLTIME_REACHED = "COMPLETED_WALLTIME_REACHED"  # killed at start + its requested walltime


class EventKind(StrEnum):
    """One row of a run's timeline: what happened to a job (the `event` column)."""

    ARRIVE = "arrive"
    START = "start"
    PREEMPT_REQUEST = "preempt_request"
    ACK = "ack"
    RESIZE = "resize"
    FINISH = "finish"


@dataclass(frozen=True)
class SubmittedJob(Generic[E]):
    """A job as it arrives (stage 1): one job of a stream, before it runs.

    `demand` is the job's reference work as a multiple of its class's mean (dimensionless): 1.0
    for constant demand, an Exp(1) draw for exponential demand, a scaled runtime ratio for SWF
    jobs. `requested_procs` is the processors the job asks for (None: its class's pmax).
    """

    id: int | str  # a stream's number; a time-shared job's name
    cls: str
    arrival_s: float  # seconds after the start of the run
    demand: float = 1.0
    requested_procs: int | None = None
    extra: E = field(default_factory=lambda: NO_EXTRA, hash=False)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if not (math.isfinite(self.arrival_s) and self.arrival_s >= 0):
            raise ValueError(f"job {self.id}: arrival must be a finite time >= 0, got {self.arrival_s}")
        if not (math.isfinite(self.demand) and self.demand > 0):
            raise ValueError(f"job {self.id}: demand must be a finite number > 0, got {self.demand}")


class JobRecord(NamedTuple):
    """Outcome of one job; times in seconds. A NamedTuple because a study
    makes millions of them.

    stretch = turnaround / execution time (finish - start), Batsim's definition.
    mean_partition is the time-weighted mean number of processors held
    between start and finish. allocations is the history of processor sets
    the job ran on, in order; allocated is their union (Batsim's column).
    requested is the most processors the job asked for: its pmax capped at
    the machine size (the whole machine when its model has no limit); -1
    when not known. profile says how the job was run: its class live, its
    execution-time model's type in the simulator. requested_time is the walltime it asked
    for in seconds (-1: none, Batsim's value); final_state how it ended (a job killed at its
    walltime is COMPLETED_WALLTIME_REACHED).
    """

    id: int | str
    submission: float
    start: float
    finish: float
    preemptions: int
    mean_partition: float
    allocations: tuple[tuple[int, ...], ...]
    requested: int = -1
    profile: str = ""
    requested_time: float = -1.0
    final_state: FinalState = FinalState.COMPLETED_SUCCESSFULLY

    @property
    def allocated(self) -> tuple[int, ...]:
        return tuple(sorted({p for procs in self.allocations for p in procs}))

    @property
    def wait(self) -> float:
        return self.start - self.submission

    @property
    def turnaround(self) -> float:
        return self.finish - self.submission

    @property
    def execution(self) -> float:
        return self.finish - self.start

    @property
    def stretch(self) -> float:
        return self.turnaround / self.execution if self.execution > 0 else float("inf")


STORED_COLUMNS: dict[str, str] = {
    "job_id": "id", "cls": "cls", "demand": "demand", "arrival": "arrival_s", "start": "start_s",
    "finish": "finish_s", "mean_procs": "mean_procs", "max_procs": "max_procs", "requested": "requested_procs",
    "preemptions": "preemptions", "status": "status", "error": "error", "delivered_speed": "delivered_speed",
}
"""A finished job's stored column -> its field: the names the results store's tables, its frames and
every committed store use (the fields carry their units; the columns keep the names they had)."""


@dataclass(frozen=True)
class FinishedJob(Generic[E]):
    """A job after it ran (measured) or was replayed (predicted), stage 3; times in seconds.

    Times are on the stream's clock (seconds after the start of the run), so a measured and a
    predicted outcome of the same job compare field by field. `mean_procs` is the time-weighted
    mean partition size between start and finish, `max_procs` the largest, `requested_procs` the
    most the job asked for (the scheduler's record of it). `delivered_speed`: the speed the job's
    workstations delivered over its span, relative to the speed the prediction assumed for them
    (1.0: as assumed); None until a host-core meter measured it (predictions leave it None).
    """

    id: int | str  # a stream's number; a time-shared job's name
    cls: str
    demand: float
    arrival_s: float
    start_s: float
    finish_s: float
    mean_procs: float
    max_procs: int
    requested_procs: int
    preemptions: int
    status: Outcome = Outcome.DONE
    error: str = ""
    delivered_speed: float | None = None
    extra: E = field(default_factory=lambda: NO_EXTRA, hash=False)  # type: ignore[assignment]

    @classmethod
    def of(cls, job: SubmittedJob, record: JobRecord, *, offset_s: float = 0.0,
           status: Outcome = Outcome.DONE, error: str = "") -> "FinishedJob":
        """A submitted job's outcome from the scheduler's record of it, measured or simulated alike.
        `offset_s` moves the record's times (seconds since its run started) onto the stream's clock."""
        return cls(id=job.id, cls=job.cls, demand=job.demand, arrival_s=job.arrival_s,
                   start_s=offset_s + record.start, finish_s=offset_s + record.finish,
                   mean_procs=record.mean_partition, max_procs=max((len(a) for a in record.allocations), default=0),
                   requested_procs=record.requested, preemptions=record.preemptions, status=Outcome(status),
                   error=error)

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> "FinishedJob":
        """Back from a stored row (its STORED_COLUMNS; others are ignored)."""
        values = {name: row[column] for column, name in STORED_COLUMNS.items()}
        values["id"] = int(values["id"])
        values["status"] = Outcome(values["status"])
        return cls(**values)

    def with_speed(self, delivered_speed: float | None) -> "FinishedJob":
        return replace(self, delivered_speed=delivered_speed)

    @property
    def wait_s(self) -> float:
        return self.start_s - self.arrival_s

    @property
    def execution_s(self) -> float:
        return self.finish_s - self.start_s

    @property
    def response_s(self) -> float:
        return self.finish_s - self.arrival_s

    def stored(self) -> tuple:
        """The values of STORED_COLUMNS, in order (what the store inserts)."""
        return tuple(getattr(self, name) for name in STORED_COLUMNS.values())

    def row(self) -> dict[str, Any]:
        """The stored columns, derived times included (wait, execution, response), for frames."""
        return {**dict(zip(STORED_COLUMNS, self.stored())), "wait": self.wait_s, "execution": self.execution_s,
                "response": self.response_s}
