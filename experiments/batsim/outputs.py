"""What Batsim writes at the end of a run: `<prefix>_jobs.csv` and `<prefix>_schedule.csv`.

Both as Batsim 4.2.1 writes them (src/export.cpp, JobsTracer; docs/output-jobs.rst and
output-schedule.rst), so that evalys and the scripts written for Batsim read them:

* jobs: one row per job, Batsim's 17 columns in its writer's order (the documentation puts
  consumed_energy before allocated_resources; the writer does not), numbers as C++'s
  `to_string` prints them (6 decimals), a rejected job's times empty, `metadata` quoted.
  A job with no walltime has requested_time -1; energy is not modelled: consumed_energy -1.
  A run stopped by an error also lists the jobs it left waiting (final_state SUBMITTED) or
  running (RUNNING, no finish), with empty fields for what did not happen.
* schedule: one header and one row, the fields in lexicographic order. Its means divide by
  every job, rejected ones included, and a job's execution time of 0 counts as 1e-5 s in its
  slowdown, and nb_jobs_killed counts every finished job that did not succeed (failed, walltime,
  killed): all three as Batsim does. consumed_joules and the switch counts are 0 (no energy, no
  power states); scheduling_time is the wall time spent waiting for the scheduler's replies.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from experiments.traces.intervals import format_intervals

JOB_COLUMNS = ("job_id", "workload_name", "profile", "submission_time", "requested_number_of_resources",
               "requested_time", "success", "final_state", "starting_time", "execution_time", "finish_time",
               "waiting_time", "turnaround_time", "stretch", "allocated_resources", "consumed_energy", "metadata")
ZERO_RUNTIME_S = 1e-5
"""Batsim's execution time for a job that ran for no time (so that its stretch is finite)."""
VERSION = "nowlab-batsim-server (Batsim 4.2.1 protocol)"


@dataclass(frozen=True)
class JobRecord:
    """One job as the outputs show it."""

    id: str  # WORKLOAD!NAME
    profile: str
    submit_s: float
    res: int
    walltime_s: float | None
    final_state: str  # COMPLETED_*, REJECTED; SUBMITTED or RUNNING when a run stopped early
    start_s: float | None = None
    finish_s: float | None = None
    alloc: tuple[int, ...] = ()
    return_code: int | None = None
    metadata: str = ""

    @property
    def finished(self) -> bool:
        return self.final_state.startswith("COMPLETED_")

    @property
    def runtime_s(self) -> float | None:
        if self.start_s is None or self.finish_s is None:
            return None
        return max(self.finish_s - self.start_s, 0.0) or ZERO_RUNTIME_S


@dataclass(frozen=True)
class RunTimes:
    """What the schedule file needs beside the jobs."""

    machines: int
    end_s: float  # simulated time at the end (or when the run stopped)
    scheduling_time_s: float  # wall time waiting for replies
    simulation_time_s: float  # wall time of the whole run


def _num(x: float) -> str:
    return f"{x:.6f}"


def job_row(r: JobRecord) -> list[str]:
    workload, _, name = r.id.partition("!")
    runtime = r.runtime_s
    row = {"job_id": name, "workload_name": workload, "profile": r.profile, "submission_time": _num(r.submit_s),
           "requested_number_of_resources": str(r.res),
           "requested_time": _num(-1.0 if r.walltime_s is None else r.walltime_s),
           "success": "1" if r.final_state == "COMPLETED_SUCCESSFULLY" else "0", "final_state": r.final_state,
           "starting_time": "" if r.start_s is None else _num(r.start_s),
           "execution_time": "" if runtime is None else _num(runtime),
           "finish_time": "" if runtime is None else _num(r.start_s + runtime),
           "waiting_time": "" if r.start_s is None else _num(r.start_s - r.submit_s),
           "turnaround_time": "" if runtime is None else _num(r.start_s + runtime - r.submit_s),
           "stretch": "" if runtime is None else _num((r.start_s + runtime - r.submit_s) / runtime),
           "allocated_resources": format_intervals(r.alloc),
           "consumed_energy": "" if r.final_state == "REJECTED" else _num(-1.0), "metadata": r.metadata}
    return [row[c] for c in JOB_COLUMNS]


def write_jobs(path: Path, records: Sequence[JobRecord]) -> None:
    with path.open("w", encoding="utf-8") as f:
        f.write(",".join(JOB_COLUMNS) + "\n")
        for r in records:
            row = job_row(r)
            f.write(",".join(_field(v) for v in row[:-1]) + "," + _quoted(row[-1]) + "\n")


def _field(value: str) -> str:
    return _quoted(value) if any(c in value for c in ',"\r\n') else value


def _quoted(value: str) -> str:
    """Batsim quotes metadata always; a quote inside is doubled, as CSV readers expect."""
    return '"' + value.replace('"', '""') + '"'


def schedule_row(records: Sequence[JobRecord], times: RunTimes) -> dict[str, str]:
    done = [r for r in records if r.finished]
    n = len(records)
    waits = [r.start_s - r.submit_s for r in done]
    turnarounds = [r.start_s + r.runtime_s - r.submit_s for r in done]
    slowdowns = [t / r.runtime_s for t, r in zip(turnarounds, done)]
    computing = sum(r.runtime_s * len(r.alloc) for r in done)
    success = sum(r.final_state == "COMPLETED_SUCCESSFULLY" for r in done)
    out = {"batsim_version": VERSION, "consumed_joules": _num(0.0),
           "makespan": _num(max((r.start_s + r.runtime_s for r in done), default=0.0)),
           "max_slowdown": _num(max(slowdowns, default=0.0)),
           "max_turnaround_time": _num(max(turnarounds, default=0.0)),
           "max_waiting_time": _num(max(waits, default=0.0)),
           "mean_slowdown": _num(sum(slowdowns) / n if n else 0.0),
           "mean_turnaround_time": _num(sum(turnarounds) / n if n else 0.0),
           "mean_waiting_time": _num(sum(waits) / n if n else 0.0),
           "nb_computing_machines": str(times.machines), "nb_grouped_switches": "0", "nb_jobs": str(n),
           "nb_jobs_finished": str(len(done)), "nb_jobs_killed": str(len(done) - success),
           "nb_jobs_rejected": str(sum(r.final_state == "REJECTED" for r in records)),
           "nb_jobs_success": str(success), "nb_machine_switches": "0",
           "scheduling_time": _num(times.scheduling_time_s), "simulation_time": _num(times.simulation_time_s),
           "success_rate": _num(success / n if n else 0.0), "time_computing": _num(computing),
           "time_idle": _num(max(times.machines * times.end_s - computing, 0.0)), "time_sleeping": _num(0.0),
           "time_switching_off": _num(0.0), "time_switching_on": _num(0.0), "time_unavailable": _num(0.0)}
    return dict(sorted(out.items()))


def write_schedule(path: Path, records: Sequence[JobRecord], times: RunTimes) -> None:
    row = schedule_row(records, times)
    path.write_text(",".join(row) + "\n" + ",".join(row.values()) + "\n", encoding="utf-8")


def write_outputs(out_dir: Path, prefix: str, records: Sequence[JobRecord], times: RunTimes) -> tuple[Path, Path]:
    """Both files, `<out_dir>/<prefix>_jobs.csv` and `_schedule.csv`; returns their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    jobs, schedule = out_dir / f"{prefix}_jobs.csv", out_dir / f"{prefix}_schedule.csv"
    write_jobs(jobs, records)
    write_schedule(schedule, records, times)
    return jobs, schedule


__all__ = ["JOB_COLUMNS", "VERSION", "ZERO_RUNTIME_S", "JobRecord", "RunTimes", "job_row", "schedule_row",
           "write_jobs", "write_outputs", "write_schedule"]
