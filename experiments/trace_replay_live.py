"""A window of an archive trace replayed live on an emulated cluster, beside its simulation.

`nowlab replay TRACE.swf --policy EASY --live --cluster NAME` takes `jobs` of the trace's kept jobs
from the `first`, and runs them on the cluster's first P workstations as rigid jobs:

* time scaled by `scale_time` (F): submit times (from the window's first submit), run times and
  requested times are multiplied by F, so an archive's hours become seconds here;
* each job's program is a delay (`python3 -m workloads.rigid --sleep RUN`) or work
  (`--work RUN x SIZE` reference-seconds: RUN on each rank, on a reference core), on the resident
  pool, so the launch is a message, not an mpiexec. A work job takes RUN only where a workstation
  delivers one reference core to each rank: on a slower one, or on the local backend (every rank
  on this host's few cores), it runs longer, and may reach its walltime;
* a job wider than P is scaled down to P (`wide="scale"`) or skipped (`"skip"`), and counted;
* the same scaled jobs are simulated by the engine under the same policy, so each metric of
  `experiments.trace_replay.metrics` (wait, response, bounded slowdown, utilisation) is shown
  measured beside simulated. Bounded slowdown's tau is scaled too (tau x F): a job is tiny by the
  trace's clock, not by this one.

The live run is audited (scheduler/live/audit.py: the rigid rules, no two jobs on one
workstation, EASY's every decision replayed) and its problems reported. At a small F a
requested time's margin over the run time shrinks with it, and can fall below what a launch
and a teardown take (tens of ms a rank on 2 cores): such jobs are killed live and not in the
simulation, and the report shows the two counts side by side.
"""
from __future__ import annotations

import json
import math
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Literal, Sequence

from experiments.trace_replay import BSLD_TAU_S, ReplayMetrics, metrics
from experiments.traces.swf_rigid import ParseSummary, RigidTrace
from scheduler.engine import simulate
from scheduler.live import Arrival, LiveExecutor
from scheduler.live.audit import audit
from scheduler.live.result import LiveResult
from scheduler.live.stream import JobClass
from scheduler.model import Job, RuntimeModel
from scheduler.registry import get_policy
from scheduler.results import SimResult
from workloads.host.launch import Launcher

WideRule = Literal["scale", "skip"]
ProgramKind = Literal["delay", "work"]
Progress = Callable[[str, int, int], None]  # the executor's: (what happened, jobs finished, jobs in all)


@dataclass(frozen=True)
class LiveWindow:
    """Which jobs, how time is scaled, on how many workstations, and what each job runs."""

    first: int
    jobs: int
    scale_time: float  # F: live seconds per trace second
    P: int
    wide: WideRule = "scale"
    program: ProgramKind = "delay"
    iterations: int = 10  # ring steps of a work job

    def __post_init__(self) -> None:
        if self.first < 0:
            raise ValueError(f"--first must be >= 0, got {self.first}")
        if self.jobs < 1:
            raise ValueError(f"--jobs must be >= 1, got {self.jobs}")
        if not (self.scale_time > 0 and math.isfinite(self.scale_time)):
            raise ValueError(f"--scale-time must be a finite factor > 0, got {self.scale_time}")
        if self.P < 1:
            raise ValueError(f"--max-procs must be >= 1, got {self.P}")
        if self.wide not in ("scale", "skip"):
            raise ValueError(f"--wide: unknown {self.wide!r} (scale, skip)")
        if self.program not in ("delay", "work"):
            raise ValueError(f"--program: unknown {self.program!r} (delay, work)")
        if self.iterations < 1:
            raise ValueError(f"iterations must be >= 1, got {self.iterations}")


@dataclass(frozen=True)
class WindowJobs:
    """The window as the engine's jobs and the executor's arrivals (the same jobs, ids and times)."""

    jobs: list[Job]
    arrivals: list[Arrival]
    scaled_down: int  # wider than P, run on P
    skipped_wide: int  # wider than P, left out


def program_argv(kind: ProgramKind, run_s: float, size: int, iterations: int) -> tuple[str, ...]:
    if kind == "delay":
        return ("python3", "-m", "workloads.rigid", "--sleep", f"{run_s:.6f}")
    return ("python3", "-m", "workloads.rigid", "--work", f"{run_s * size:.6f}", "--iterations", str(iterations))


def window(trace: RigidTrace, spec: LiveWindow) -> WindowJobs:
    """The window's jobs, scaled (module docstring). Each job is its own class (its own program)."""
    chosen = trace.jobs[spec.first:spec.first + spec.jobs]
    if not chosen:
        raise ValueError(f"--first: the trace keeps {len(trace.jobs)} jobs, none from {spec.first}")
    t0 = chosen[0].submit_s
    F = spec.scale_time
    jobs, arrivals = [], []
    scaled = skipped = 0
    for j in chosen:
        size = j.procs_requested if j.procs_requested is not None else j.procs_allocated
        if size > spec.P:
            if spec.wide == "skip":
                skipped += 1
                continue
            scaled += 1
            size = spec.P
        run_s = j.run_s * F
        wall = j.requested_time_s * F if j.requested_time_s else None  # None and 0: no walltime
        arrival_s = max(0.0, (j.submit_s - t0) * F)
        cls = JobClass(f"swf-{j.job}", program_argv(spec.program, run_s, size, spec.iterations),
                       RuntimeModel(run_s), rigid=True)
        arrivals.append(Arrival(j.job, cls, arrival_s, size=size, walltime_s=wall))
        jobs.append(arrivals[-1].job())
    return WindowJobs(jobs, arrivals, scaled, skipped)


@dataclass(frozen=True)
class LiveReplay:
    """One live replay and its simulation: the records, the metrics side by side, the counts."""

    trace: str
    policy: str
    spec: LiveWindow
    summary: ParseSummary
    scaled_down: int
    skipped_wide: int
    live: LiveResult
    simulated: SimResult
    measured: ReplayMetrics
    predicted: ReplayMetrics
    problems: tuple[str, ...]  # the live audit's (scheduler/live/audit.py): empty when the run kept every rule

    @property
    def launch_median_s(self) -> float:
        got = [s.launch_s for s in self.live.states if math.isfinite(s.launch_s)]
        return statistics.median(got) if got else math.nan

    def rows(self) -> list[tuple[str, str, str]]:
        """(metric, measured, simulated) for the report's table."""
        tau = f"tau = {BSLD_TAU_S:g} s x F = {BSLD_TAU_S * self.spec.scale_time:.3g} s"
        return [(label.replace(f"tau = {BSLD_TAU_S:g} s", tau), m, s)
                for (label, m), (_, s) in zip(self.measured.rows(), self.predicted.rows())]

    def as_dict(self) -> dict[str, object]:
        return {"trace": self.trace, "policy": self.policy, "window": asdict(self.spec),
                "measured": asdict(self.measured), "simulated": asdict(self.predicted),
                "scaled down to P": self.scaled_down, "skipped wider than P": self.skipped_wide,
                "failed": len(self.live.failed), "launch median s": self.launch_median_s,
                "audit problems": list(self.problems),
                "parse": self.summary.as_dict()}


def _quiet(_what: str, _done: int, _total: int) -> None:
    return None


def run_timeout_s(jobs: Sequence[Job]) -> float:
    """A bound no working run reaches: every job one after another after the last arrival, plus a minute."""
    return (max(j.arrival for j in jobs) + sum(j.walltime if j.walltime is not None else j.model.T(j.size)
                                                for j in jobs)) * 2 + 60.0


def replay_live(trace: RigidTrace, policy: str, spec: LiveWindow, launcher: Launcher, hosts: Sequence[str],
                controller_address: str, *, allowed_networks: Sequence[str] | None = None,
                progress: Progress | None = None) -> LiveReplay:
    """Run the window on `hosts[:spec.P]` through `launcher`, and simulate it, under `policy`."""
    if spec.P > len(hosts):
        raise ValueError(f"--max-procs: {spec.P} workstations asked, the cluster has {len(hosts)}")
    w = window(trace, spec)
    if not w.arrivals:
        raise ValueError(f"--wide skip: every job of the window is wider than P={spec.P}")
    bound_s = run_timeout_s(w.jobs)  # a rigid job's own bound too: a trace job may run for hours x F
    live = LiveExecutor(w.arrivals, policy, launcher, list(hosts[:spec.P]), controller_address,
                        run_timeout_s=bound_s, job_timeout_s=bound_s, allowed_networks=allowed_networks,
                        progress=progress or _quiet).run()
    simulated = simulate(w.jobs, get_policy(policy), spec.P)
    tau = BSLD_TAU_S * spec.scale_time
    return LiveReplay(trace.path, live.policy, spec, trace.summary, w.scaled_down, w.skipped_wide, live, simulated,
                      metrics(live.sim_result(), tau), metrics(simulated, tau), tuple(audit(live, w.arrivals)))


def write(done: LiveReplay, out_dir: Path) -> list[Path]:
    """jobs.csv (measured; Batsim's columns, then ours, evalys reads it), jobs-simulated.csv, summary.json."""
    from experiments.traces.csv_out import write_columns, write_jobs

    out_dir.mkdir(parents=True, exist_ok=True)
    jobs_csv, sim_csv, summary = out_dir / "jobs.csv", out_dir / "jobs-simulated.csv", out_dir / "summary.json"
    frame = done.live.to_dataframe()
    write_columns(jobs_csv, {c: frame[c].tolist() for c in frame.columns})
    write_jobs(done.simulated, sim_csv)
    summary.write_text(json.dumps(done.as_dict(), indent=2) + "\n")
    return [jobs_csv, sim_csv, summary]
