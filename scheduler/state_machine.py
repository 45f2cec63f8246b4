"""The scheduler's state machine, shared by the simulator and the live executor.

A job goes queued -> running -> (preempting -> preempted -> running)* ->
finished. This module holds what both drivers must agree on: the free set,
the job tables, the queue in the policy's order, the checks on every Start,
Preempt and Resize a policy answers, the processor-seconds each job held,
and the per-job record. A rule is written here once.

What it leaves to its driver is time: the engine (`scheduler.engine`) adds
simulated progress, pauses and safe points; the live executor
(`scheduler.live.executor`) adds launches, control lines and measured times.
Both log their own timeline rows, because they log them at different moments
(the engine when it decides, the executor also when the job says so).

The methods are written for the engine's speed (it handles tens of
thousands of actions per second): bitmasks for processor sets, statuses
compared by identity, no per-call allocation beyond the tuples kept.
"""
from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from operator import attrgetter

from scheduler.model import Job, Model
from scheduler.policy import Policy
from scheduler.jobs import FinalState, JobRecord, JobStatus
from scheduler.snapshot import JobView

_QUEUED, _RUNNING, _FINISHED = JobStatus.QUEUED, JobStatus.RUNNING, JobStatus.FINISHED
_PREEMPTING, _PREEMPTED = JobStatus.PREEMPTING, JobStatus.PREEMPTED
_ARRIVAL_KEY = attrgetter("arrival")
_SUCCESS, _WALLTIME_REACHED = FinalState.COMPLETED_SUCCESSFULLY, FinalState.COMPLETED_WALLTIME_REACHED
_NO_WALLTIME = -1.0  # Batsim's requested_time for a job that asked for none


class PolicyError(RuntimeError):
    """A policy asked for something impossible (a bug in the policy)."""


class TrackedJob(JobView):
    """A job as the state machine keeps it: the policy's view plus its allocation history.

    `qkey` is its place in the queue (the policy's key, then arrival order);
    `pmask` the held set as a bitmask; `history` every set held, in order;
    `area` the processor-seconds held up to `t_area`; `npre` how many times
    it was asked to preempt. `start` and `finish` are set by the driver (the
    engine and the executor start the clock at different moments), and so is
    `killed` (it reached its requested walltime and was stopped there).
    """

    __slots__ = ("qkey", "pmask", "history", "finish", "area", "t_area", "npre", "killed")

    def __init__(self, id: int | str, seq: int, arrival: float, model: Model, P: int,
                 size: int | None = None, walltime: float | None = None) -> None:
        JobView.__init__(self, id, seq, arrival, model, P, size, walltime)
        self.qkey = ()
        self.pmask = 0
        self.history: list[tuple[int, ...]] = []
        self.finish = math.nan
        self.area = 0.0
        self.t_area = 0.0
        self.npre = 0
        self.killed = False


def check_jobs(jobs: Iterable[Job], policy: Policy, P: int | None = None) -> list[Job]:
    """Jobs sorted by arrival (stable), after checking the ids are unique, the models tell
    the policy what it needs and (given the machine's P) no rigid job is wider than it."""
    jobs = list(jobs)
    ids = set()
    needs = policy.needs
    enough: set[frozenset] = set()  # `knows` sets already checked: most jobs share one
    for job in jobs:
        if P is not None and job.size is not None and job.size > P:
            raise ValueError(f"job {job.id} asks for exactly {job.size} processors; the machine has P={P}")
        knows = job.model.knows
        if knows not in enough:
            missing = needs - knows
            if missing:
                what = ", ".join(sorted(k.value for k in missing))
                raise ValueError(f"policy {policy.name} needs {what}, but job {job.id} has no model "
                                 f"giving it (only {', '.join(sorted(k.value for k in knows))})")
            enough.add(knows)
        ids.add(job.id)
    if len(ids) != len(jobs):
        seen = set()
        for job in jobs:
            if job.id in seen:
                raise ValueError(f"duplicate job id {job.id!r}")
            seen.add(job.id)
    return sorted(jobs, key=_ARRIVAL_KEY)


class SchedulerState:
    """The free set, the job tables and the queue, changed only through the checked transitions.

    `free` has bit i set iff workstation i is held by no job. `running`,
    `preempting` and `preempted` map a job's seq to the job; `queue` is in
    the policy's queue order, with `qkeys` beside it for bisection. These are
    exactly what a `Snapshot` shows the policy.
    """

    def __init__(self, policy: Policy, P: int) -> None:
        self.policy = policy
        self.P = P
        self.free = (1 << P) - 1
        self.running: dict[int, TrackedJob] = {}
        self.preempting: dict[int, TrackedJob] = {}
        self.preempted: dict[int, TrackedJob] = {}
        self.queue: list[TrackedJob] = []
        self.qkeys: list[tuple] = []
        self.by_id: dict[object, TrackedJob] = {}
        self.now = 0.0  # the driver's clock (simulated or measured seconds): the rules' errors name it

    # -- arrivals and lookups ------------------------------------------------
    def admit(self, job: TrackedJob) -> None:
        """A job arrives: it joins the queue in the policy's order (ties by arrival)."""
        self.by_id[job.id] = job
        k = job.qkey = (self.policy.queue_key(job), job.seq)
        qkeys = self.qkeys
        if not qkeys or k > qkeys[-1]:
            qkeys.append(k)
            self.queue.append(job)
        else:
            i = bisect_right(qkeys, k)
            qkeys.insert(i, k)
            self.queue.insert(i, job)

    def job_of(self, action) -> TrackedJob:
        try:
            return self.by_id[action.job]
        except KeyError:
            raise PolicyError(f"{self.policy.name}: unknown job {action.job!r}") from None

    def idle_for_policy(self) -> bool:
        """A run-to-completion policy can do nothing now: skip its call (both drivers do)."""
        return self.policy.run_to_completion and not (self.queue and self.free)

    # -- the checks ----------------------------------------------------------
    def _mask(self, job: TrackedJob, procs) -> int:
        """`procs` as a bitmask, after checking it is 1..pmax distinct workstation ids."""
        n = len(procs)
        m = 0
        if 1 <= n <= job.pmax:
            try:
                for p in procs:
                    m |= 1 << p
            except (TypeError, ValueError):  # not an int, or negative
                m = 0
            if m.bit_count() == n and not m >> self.P:
                return m
        raise PolicyError(f"{self.policy.name}: job {job.id} given processors {tuple(procs)} "
                          f"(allowed 1..{job.pmax} distinct ids below {self.P})")

    def _refuse(self, what: str, job: TrackedJob) -> PolicyError:
        return PolicyError(f"{self.policy.name}: {what} of job {job.id} which is {job.status.value}")

    def _rigid(self, rule: str, did: str, job: TrackedJob) -> PolicyError:
        """A rigid job's rule broken: one line naming the rule, the policy, the job and the time."""
        return PolicyError(f"rule '{rule}': policy {self.policy.name} {did} at t={round(self.now, 3)} s; "
                           f"job {job.id} is rigid: it asks for exactly {job.size} and runs to its end")

    # -- the transitions -----------------------------------------------------
    def start(self, job: TrackedJob, procs) -> tuple[int, ...]:
        """Queued -> running on `procs` (which must be free). Returns the set as a sorted tuple."""
        if job.status is not _QUEUED:
            raise self._refuse("start", job)
        if job.size is not None and len(procs) != job.size:
            raise PolicyError(f"rule 'rigid size': policy {self.policy.name} started job {job.id} on "
                              f"{len(procs)} processors at t={round(self.now, 3)} s; it asks for exactly {job.size}")
        m = 0
        try:  # _mask's fast path, inlined: the engine starts every job here
            for p in procs:
                m |= 1 << p
        except (TypeError, ValueError):
            m = -1
        if m < 0 or not 1 <= len(procs) <= job.pmax or m.bit_count() != len(procs) or m >> self.P:
            m = self._mask(job, procs)  # raises, naming the rule
        if self.free & m != m:
            raise PolicyError(f"{self.policy.name}: job {job.id} started on busy processors {tuple(procs)}")
        self.free ^= m
        queue, qkeys = self.queue, self.qkeys
        i = 0 if queue[0] is job else bisect_left(qkeys, job.qkey)
        del qkeys[i]
        del queue[i]
        if len(procs) > 1:
            procs = tuple(sorted(procs))
        elif type(procs) is not tuple:
            procs = tuple(procs)
        job.status = _RUNNING
        job.procs = procs
        job.pmask = m
        job.history.append(procs)
        self.running[job.seq] = job
        return procs

    def preempt(self, job: TrackedJob) -> None:
        """Running -> preempting: asked to stop at its next safe point."""
        if job.size is not None:
            raise self._rigid("rigid: no preemption", f"asked job {job.id} to preempt", job)
        if job.status is not _RUNNING:
            raise self._refuse("preempt", job)
        del self.running[job.seq]
        job.npre += 1
        job.status = _PREEMPTING
        self.preempting[job.seq] = job

    def ack(self, job: TrackedJob) -> None:
        """Preempting -> preempted: it reached a safe point and holds its set, idle, until resized."""
        if job.status is not _PREEMPTING:
            raise RuntimeError(f"job {job.id} acknowledged a preemption it was not asked for")
        del self.preempting[job.seq]
        job.status = _PREEMPTED
        self.preempted[job.seq] = job

    def resize(self, job: TrackedJob, procs, now: float) -> tuple[int, ...]:
        """Preempted -> running on `procs`: new ⊇ old or old ⊇ new, added processors free.
        The processors shed are free at once (as the policy sees it). Returns the set, sorted."""
        if job.size is not None:
            raise self._rigid("rigid: no resize", f"resized job {job.id} to {len(procs)} processors", job)
        if job.status is not _PREEMPTED:
            raise self._refuse("resize", job)
        new = self._mask(job, procs)
        old = job.pmask
        common = old & new
        if common != old and common != new:
            raise PolicyError(f"{self.policy.name}: resize of job {job.id} from {job.procs} to "
                              f"{tuple(procs)} breaks the subset restriction")
        added = new & ~old
        free = self.free
        if free & added != added:
            raise PolicyError(f"{self.policy.name}: job {job.id} resized onto busy processors {tuple(procs)}")
        self.free = (free & ~added) | (old & ~new)
        del self.preempted[job.seq]
        job.area += len(job.procs) * (now - job.t_area)
        job.t_area = now
        job.procs = procs = tuple(sorted(procs))
        job.pmask = new
        job.history.append(procs)
        job.status = _RUNNING
        self.running[job.seq] = job
        return procs

    def finish(self, job: TrackedJob, now: float) -> tuple[int, ...]:
        """Any started status -> finished at `now` (done, or failed live): its set is freed.
        Returns the set it released."""
        status = job.status
        if status is _RUNNING:
            del self.running[job.seq]
        elif status is _PREEMPTING:
            del self.preempting[job.seq]
        elif status is _PREEMPTED:
            del self.preempted[job.seq]
        else:
            raise self._refuse("finish", job)
        procs = job.procs
        job.status = _FINISHED
        job.finish = now
        job.area += len(procs) * (now - job.t_area)
        self.free |= job.pmask
        job.pmask = 0
        job.procs = ()
        return procs

    # -- records -------------------------------------------------------------
    def unfinished(self) -> list[TrackedJob]:
        return [job for job in self.by_id.values() if job.status is not _FINISHED]

    @staticmethod
    def job_record(job: TrackedJob, profile: str) -> JobRecord:
        """The job's outcome: the mean partition is its processor-seconds over its execution
        time (the size it started with if that time is zero)."""
        execution = job.finish - job.start
        if execution > 0:
            mean = job.area / execution
        else:
            mean = float(len(job.history[0])) if job.history else 0.0
        return JobRecord(job.id, job.arrival, job.start, job.finish, job.npre, mean,
                         tuple(job.history), job.pmax, profile,
                         _NO_WALLTIME if job.walltime is None else job.walltime,
                         _WALLTIME_REACHED if job.killed else _SUCCESS)
