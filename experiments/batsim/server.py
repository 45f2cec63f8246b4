"""Batsim's side of the protocol, simulated: a clock, the platform's resources, and the jobs they run.

The request-reply loop of docs/protocol.rst: this side sends a message (what happened), the
scheduler replies with its decisions, and simulated time advances only between replies. Rules
follow Batsim 4.2.1 (src/server.cpp, src/jobs_execution.cpp) where the documentation is silent:

* SIMULATION_BEGINS comes alone at t = 0; then each message carries every event of one instant.
  At one instant, completions come before calls and calls before submissions (resources are
  free before new jobs are looked at). The submission of the workload's last job is followed,
  in the same message, by NOTIFY no_more_static_job_to_submit.
* A decision takes effect at its own timestamp, which may not be before the message's `now`
  (the past); a later one is held until then. A reply's `now` may not go back either; when it
  is later, the next message is not sent before it.
* EXECUTE_JOB: the job must be waiting (submitted, not started, not rejected), its allocation
  inside the machine and on free resources (no compute sharing). It runs for the profile's
  time on the allocation (platform.run_time_s); if that reaches its walltime, it is stopped at
  the walltime: JOB_COMPLETED with COMPLETED_WALLTIME_REACHED, return code -1. Otherwise the
  profile's `ret` gives COMPLETED_SUCCESSFULLY (0) or COMPLETED_FAILED.
* KILL_JOB: each job must have been started. A running one stops at once: JOB_COMPLETED with
  COMPLETED_KILLED (return code -1 for delay, -2 for parallel_homogeneous, as Batsim's), then one
  JOB_KILLED for all of them, with each really killed job's progress in [0, 1] under both
  "profile" (the documentation's key) and "profile_name" (what Batsim 4.2.1 writes).
* REJECT_JOB: the job must be waiting. CALL_ME_LATER: REQUESTED_CALL at that time.
  SET_JOB_METADATA: the job must exist; the string goes to the jobs file. NOTIFY from the
  scheduler is read and has no effect. REGISTER_JOB and REGISTER_PROFILE are refused: dynamic
  registration is disabled (config dynamic-jobs-enabled is false).
* The simulation ends, with SIMULATION_ENDS alone, when every job has been submitted and has
  finished or been rejected and no call is pending. Jobs left waiting with nothing else to
  happen are an error (Batsim would deadlock there).

Every decision that breaks a rule is one `ScheduleError` line naming the reply, the event and
the field; the run stops, and `records()` still gives every job as far as it got.
"""
from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

from experiments.batsim import protocol as p
from experiments.traces.intervals import format_intervals
from experiments.batsim.outputs import JobRecord, RunTimes
from experiments.batsim.platform import Platform, PlatformError, check_simulable, executors, run_time_s
from experiments.batsim.workload import ParallelHomogeneousProfile, Profile, Workload

# Kinds of what happens at an instant, in the order they are handled there (module docstring).
_FINISH, _DECIDE, _CALL, _SUBMIT = 0, 1, 2, 3
WAITING, RUNNING = "SUBMITTED", "RUNNING"


class ScheduleError(p.ProtocolError):
    """A decision that breaks Batsim's rules (unknown job, busy resources...), or a schedule that
    cannot go on: one line naming the reply, the event and the field."""


class Channel(Protocol):
    def exchange(self, text: str, label: str) -> bytes | str: ...


@dataclass
class _Job:
    """One job's life; the outputs' JobRecord is made from it."""

    spec: p.JobDescription
    state: str = "NOT_SUBMITTED"
    start_s: float | None = None
    finish_s: float | None = None
    run_s: float | None = None  # the profile's whole time on its allocation
    alloc: tuple[int, ...] = ()
    return_code: int | None = None
    metadata: str = ""


@dataclass
class Stats:
    """What the run cost: messages, events and wall time (scheduling: waiting for replies)."""

    messages: int = 0
    events_sent: int = 0
    decisions: int = 0
    scheduling_time_s: float = 0.0
    simulation_time_s: float = 0.0
    end_s: float = 0.0


@dataclass
class BatsimServer:
    """One simulated run of `workload` on `platform`, talking to a scheduler through `channel`.

    transcript: when given, each message and reply text is appended as ("to_scheduler"|"to_batsim", text).
    progress: called with (jobs done, jobs) whenever a job finishes or is rejected.
    """

    workload: Workload
    platform: Platform
    channel: Channel
    transcript: list[tuple[str, str]] | None = None
    progress: Callable[[int, int], None] | None = None
    stats: Stats = field(default_factory=Stats)
    needs_model: ClassVar[bool] = True  # every job's time comes from platform.run_time_s (live: measured)

    def __post_init__(self) -> None:
        if self.needs_model:
            check_simulable(self.workload.profiles, {j.profile: j.id for j in reversed(self.workload.jobs)})
        self._jobs = {j.id: _Job(j.description()) for j in self.workload.jobs}
        self._owner: list[str | None] = [None] * self.platform.size
        self._heap: list[tuple[float, int, int, object]] = []
        self._seq = 0
        self._outbox: list[p.Event] = []
        self._now = 0.0
        self._sched_now = 0.0
        self._unsubmitted = len(self.workload.jobs)
        self._done = 0
        self._active = 0  # jobs waiting or running
        for j in self.workload.jobs:
            self._push(j.subtime_s, _SUBMIT, j.id)

    # --- the loop ---------------------------------------------------------------------------------

    def _simulation_begins(self) -> None:
        """SIMULATION_BEGINS at time 0, and at once the end of submissions when there is no job."""
        begins = p.SimulationBegins(timestamp=0.0, resources=self.platform.resources(),
                                    workloads={self.workload.name: self.workload.path},
                                    profiles={self.workload.name: self.workload.profiles_json})
        self._exchange(p.Message(0.0, (begins,)))
        if not self.workload.jobs:
            self._outbox.append(p.Notify(timestamp=0.0, type="no_more_static_job_to_submit"))

    def run(self) -> Stats:
        """Play the whole simulation; raises ScheduleError, ProtocolError or the channel's SchedulerError."""
        t0 = time.perf_counter()
        try:
            self._simulation_begins()
            while True:
                if self._outbox:
                    events, self._outbox = tuple(self._outbox), []
                    self._exchange(p.Message(max(self._now, self._sched_now), events))
                    continue
                if self._finished():
                    break
                if not self._heap:
                    raise ScheduleError(self._stuck())
                self._now = max(self._heap[0][0], self._sched_now)
                while self._heap and self._heap[0][0] <= self._now:
                    t, kind, _, payload = heapq.heappop(self._heap)
                    self._happen(t, kind, payload)
            self._now = max(self._now, self._sched_now)
            self._exchange(p.Message(self._now, (p.SimulationEnds(timestamp=self._now),)), last=True)
        finally:
            self.stats.simulation_time_s = time.perf_counter() - t0
            self.stats.end_s = self._now
        return self.stats

    def _push(self, t: float, kind: int, payload: object) -> None:
        self._seq += 1
        heapq.heappush(self._heap, (t, kind, self._seq, payload))

    def _happen(self, t: float, kind: int, payload: object) -> None:
        if kind == _SUBMIT:
            job = self._jobs[payload]
            job.state = WAITING
            self._unsubmitted -= 1
            self._active += 1
            self._outbox.append(p.JobSubmitted(timestamp=t, job=job.spec))
            if self._unsubmitted == 0:
                self._outbox.append(p.Notify(timestamp=t, type="no_more_static_job_to_submit"))
        elif kind == _FINISH:
            self._complete(self._jobs[payload], t)
        elif kind == _CALL:
            self._outbox.append(p.RequestedCall(timestamp=t))
        else:
            where, decision = payload
            self._apply(decision, t, where)

    def _finished(self) -> bool:
        return self._unsubmitted == 0 and self._active == 0 and not self._heap and not self._outbox

    def _stuck(self) -> str:
        waiting = [i for i, j in self._jobs.items() if j.state == WAITING]
        return (f"after reply {self.stats.messages - 1} (t={self._now:g}): the scheduler left {len(waiting)} "
                f"job(s) waiting ({_first(waiting)}) with nothing running, no job left to submit and no call pending: "
                f"the simulation cannot advance")

    def _exchange(self, message: p.Message, *, last: bool = False) -> None:
        n = self.stats.messages
        kinds = ", ".join(dict.fromkeys(e.TYPE for e in message.events))
        label = f"message {n} (t={message.now:g}: {kinds})"
        text = p.encode(message)
        if self.transcript is not None:
            self.transcript.append(("to_scheduler", text))
        t0 = time.perf_counter()
        raw = self.channel.exchange(text, label)
        self.stats.scheduling_time_s += time.perf_counter() - t0
        self.stats.messages += 1
        self.stats.events_sent += len(message.events)
        if self.transcript is not None:
            self.transcript.append(("to_batsim", raw if isinstance(raw, str) else raw.decode("utf-8", "replace")))
        where = f"reply {n} (to t={message.now:g}: {kinds})"
        reply = p.decode(raw, direction="to_batsim", label=where, machine_size=self.platform.size)
        if reply.now < message.now:
            raise ScheduleError(f"{where}: now: {reply.now:g} is before the message's now {message.now:g} "
                                f"(a reply cannot go back in time)")
        self._sched_now = reply.now
        self.stats.decisions += len(reply.events)
        if last:
            return
        for k, decision in enumerate(reply.events):
            at = f"{where}: events[{k}] ({decision.TYPE})"
            if decision.timestamp < message.now:
                raise ScheduleError(f"{at}: timestamp: {decision.timestamp:g} is before now {message.now:g} "
                                    f"(a decision cannot change the past)")
            if decision.timestamp > message.now:
                self._push(decision.timestamp, _DECIDE, (at, decision))
            else:
                self._apply(decision, message.now, at)

    # --- decisions --------------------------------------------------------------------------------

    def _job(self, job_id: str, at: str, key: str = "data.job_id") -> _Job:
        job = self._jobs.get(job_id)
        if job is None:
            raise ScheduleError(f"{at}: {key}: unknown job {job_id!r} (not in workload {self.workload.name!r})")
        if job.state == "NOT_SUBMITTED":
            raise ScheduleError(f"{at}: {key}: job {job_id!r} has not been submitted yet "
                                f"(its subtime is {job.spec.subtime:g})")
        return job

    def _waiting(self, job_id: str, at: str) -> _Job:
        job = self._job(job_id, at)
        if job.state != WAITING:
            raise ScheduleError(f"{at}: data.job_id: job {job_id!r} is {job.state}, not waiting")
        return job

    def _apply(self, d: p.Event, t: float, at: str) -> None:
        if isinstance(d, p.ExecuteJob):
            self._execute(d, t, at)
        elif isinstance(d, p.RejectJob):
            job = self._waiting(d.job_id, at)
            job.state = "REJECTED"
            self._count_done()
        elif isinstance(d, p.KillJob):
            self._kill(d, t, at)
        elif isinstance(d, p.CallMeLater):
            self._push(d.at_s, _CALL, None)
        elif isinstance(d, p.SetJobMetadata):
            self._job(d.job_id, at).metadata = d.metadata
        elif isinstance(d, (p.RegisterJob, p.RegisterProfile)):
            raise ScheduleError(f"{at}: type: dynamic registration is disabled (config dynamic-jobs-enabled "
                                f"is false)")
        elif not isinstance(d, p.Notify):
            raise ScheduleError(f"{at}: type: {d.TYPE} is not carried out by this server")

    def _execute(self, d: p.ExecuteJob, t: float, at: str) -> None:
        job = self._waiting(d.job_id, at)
        busy = [(r, self._owner[r]) for r in d.alloc if self._owner[r] is not None]
        if busy:
            holders = ", ".join(f"{o} on {format_intervals(r for r, h in busy if h == o)}"
                                for o in dict.fromkeys(o for _, o in busy))
            raise ScheduleError(f"{at}: data.alloc: {format_intervals(d.alloc)!r} asks for busy resources "
                                f"({holders}); compute sharing is disabled")
        try:
            placed = executors(job.spec.res, d.alloc, d.mapping)
            run_s = self._model_run_s(self.workload.profiles[job.spec.profile], placed)
        except PlatformError as exc:
            raise ScheduleError(f"{at}: {exc}") from None
        for r in d.alloc:
            self._owner[r] = d.job_id
        job.state, job.start_s, job.run_s, job.alloc = RUNNING, t, run_s, d.alloc
        self._begin(job, t, placed)

    def _model_run_s(self, profile: Profile, placed: tuple[int, ...]) -> float:
        """The profile's simulated time on its executors `placed` (platform.run_time_s)."""
        return run_time_s(self.platform, profile, placed)

    def _begin(self, job: _Job, t: float, placed: tuple[int, ...]) -> None:
        """The job runs from `t` on its executors `placed`: here, its end is an event in simulated time."""
        wall = job.spec.walltime
        job.finish_s = t + (job.run_s if wall is None or job.run_s < wall else wall)
        self._push(job.finish_s, _FINISH, job.spec.id)

    def _stop(self, job: _Job) -> None:
        """A running job is killed: its end, due later, will not happen."""
        self._heap = [e for e in self._heap if not (e[1] == _FINISH and e[3] == job.spec.id)]  # rare: O(n) is fine
        heapq.heapify(self._heap)

    def _complete(self, job: _Job, t: float) -> None:
        wall = job.spec.walltime
        if wall is not None and job.run_s >= wall:
            job.state, job.return_code = "COMPLETED_WALLTIME_REACHED", -1
        else:
            job.return_code = self.workload.profiles[job.spec.profile].ret
            job.state = "COMPLETED_SUCCESSFULLY" if job.return_code == 0 else "COMPLETED_FAILED"
        self._release(job)
        self._outbox.append(p.JobCompleted(timestamp=t, job_id=job.spec.id, job_state=job.state,
                                           return_code=job.return_code, alloc=job.alloc))
        self._count_done()

    def _kill(self, d: p.KillJob, t: float, at: str) -> None:
        progress: dict[str, dict[str, object]] = {}
        for i, job_id in enumerate(d.job_ids):
            job = self._job(job_id, at, key=f"data.job_ids[{i}]")
            if job.state in (WAITING, "REJECTED"):
                raise ScheduleError(f"{at}: data.job_ids[{i}]: job {job_id!r} is {job.state}: only a started job "
                                    f"can be killed")
            if job.state != RUNNING:
                continue  # it finished before the kill: no progress, as Batsim does
            done = (t - job.start_s) / job.run_s if job.run_s else 1.0
            done = done if math.isfinite(done) else 0.0  # live, a nowlab profile with no stated time: unknown
            profile = self.workload.profiles[job.spec.profile]
            progress[job_id] = {"profile": job.spec.profile, "profile_name": job.spec.profile,
                                "progress": min(max(done, 0.0), 1.0)}
            job.state, job.finish_s = "COMPLETED_KILLED", t
            self._stop(job)
            job.return_code = -2 if isinstance(profile, ParallelHomogeneousProfile) else -1
            self._release(job)
            self._outbox.append(p.JobCompleted(timestamp=t, job_id=job_id, job_state=job.state,
                                               return_code=job.return_code, alloc=job.alloc))
            self._count_done()
        self._outbox.append(p.JobKilled(timestamp=t, job_ids=d.job_ids, job_progress=progress))

    def _release(self, job: _Job) -> None:
        for r in job.alloc:
            self._owner[r] = None

    def _count_done(self) -> None:
        self._done += 1
        self._active -= 1
        if self.progress is not None:
            self.progress(self._done, len(self._jobs))

    # --- results ----------------------------------------------------------------------------------

    def records(self) -> list[JobRecord]:
        """Every submitted job as far as the run got, by submit time (unsubmitted ones left out)."""
        out = []
        for job in self._jobs.values():
            if job.state == "NOT_SUBMITTED":
                continue
            s = job.spec
            out.append(JobRecord(id=s.id, profile=s.profile, submit_s=s.subtime, res=s.res, walltime_s=s.walltime,
                                 final_state=job.state, start_s=job.start_s,
                                 finish_s=job.finish_s if job.state.startswith("COMPLETED_") else None,
                                 alloc=job.alloc, return_code=job.return_code, metadata=job.metadata))
        return out

    def run_times(self) -> RunTimes:
        return RunTimes(machines=self.platform.size, end_s=self._now, scheduling_time_s=self.stats.scheduling_time_s,
                        simulation_time_s=self.stats.simulation_time_s)


def _first(items: Sequence[str], n: int = 5) -> str:
    return ", ".join(items[:n]) + (f" and {len(items) - n} more" if len(items) > n else "")


__all__ = ["BatsimServer", "Channel", "ScheduleError", "Stats"]
