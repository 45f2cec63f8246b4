"""A Parallel Workloads Archive trace replayed as it was, in the simulator: rigid jobs with their
submit times, sizes, run times and requested times, under a batch policy (FCFS, EASY...).

What becomes a job is `experiments.traces.swf_rigid`'s (its `ParseSummary` counts what was left
out and why). Here, on top of that:

* a job wider than the machine (its size > P) is skipped, and counted (`skipped_wide`);
* a requested time of -1 (none) or 0 is no walltime: the job is never killed, and a policy
  plans with its run time (`scheduler.policies.fcfs.estimate_s`, Batsim's and AccaSim's rule);
* a job that runs longer than it asked is killed at its walltime (COMPLETED_WALLTIME_REACHED),
  as the machine's resource manager would have: archive traces hold such overruns;
* the machine has P processors: `max_procs` when given, else the header's MaxProcs (or MaxNodes).

Metrics (`ReplayMetrics`), over the jobs replayed: mean wait (start - submit), mean response
(finish - submit), mean bounded slowdown max(1, response / max(execution, tau)) with tau = 10 s
(Feitelson et al.'s threshold against tiny jobs' huge slowdowns), and utilisation: the
processor-seconds the jobs held over P x (last finish - first submit).
"""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

from experiments.traces.swf_rigid import ParseSummary, RigidTrace
from scheduler.engine import simulate
from scheduler.jobs import FinalState
from scheduler.model import Job, RuntimeModel
from scheduler.policy import Policy
from scheduler.results import SimResult

BSLD_TAU_S = 10.0
"""Bounded slowdown's threshold, seconds: a job shorter than this counts as this long."""

Progress = Callable[[int, int], None]  # (jobs arrived, jobs in all), from the engine


@dataclass(frozen=True)
class ReplayMetrics:
    jobs: int
    killed_at_walltime: int
    mean_wait_s: float
    mean_response_s: float
    mean_bounded_slowdown: float  # with tau = BSLD_TAU_S
    utilisation: float  # processor-seconds held / (P x span), in [0, 1]
    span_s: float  # first submit to last finish

    def rows(self) -> list[tuple[str, str]]:
        """(label, value with its unit) for a report table."""
        return [("jobs replayed", f"{self.jobs}"), ("killed at their walltime", f"{self.killed_at_walltime}"),
                ("mean wait", f"{self.mean_wait_s:.6g} s"), ("mean response", f"{self.mean_response_s:.6g} s"),
                (f"mean bounded slowdown (tau = {BSLD_TAU_S:g} s)", f"{self.mean_bounded_slowdown:.6g}"),
                ("utilisation", f"{100 * self.utilisation:.2f} %"), ("span", f"{self.span_s:.6g} s")]


@dataclass(frozen=True)
class TraceReplay:
    """One replay: what was read, what was skipped, the engine's result and its metrics."""

    trace: str
    policy: str
    P: int
    summary: ParseSummary
    skipped_wide: int  # kept by the parser, wider than the machine
    result: SimResult
    metrics: ReplayMetrics

    def as_dict(self) -> dict[str, object]:
        """The summary written beside the jobs CSV (JSON)."""
        return {"trace": self.trace, "policy": self.policy, "P": self.P, "metrics": asdict(self.metrics),
                "parse": self.summary.as_dict(), "skipped wider than the machine": self.skipped_wide}


def machine_size(trace: RigidTrace, max_procs: int | None) -> int:
    """P: `max_procs`, else the header's; a one-line error naming the option when neither is known."""
    if max_procs is not None:
        if max_procs < 1:
            raise ValueError(f"--max-procs must be >= 1, got {max_procs}")
        return max_procs
    if trace.max_procs is None:
        raise ValueError(f"--max-procs: {trace.path} has no MaxProcs or MaxNodes in its header; "
                         "give the machine's size")
    return trace.max_procs


def rigid_jobs(trace: RigidTrace, P: int) -> tuple[list[Job], int]:
    """The trace's jobs as the engine's rigid jobs, and how many were skipped as wider than P."""
    jobs = []
    wide = 0
    for j in trace.jobs:
        size = j.procs_requested if j.procs_requested is not None else j.procs_allocated
        if size > P:
            wide += 1
            continue
        wall = j.requested_time_s
        jobs.append(Job(j.job, j.submit_s, RuntimeModel(j.run_s), size=size,
                        walltime=wall if wall else None))  # None and 0: no walltime
    return jobs, wide


def metrics(result: SimResult, tau_s: float = BSLD_TAU_S) -> ReplayMetrics:
    """The replay's figures (module docstring)."""
    records = result.jobs
    n = len(records)
    if n == 0:
        return ReplayMetrics(0, 0, 0.0, 0.0, 0.0, 0.0, 0.0)
    wait = response = bsld = area = 0.0
    killed = 0
    first, last = math.inf, -math.inf
    for r in records:
        run = r.finish - r.start
        resp = r.finish - r.submission
        wait += r.start - r.submission
        response += resp
        bsld += max(1.0, resp / max(run, tau_s))
        area += run * len(r.allocations[0])
        killed += r.final_state == FinalState.COMPLETED_WALLTIME_REACHED
        first = min(first, r.submission)
        last = max(last, r.finish)
    span = last - first
    return ReplayMetrics(n, killed, wait / n, response / n, bsld / n,
                         area / (result.P * span) if span > 0 else 0.0, span)


def replay(trace: RigidTrace, policy: Policy, max_procs: int | None = None,
           progress: Progress | None = None) -> TraceReplay:
    """Simulate the trace as it was under `policy` (no timeline kept: a trace is long)."""
    P = machine_size(trace, max_procs)
    jobs, wide = rigid_jobs(trace, P)
    result = simulate(jobs, policy, P, timeline=False, progress=progress)
    return TraceReplay(trace.path, policy.name, P, trace.summary, wide, result, metrics(result))


def write(replay_: TraceReplay, out_dir: Path) -> list[Path]:
    """jobs.csv (Batsim's jobs columns, evalys reads it) and summary.json in `out_dir`."""
    from experiments.traces.csv_out import write_jobs

    out_dir.mkdir(parents=True, exist_ok=True)
    jobs_csv, summary = out_dir / "jobs.csv", out_dir / "summary.json"
    write_jobs(replay_.result, jobs_csv)
    summary.write_text(json.dumps(replay_.as_dict(), indent=2) + "\n")
    return [jobs_csv, summary]
