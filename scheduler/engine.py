"""Discrete-event engine: replays a job stream through a policy on P processors.

A job's progress is the fraction of its work done; on p processors it
advances at 1/T(p) per second. A preemption request is acknowledged at the
first safe point (phase boundary k/phases) at or after the request, so a
job just started or just resized acknowledges at once; a job that reaches
the end of its work first simply finishes (and is not restarted). A resize
onto a different set pauses the job for its reconfig_cost seconds (it holds
the new set meanwhile, and a request during the pause is acknowledged when
it ends); a restart on the same set costs nothing. A job's `resize_cost`
function, when given, prices each resize by its old and new sets instead.

Two options bring a job closer to a live one (the replay of a live run sets
both): `startup` is a pause at its start (its mpiexec launching; it holds
its processors and makes no progress), and `work_first` makes it answer a
request no sooner than one phase after its start or its last resize (the
workloads look for requests only at the end of a phase). Without them a
job just started or resized acknowledges at once.

Processes do not vanish at once. A job's `teardown` keeps the processors it
finished on unusable for that long, and its `release` does the same for the
processors a shrinking resize gives up, or the resize's cost if longer (the
members that leave send their data first). The policy sees them free at once
(as a live scheduler does); a job started on them begins (and its start is
recorded) when the last of them is usable, and a growing resize pauses at
least until then. With both zero everywhere none of this is tracked.

DYN-EQUI's zero overhead: a policy with `zero_overhead` set gets every
preemption request acknowledged on the spot, mid-phase, and its resizes for
free; the engine then calls it again, with reason ACK, in the same instant,
so a re-partition takes no simulated time. The policy still speaks the
ordinary preempt / ack / resize protocol, which keeps it runnable live.

Rigid jobs (`Job.size`) start once on exactly their size and run to their end: the state
machine refuses any other start, and any preemption or resize of them. A job with a
requested `walltime` still running at start + walltime is killed there (a FINISH row, its
record COMPLETED_WALLTIME_REACHED), rigid or malleable, whatever it went through meanwhile.

The policy is called at every arrival, completion, acknowledgment and end of
a (non-zero) reconfiguration, except that `run_to_completion` policies are
not called while the queue is empty or no processor is free (they could do
nothing). Events at the same time are handled one at a time in the order
they were scheduled, finishes, acks and reconfigurations before arrivals.
The engine is deterministic: no randomness, no wall clock, no hashing of ids.

Speeds (optional): `speeds[i]` is workstation i's speed relative to the one
the models were profiled on. A job on set S then advances at
min(speeds[i] for i in S) / T(|S|) per second: a tightly coupled job runs at
its slowest member's pace (Menascé & Rao §3.3: a task starts only when its
slowest predecessor has finished, startdelay = max over pred). Policies still
see the profiled models (they know nothing of speeds, as live). Without
speeds every workstation runs at 1, exactly as before.

Availability (optional): `availability[i]` is the fraction of time workstation
i's owners leave to guests (1 - U_ow). Owners come and go independently, and a
tightly coupled job advances only while none of its members is held (its steps
are far shorter than an owner's burst), so on set S it runs at
prod(availability[i] for i in S) times its pace. Folding that into `speeds` as
a minimum under-predicted jobs spanning two owner workstations by 25-45%
(demo, 23 Nov 2026).

Owner schedule (optional, instead of availability): `schedule[i]` is workstation
i's availability over time, (time, fraction) steps, rising in time, a fraction in
(0, 1] holding until the next step (1 before the first). It is the owners' actual
bursts, rendered ahead from their seed, where `availability` is only their mean: a
live run that carries out the same schedule (testbed.load.caps) then meets the
same bursts at the same times, and a job that ran through one is predicted so. At
each step every job computing on that workstation is re-paced from that instant.

What a placing policy reads (`Snapshot.availability`, scheduler.selection.placement): with
speeds, availability or a schedule the engine shows each workstation's speed and its owners'
fraction now (the mean, or the schedule's current step); it models no links, so it gives no
bandwidth. Without any of the three every workstation is alike and it shows None.
"""
from __future__ import annotations

import gc
import heapq
import math
from collections.abc import Callable, Iterable, Sequence

from scheduler.actions import Preempt, Resize, Start
from scheduler.availability import Availability
from scheduler.model import Job
from scheduler.policy import Policy
from scheduler.registry import get_policy
from scheduler.results import SimResult, TimelineEvent
from scheduler.jobs import EventKind, JobStatus
from scheduler.snapshot import Reason, Snapshot
from scheduler.state_machine import PolicyError, SchedulerState, TrackedJob, check_jobs

__all__ = ["PolicyError", "Schedule", "check_jobs", "check_schedule", "check_speeds", "simulate"]

_heappush, _heappop = heapq.heappush, heapq.heappop
_FINISH, _ACK, _RECONF, _KILL = 0, 1, 2, 3
_PREEMPTING, _FINISHED = JobStatus.PREEMPTING, JobStatus.FINISHED
_E_ARRIVE, _E_START, _E_FINISH = EventKind.ARRIVE, EventKind.START, EventKind.FINISH
_E_PREEMPT_REQUEST, _E_ACK, _E_RESIZE = EventKind.PREEMPT_REQUEST, EventKind.ACK, EventKind.RESIZE
_ARRIVAL, _COMPLETION, _ACKED, _RECONFIGURED = Reason.ARRIVAL, Reason.COMPLETION, Reason.ACK, Reason.RECONFIGURED
_EPS = 1e-9
_MAX_ZERO_OVERHEAD_ROUNDS = 64

Schedule = Sequence[tuple[float, float]]  # (seconds, available fraction in (0, 1]) steps
Progress = Callable[[int, int], None]  # (jobs arrived so far, jobs in all)
PROGRESS_EVERY = 4096  # arrivals between two progress calls (a power of two: a mask tests it)
_PROGRESS_MASK = PROGRESS_EVERY - 1


class _Run(TrackedJob):
    """Engine-side job: the state machine's job plus progress bookkeeping."""

    __slots__ = ("phases", "cost", "x", "t0", "rate", "ver", "ack_x", "teardown", "release",
                 "cost_fn", "startup", "setup_work", "pause", "min_k", "work_first", "ack_pending",
                 "reconf_at")

    def __init__(self, job: Job, seq: int, P: int) -> None:
        TrackedJob.__init__(self, job.id, seq, job.arrival, job.model, P, job.size, job.walltime)
        self.phases = job.phases
        self.cost = job.reconfig_cost
        self.teardown = job.teardown
        self.release = job.release
        self.cost_fn = job.resize_cost
        self.startup = job.startup
        self.setup_work = job.setup_work
        self.pause = job.pause
        self.work_first = job.work_first
        self.min_k = 1 if job.work_first else 0  # first safe point (phase index) it can answer at
        self.x = 0.0  # progress at time t0
        self.t0 = 0.0
        self.rate = 0.0  # progress per second from t0 on
        self.ver = 0
        self.ack_x = 0.0
        self.ack_pending = False  # an ACK event is due (re-timed if its pace changes)
        self.reconf_at = -math.inf  # when its current reconfiguration pause ends


def simulate(jobs: Iterable[Job], policy: Policy | str, P: int, *, timeline: bool = True,
             speeds: Sequence[float] | None = None, availability: Sequence[float] | None = None,
             schedule: Sequence[Schedule] | None = None, progress: Progress | None = None) -> SimResult:
    """Run every job to completion under `policy` on workstations 0..P-1.

    `timeline=False` skips the event log (faster, for large studies).
    `speeds`: one relative speed per workstation; `availability`: one fraction in (0, 1]
    per workstation; `schedule`: one owner schedule per workstation, instead of
    `availability` (all three in the module docstring).
    `progress(arrived, total)`: called every PROGRESS_EVERY arrivals and once at the end, for a
    long run's progress bar.
    Raises ValueError for bad input and PolicyError if the policy breaks a
    rule or leaves jobs waiting with nothing left to happen.
    """
    if isinstance(policy, str):
        policy = get_policy(policy)
    if not isinstance(P, int) or P < 1:
        raise ValueError(f"P must be an integer >= 1, got {P!r}")
    if availability is not None and schedule is not None:
        raise ValueError("give availability (owners' means) or schedule (their bursts), not both")
    engine = _Engine(check_jobs(jobs, policy, P), policy, P, timeline, check_speeds(speeds, P),
                     check_speeds(availability, P, "availability", top=1.0), check_schedule(schedule, P))
    engine.progress = progress
    # The run makes no reference cycles but keeps every job alive, so the
    # cyclic collector would only rescan them, again and again: off meanwhile.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return engine.run()
    finally:
        if was_enabled:
            gc.enable()


def check_speeds(speeds: Sequence[float] | None, P: int, name: str = "speeds",
                 top: float = math.inf) -> tuple[float, ...] | None:
    """speeds as a tuple of P finite floats in (0, top] (None stays None)."""
    if speeds is None:
        return None
    try:
        out = tuple(float(s) for s in speeds)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a sequence of numbers, got {speeds!r}") from None
    if len(out) != P:
        raise ValueError(f"{name} must give one value per workstation: {len(out)} for P={P}")
    bad = [(i, s) for i, s in enumerate(out) if not (math.isfinite(s) and 0 < s <= top)]
    if bad:
        limit = "finite and > 0" if top == math.inf else f"in (0, {top:g}]"
        raise ValueError(f"{name} must be {limit}; {name}[{bad[0][0]}] = {bad[0][1]}")
    return out


def check_schedule(schedule: Sequence[Schedule] | None, P: int) -> list[tuple[float, int, float]] | None:
    """The schedule's steps as one list of (time, workstation, fraction), in time order."""
    if schedule is None:
        return None
    if len(schedule) != P:
        raise ValueError(f"schedule must give one per workstation: {len(schedule)} for P={P}")
    steps = []
    for i, sched in enumerate(schedule):
        last = -math.inf
        for t, f in sched:
            t, f = float(t), float(f)
            if not (math.isfinite(t) and t >= 0 and t > last):
                raise ValueError(f"schedule[{i}]: times must be finite, >= 0 and rising; got {t} after {last}")
            if not (math.isfinite(f) and 0 < f <= 1):
                raise ValueError(f"schedule[{i}]: fraction must be in (0, 1]; got {f} at {t} s")
            steps.append((t, i, f))
            last = t
    steps.sort()
    return steps


class _Engine(SchedulerState):
    """The state machine driven by simulated time: progress, pauses, safe points and events."""

    def __init__(self, jobs: list[Job], policy: Policy, P: int, record: bool,
                 speeds: tuple[float, ...] | None = None, availability: tuple[float, ...] | None = None,
                 steps: list[tuple[float, int, float]] | None = None) -> None:
        super().__init__(policy, P)
        self.jobs = jobs
        self.speeds = speeds
        self.avail = [1.0] * P if steps else availability
        self.steps = steps or []
        self.paced = speeds is not None or availability is not None or bool(steps)
        self.record = record
        self.log: list[TimelineEvent] = []
        self.heap: list[tuple[float, int, int, _Run, int]] = []
        self.tick = 0
        self.now = 0.0
        self.progress: Progress | None = None
        self.zero = policy.zero_overhead
        self.rtc = policy.run_to_completion
        self.decide = policy.decide
        self.snap = Snapshot(0.0, P, _ARRIVAL, None, self.free, self.running, self.preempting,
                             self.preempted, self.queue)
        if self.paced:
            self.snap.availability = self._availability()
        # When each processor is physically usable again (only if some job holds on after leaving it).
        self.ready = [0.0] * P if any(j.teardown > 0 or j.release > 0 for j in jobs) else None

    # -- bookkeeping -------------------------------------------------------
    def _speed(self, procs: Sequence[int]) -> float:
        """The slowest member's speed relative to the profile (owners aside)."""
        return min([self.speeds[p] for p in procs]) if self.speeds is not None else 1.0

    def _availability(self) -> Availability:
        """What the owners leave now and the speeds, as a placing policy reads them (no links)."""
        return Availability(tuple(self.avail) if self.avail is not None else (1.0,) * self.P, self.speeds)

    def _pace(self, procs: Sequence[int]) -> float:
        """A job's rate on `procs` relative to its profile: the slowest member's speed times
        the chance that no member's owner holds it (module docstring)."""
        pace = self._speed(procs)
        if self.avail is not None:
            for p in procs:
                pace *= self.avail[p]
        return pace

    def _push(self, t: float, kind: int, job: _Run) -> None:
        self.tick += 1
        _heappush(self.heap, (t, self.tick, kind, job, job.ver))


    # -- the policy call ---------------------------------------------------
    def _call(self, reason: Reason, subject: _Run | None) -> None:
        if self.rtc and not (self.queue and self.free):  # idle_for_policy(), inlined: every event comes here
            return
        snap = self.snap  # one object, refreshed per call: policies must not keep it
        snap.time = self.now
        snap.reason = reason
        snap.subject = subject
        snap.free_mask = self.free
        if not self.zero:
            actions = self.decide(snap)
            if actions:
                self._apply(actions)
            return
        for _ in range(_MAX_ZERO_OVERHEAD_ROUNDS):
            acked = self._apply(self.decide(snap))
            snap.free_mask = self.free
            if not acked:
                return
            snap.reason, snap.subject = _ACKED, acked[-1]
        raise PolicyError(f"policy {self.policy.name} kept preempting without settling")

    def _apply(self, actions) -> list[_Run]:
        acked: list[_Run] = []
        by_id = self.by_id
        for action in actions:
            job = by_id.get(action.job) or self.job_of(action)  # job_of names an unknown job
            if type(action) is Start:
                self._start(job, action.procs)
            elif type(action) is Preempt:
                if self._preempt(job):
                    acked.append(job)
            elif type(action) is Resize:
                self._resize(job, action.procs)
            else:
                raise PolicyError(f"{self.policy.name}: unknown action {action!r}")
        return acked

    def _start(self, job: _Run, procs: tuple[int, ...]) -> None:
        procs = self.start(job, procs)
        now = self.now
        ready = self.ready
        if ready is not None:  # the policy gave it processors whose last owner is still exiting
            now = max(now, max([ready[p] for p in procs]))
        job.start = job.t_area = job.t0 = now
        n = len(procs)
        T = job.model.T(n)
        if self.paced:
            T /= self._pace(procs)
        job.rate = 1.0 / T if T > 0 else math.inf  # a rigid job of run time 0 ends as it starts
        if job.pause is not None:
            pause = job.pause(n)
        else:
            pause = job.startup + job.setup_work / n if job.setup_work else job.startup
        if pause > 0:  # launching and setting up: no progress yet (slowed like the job, on its members)
            if self.steps:  # by their speeds only: a burst under way at the start is not its pace for long
                job.t0 = now + pause / self._speed(procs)
            else:
                job.t0 = now + pause * T / job.model.T(n)
        self.tick += 1
        _heappush(self.heap, (job.t0 + T, self.tick, _FINISH, job, job.ver))
        walltime = job.walltime
        if walltime is not None and (job.t0 + T > now + walltime or job.size is None or self.paced):
            # killed at start + walltime unless it has finished by then (a rigid job unslowed by
            # owners ends when it was just told to: only an overrun needs the event)
            self.tick += 1
            _heappush(self.heap, (now + walltime, self.tick, _KILL, job, job.ver))
        if self.record:
            self.log.append(TimelineEvent(now, job.id, _E_START, procs))

    def _preempt(self, job: _Run) -> bool:
        """Request a preemption; True if acknowledged on the spot (zero overhead)."""
        self.preempt(job)
        now = self.now
        if self.record:
            self.log.append(TimelineEvent(now, job.id, _E_PREEMPT_REQUEST, job.procs))
        dt = now - job.t0  # negative while a start-up or reconfiguration pause lasts
        x = job.x + dt * job.rate if dt > 0 else job.x
        if self.zero:
            self._ack(job, x)
            return True
        m = job.phases
        k = math.ceil(x * m - _EPS)
        if k < job.min_k:
            k = job.min_k
        if k < m:
            job.ack_x = k / m
            job.ack_pending = True
            t_ack = job.t0 + (job.ack_x - job.x) / job.rate
            self._push(t_ack if t_ack > now else now, _ACK, job)
        return False

    def _ack(self, job: _Run, x: float) -> None:
        self.ack(job)
        job.ack_pending = False
        job.x = x
        job.rate = 0.0
        job.ver += 1  # its finish event no longer holds
        if self.record:
            self.log.append(TimelineEvent(self.now, job.id, _E_ACK, job.procs))

    def _resize(self, job: _Run, procs: tuple[int, ...]) -> None:
        old_procs, old = job.procs, job.pmask
        now = self.now
        procs = self.resize(job, procs, now)
        new = job.pmask
        if new == old or self.zero:
            cost = 0.0
        elif job.cost_fn is not None:
            cost = job.cost_fn(old_procs, procs)
            if not (cost >= 0 and math.isfinite(cost)):
                raise ValueError(f"job {job.id}: resize_cost gave {cost} for {old_procs} -> {procs}")
        else:
            cost = job.cost
        ready = self.ready
        if ready is not None and new != old:
            added = new & ~old
            if added:  # grow: the new processors may still be held by their last owner
                cost = max(cost, max([ready[p] for p in procs if added >> p & 1]) - now)
            # a member that leaves sends its data first (the resize's cost), then exits
            shed = now + (job.release if job.release > cost else cost)
            for p in old_procs:
                if not new >> p & 1:
                    ready[p] = shed
        T = job.model.T(len(procs))
        if self.paced:
            T /= self._pace(procs)
        job.rate = rate = 1.0 / T
        job.t0 = t0 = now + cost
        if job.work_first:  # it runs a whole phase before its next safe point
            job.min_k = round(job.x * job.phases) + 1
        self.tick += 1
        _heappush(self.heap, (t0 + (1.0 - job.x) / rate, self.tick, _FINISH, job, job.ver))
        if cost > 0:
            job.reconf_at = t0
            self._push(t0, _RECONF, job)
        if self.record:
            self.log.append(TimelineEvent(now, job.id, _E_RESIZE, procs))

    def _finish(self, job: _Run) -> None:
        now = self.now
        job.x = 1.0
        job.ver += 1
        procs = self.finish(job, now)
        ready = self.ready
        if ready is not None:
            for p in procs:
                ready[p] = now + job.teardown
        if self.record:
            self.log.append(TimelineEvent(now, job.id, _E_FINISH, procs))

    def _step(self, p: int, fraction: float) -> None:
        """Workstation p's owners leave it `fraction` from now: re-pace every job computing there."""
        if self.avail[p] == fraction:
            return
        self.avail[p] = fraction
        self.snap.availability = self._availability()
        now = self.now
        for group in (self.running, self.preempting):
            for job in list(group.values()):
                if job.pmask >> p & 1 and job.rate > 0:
                    self._repace(job, now)

    def _repace(self, job: _Run, now: float) -> None:
        if now > job.t0:  # computing (not in a launch or reconfiguration pause): bank its progress
            job.x += (now - job.t0) * job.rate
            job.t0 = now
        T = job.model.T(len(job.procs))
        job.rate = rate = self._pace(job.procs) / T if T > 0 else math.inf
        job.ver += 1  # its pending events are re-timed below
        self._push(job.t0 + max(0.0, 1.0 - job.x) / rate, _FINISH, job)
        if job.ack_pending and job.status is _PREEMPTING:
            t_ack = job.t0 + (job.ack_x - job.x) / rate
            self._push(t_ack if t_ack > now else now, _ACK, job)
        if job.reconf_at > now:
            self._push(job.reconf_at, _RECONF, job)

    # -- the event loop ----------------------------------------------------
    def run(self) -> SimResult:
        jobs, P, heap = self.jobs, self.P, self.heap
        call, admit = self._call, self.admit
        heappop = _heappop
        record, log = self.record, self.log
        progress = self.progress
        arrivals = [job.arrival for job in jobs]
        arrivals.append(math.inf)
        nxt, n = 0, len(jobs)
        steps = self.steps
        steps.append((math.inf, -1, 1.0))
        si = 0
        while True:
            t_step = steps[si][0]
            if t_step <= arrivals[nxt] and (t_step <= heap[0][0] if heap else nxt < n):
                _, p, fraction = steps[si]
                si += 1
                self.now = t_step
                self._step(p, fraction)
                continue
            if heap and heap[0][0] <= arrivals[nxt]:
                t, _, kind, job, ver = heappop(heap)
                if ver != job.ver and kind != _KILL:  # a walltime holds whatever the job went through
                    continue
                self.now = t
                if kind == _FINISH:
                    self._finish(job)
                    call(_COMPLETION, job)
                elif kind == _ACK:
                    if job.status is _PREEMPTING:
                        self._ack(job, job.ack_x)
                        call(_ACKED, job)
                elif kind == _KILL:
                    if job.status is not _FINISHED:
                        job.killed = True
                        self._finish(job)
                        call(_COMPLETION, job)
                else:
                    call(_RECONFIGURED, job)
            elif nxt < n:
                spec = jobs[nxt]
                job = _Run(spec, nxt, P)
                nxt += 1
                self.now = spec.arrival
                admit(job)
                if record:
                    log.append(TimelineEvent(spec.arrival, job.id, _E_ARRIVE, ()))
                call(_ARRIVAL, job)
                if progress is not None and not nxt & _PROGRESS_MASK:
                    progress(nxt, n)
            else:
                break
        if progress is not None:
            progress(n, n)
        steps.pop()
        stuck = self.unfinished()
        if stuck:
            raise PolicyError(f"policy {self.policy.name} left {len(stuck)} job(s) unfinished with "
                              f"nothing left to happen (first: {stuck[0].id!r})")
        job_record = self.job_record
        return SimResult(self.policy.name, P, [job_record(r, type(r.model).__name__)
                                               for r in self.by_id.values()], self.log)
