"""What a simulation returns: per-job records and the event timeline.

Per-job columns follow Batsim's jobs.csv (so evalys and friends read them),
plus our own: preemptions and the time-weighted mean partition size.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:  # pandas loads in the two methods that build frames: the engine does not need it
    import pandas as pd


class TimelineEvent(NamedTuple):
    """One row of the timeline. event is one of arrive, start,
    preempt_request, ack, resize, finish; procs is the set held after it
    (for finish, the set released; for arrive, empty)."""

    time: float
    job: int | str
    event: str
    procs: tuple[int, ...]


class JobRecord(NamedTuple):
    """Outcome of one job; times in seconds. A NamedTuple because a study
    makes millions of them.

    stretch = turnaround / execution time (finish - start), Batsim's definition.
    mean_partition is the time-weighted mean number of processors held
    between start and finish. allocations is the history of processor sets
    the job ran on, in order; allocated is their union (Batsim's column).
    """

    id: int | str
    submission: float
    start: float
    finish: float
    preemptions: int
    mean_partition: float
    allocations: tuple[tuple[int, ...], ...]

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


def interval_set(procs: tuple[int, ...]) -> str:
    """Batsim's interval-set text: (0, 1, 2, 5) -> '0-2 5'."""
    parts: list[str] = []
    ids = sorted(procs)
    i = 0
    while i < len(ids):
        j = i
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        parts.append(str(ids[i]) if i == j else f"{ids[i]}-{ids[j]}")
        i = j + 1
    return " ".join(parts)


@dataclass(slots=True)
class SimResult:
    policy: str
    P: int
    jobs: list[JobRecord]
    timeline: list[TimelineEvent]

    def to_dataframe(self) -> pd.DataFrame:
        """Batsim jobs.csv columns, then preemptions, mean_partition and partition_sizes
        (the size of each successive allocation, space-separated)."""
        import pandas as pd

        return pd.DataFrame({
            "job_id": [r.id for r in self.jobs],
            "submission_time": [r.submission for r in self.jobs],
            "starting_time": [r.start for r in self.jobs],
            "execution_time": [r.execution for r in self.jobs],
            "finish_time": [r.finish for r in self.jobs],
            "waiting_time": [r.wait for r in self.jobs],
            "turnaround_time": [r.turnaround for r in self.jobs],
            "stretch": [r.stretch for r in self.jobs],
            "allocated_resources": [interval_set(r.allocated) for r in self.jobs],
            "preemptions": [r.preemptions for r in self.jobs],
            "mean_partition": [r.mean_partition for r in self.jobs],
            "partition_sizes": [" ".join(str(len(p)) for p in r.allocations) for r in self.jobs],
        })

    def timeline_dataframe(self) -> pd.DataFrame:
        """One row per event; processors as a Batsim interval set."""
        import pandas as pd

        return pd.DataFrame({
            "time": [e.time for e in self.timeline],
            "job": [e.job for e in self.timeline],
            "event": [e.event for e in self.timeline],
            "processors": [interval_set(e.procs) for e in self.timeline],
        })

    def summary(self) -> dict[str, float]:
        """Means over jobs, in seconds (mean_partition in processors)."""
        n = len(self.jobs) or 1
        return {
            "jobs": len(self.jobs),
            "mean_response": sum(r.turnaround for r in self.jobs) / n,
            "mean_wait": sum(r.wait for r in self.jobs) / n,
            "mean_execution": sum(r.execution for r in self.jobs) / n,
            "mean_partition": sum(r.mean_partition for r in self.jobs) / n,
            "preemptions_per_job": sum(r.preemptions for r in self.jobs) / n,
            "makespan": max((r.finish for r in self.jobs), default=0.0),
        }


RECORD_FIELDS = list(JobRecord._fields)
