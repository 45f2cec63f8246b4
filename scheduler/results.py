"""What a simulation returns: per-job records and the event timeline.

Per-job columns are Batsim's jobs.csv, all of them and in its order
(BATSIM_JOB_COLUMNS, so evalys and friends read the file), then our own:
preemptions, the time-weighted mean partition size and the partition sizes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from scheduler.jobs import EventKind, FinalState, JobRecord

if TYPE_CHECKING:  # pandas loads in the two methods that build frames: the engine does not need it
    import pandas as pd

BATSIM_JOB_COLUMNS = (
    "job_id", "workload_name", "profile", "submission_time", "requested_number_of_resources",
    "requested_time", "success", "final_state", "starting_time", "execution_time", "finish_time",
    "waiting_time", "turnaround_time", "stretch", "allocated_resources", "consumed_energy", "metadata",
)
"""Batsim's out_jobs.csv header, in the order Batsim writes it (its docs/output-jobs.rst lists
the same fields but puts consumed_energy before allocated_resources; the writer does not)."""

WORKLOAD_NAME = "w0"
"""Batsim's name for a run's first workload; ours have one workload each."""
NO_WALLTIME = -1.0
"""requested_time of a job that asks for no walltime: Batsim writes -1 for those."""
NO_ENERGY = -1.0
"""consumed_energy when energy is not modelled: Batsim writes -1 then."""
COMPLETED_SUCCESSFULLY, COMPLETED_FAILED = FinalState.COMPLETED_SUCCESSFULLY, FinalState.COMPLETED_FAILED


class TimelineEvent(NamedTuple):
    """One row of the timeline: procs is the set held after it (for finish, the set released;
    for arrive, empty)."""

    time: float
    job: int | str
    event: EventKind
    procs: tuple[int, ...]


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

    def to_dataframe(self, success: list[bool] | None = None) -> pd.DataFrame:
        """Batsim's jobs.csv columns in its order, then preemptions, mean_partition and partition_sizes
        (the size of each successive allocation, space-separated).

        What Batsim's columns hold here, where they are not plain times in seconds:
        - workload_name: "w0" (Batsim's name for the first workload; a run has one).
        - profile: the job class (live) or the execution-time model's type (simulated).
        - requested_number_of_resources: the job's pmax, capped at the machine size: a malleable
          job asks for at most that many, never an exact count.
          A rigid job's is its exact size.
        - requested_time: the walltime the job asked for, in seconds; -1, Batsim's "no walltime",
          when it asked for none (a malleable job asks for none: its predicted T(1) would be a guess).
        - success / final_state: 1 and COMPLETED_SUCCESSFULLY; 0 and COMPLETED_WALLTIME_REACHED for
          a job killed at its walltime (as Batsim writes it); 0 and COMPLETED_FAILED when `success`
          (one flag per job, in order; default: as the records say) says it failed.
        - allocated_resources: the union of every processor set the job held, as a Batsim interval
          set ("0-3 5"). For a resized job that is more than it held at any one time, so a tool that
          takes its size as the job's width (evalys's utilisation) overstates what it used:
          mean_partition and partition_sizes say what it held over time, the timeline when.
        - consumed_energy: -1 (energy is not modelled; Batsim writes -1 then). metadata: empty.
        """
        import pandas as pd

        return pd.DataFrame(self.job_columns(success))

    def job_columns(self, success: list[bool] | None = None) -> dict[str, list]:
        """to_dataframe's columns, in order, as plain lists: experiments.traces.csv_out writes them without pandas."""
        jobs = self.jobs
        ok = [True] * len(jobs) if success is None else list(success)
        if len(ok) != len(jobs):
            raise ValueError(f"success: {len(ok)} flags for {len(jobs)} jobs")
        states = [r.final_state if f else COMPLETED_FAILED for r, f in zip(jobs, ok)]
        return {
            "job_id": [r.id for r in jobs],
            "workload_name": [WORKLOAD_NAME] * len(jobs),
            "profile": [r.profile for r in jobs],
            "submission_time": [r.submission for r in jobs],
            "requested_number_of_resources": [r.requested for r in jobs],
            "requested_time": [r.requested_time for r in jobs],
            "success": [int(state == COMPLETED_SUCCESSFULLY) for state in states],
            "final_state": states,
            "starting_time": [r.start for r in jobs],
            "execution_time": [r.execution for r in jobs],
            "finish_time": [r.finish for r in jobs],
            "waiting_time": [r.wait for r in jobs],
            "turnaround_time": [r.turnaround for r in jobs],
            "stretch": [r.stretch for r in jobs],
            "allocated_resources": [interval_set(r.allocated) for r in jobs],
            "consumed_energy": [NO_ENERGY] * len(jobs),
            "metadata": [""] * len(jobs),
            "preemptions": [r.preemptions for r in jobs],
            "mean_partition": [r.mean_partition for r in jobs],
            "partition_sizes": [" ".join(str(len(p)) for p in r.allocations) for r in jobs],
        }

    def timeline_dataframe(self) -> pd.DataFrame:
        """One row per event; processors as a Batsim interval set."""
        import pandas as pd

        return pd.DataFrame(self.timeline_columns())

    def timeline_columns(self) -> dict[str, list]:
        """timeline_dataframe's columns, in order, as plain lists (for experiments.traces.csv_out)."""
        texts: dict[tuple[int, ...], str] = {}  # a run holds few distinct sets: format each once
        return {
            "time": [e.time for e in self.timeline],
            "job": [e.job for e in self.timeline],
            "event": [e.event for e in self.timeline],
            "processors": [texts.get(e.procs) or texts.setdefault(e.procs, interval_set(e.procs))
                           for e in self.timeline],
        }

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
