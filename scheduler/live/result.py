"""What a live run returns: the engine's per-job and timeline formats, plus what only a live run has.

`LiveResult.to_dataframe()` and `timeline_dataframe()` are the engine's
(`scheduler.results.SimResult`: Batsim's jobs.csv columns first), with measured
times, success/final_state from each job's status, and three columns added to
the per-job table (status, error, overhead_s). Besides those: every policy call
(`decisions`: the state it saw, what it answered, how long it took), every
preemption's measured cost (`resizes`) and every mpiexec with the
workstations it held (`runs`).
"""
from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd

from scheduler.actions import Action
from scheduler.jobs import EventKind, JobRecord, Outcome
from scheduler.results import SimResult, TimelineEvent, interval_set
from scheduler.snapshot import Snapshot
from workloads.host.records import ResizeRecord


@dataclass(frozen=True)
class Decision:
    """One policy call. `state` is the snapshot as plain data, taken before the call."""

    time: float
    reason: str
    subject: int | str
    state: dict[str, Any]
    actions: tuple[Action, ...]
    seconds: float  # wall time of policy.decide alone

    @staticmethod
    def state_of(snap: Snapshot) -> dict[str, Any]:
        def table(jobs):  # in the mapping's own order: a policy may iterate it
            return [(j.id, j.procs) for j in jobs.values()]
        # the availability object as the policy saw it (immutable): a replay must see it too
        return {"free_mask": snap.free_mask, "running": table(snap.running), "preempting": table(snap.preempting),
                "preempted": table(snap.preempted), "queue": [j.id for j in snap.queue],
                "availability": snap.availability}


@dataclass(frozen=True)
class PhysicalRun:
    """One mpiexec: the workstations it held from launch to exit (seconds since the run started)."""

    job: int | str
    launch: int
    hosts: tuple[str, ...]
    launched_at: float
    exited_at: float
    exit_code: int
    hello_at: float = float("nan")  # when its coordinator said hello (set up, about to compute); NaN: never


@dataclass(frozen=True)
class JobState:
    id: int | str
    job_class: str
    key: str  # the workload's --job (checkpoint directory)
    status: Outcome
    error: str
    launches: int
    report: dict[str, Any] = field(default_factory=dict)  # the coordinator's done message
    overhead_s: float = 0.0  # seconds of the overhead knob waited before its launches and relaunches
    launch_via: str = ""  # a rigid job's launch path: "pool" or "mpiexec" ("": malleable)
    launch_s: float = float("nan")  # a rigid job's launch cost: launch to its program's start, measured
    killed: bool = False  # a rigid job stopped at start + its walltime (final_state COMPLETED_WALLTIME_REACHED)


@dataclass
class LiveResult:
    policy: str
    P: int
    hosts: list[str]
    jobs: list[JobRecord]
    timeline: list[TimelineEvent]
    decisions: list[Decision]
    resizes: list[ResizeRecord]
    runs: list[PhysicalRun]
    states: list[JobState]
    control_refused: int = 0  # connections the control channel refused (wrong secret, silent, outside its networks)

    def sim_result(self) -> SimResult:
        return SimResult(self.policy, self.P, self.jobs, self.timeline)

    def to_dataframe(self) -> pd.DataFrame:
        """The engine's per-job columns (Batsim's, then ours), then status (done/failed), error and the
        overhead knob's seconds, and a rigid job's launch path and cost. A failed job has success 0 and
        final_state COMPLETED_FAILED; one killed at its walltime, 0 and COMPLETED_WALLTIME_REACHED."""
        df = self.sim_result().to_dataframe(success=[s.status != Outcome.FAILED for s in self.states])
        df["status"] = [s.status for s in self.states]
        df["error"] = [s.error for s in self.states]
        df["overhead_s"] = [s.overhead_s for s in self.states]
        df["launch_via"] = [s.launch_via for s in self.states]
        df["launch_s"] = [s.launch_s for s in self.states]
        return df

    def timeline_dataframe(self) -> pd.DataFrame:
        return self.sim_result().timeline_dataframe()

    def decisions_dataframe(self) -> pd.DataFrame:
        return pd.DataFrame({
            "time": [d.time for d in self.decisions],
            "reason": [d.reason for d in self.decisions],
            "subject": [d.subject for d in self.decisions],
            "actions": [" ".join(_action_text(a) for a in d.actions) for d in self.decisions],
            "decide_us": [d.seconds * 1e6 for d in self.decisions],
        })

    def resizes_dataframe(self) -> pd.DataFrame:
        return pd.DataFrame([r.row() for r in self.resizes])

    def runs_dataframe(self) -> pd.DataFrame:
        return pd.DataFrame([{**asdict(r), "hosts": ",".join(r.hosts)} for r in self.runs])

    @property
    def failed(self) -> list[JobState]:
        """Jobs that neither ended nor were killed at their walltime (the rule an RJMS applies)."""
        return [s for s in self.states if s.status not in (Outcome.DONE, Outcome.WALLTIME)]

    def summary(self) -> dict[str, float]:
        s = dict(self.sim_result().summary())
        times = [d.seconds for d in self.decisions]
        done = [r for r in self.resizes if r.running_at is not None and r.kind != "same"]
        s.update(
            failed=len(self.failed),
            preemptions=sum(r.preemptions for r in self.jobs),
            resizes=sum(1 for e in self.timeline if e.event == EventKind.RESIZE),
            resizes_changed=sum(1 for r in self.resizes if r.kind in ("loser", "winner")),
            decisions=len(times),
            decide_median_us=statistics.median(times) * 1e6 if times else float("nan"),
            decide_max_us=max(times) * 1e6 if times else float("nan"),
            decide_total_ms=sum(times) * 1e3,
            reconfig_median_s=statistics.median(r.reconfig_s for r in done) if done else float("nan"),
            reconfig_max_s=max(r.reconfig_s for r in done) if done else float("nan"),
            ack_latency_median_s=(statistics.median(lat) if (lat := [r.ack_latency_s for r in self.resizes
                                                                     if r.ack_latency_s is not None]) else float("nan")),
            bytes_moved=sum(r.bytes_moved for r in self.resizes),
        )
        return s


def _action_text(action: Action) -> str:
    name = type(action).__name__
    procs = getattr(action, "procs", None)
    return f"{name}({action.job})" if procs is None else f"{name}({action.job}:{interval_set(procs)})"
