"""The live executor: an arrival stream, a policy and a real cluster.

The policy is the same pure object the engine drives; this is only the
backend. Events come from the wall clock (arrivals) and from the jobs'
control channels (ack, restored, done) and their mpiexec exits. At each
event the executor builds a Snapshot, times `policy.decide`, checks each
action as the engine does, and carries it out:

  Start   launch mpiexec on the workstations (processor i is the i-th
          workstation of the spec; hosts go to mpiexec lowest-numbered first)
  Preempt send `preempt` (held until the current launch says hello)
  Resize  send `partition`; unless the set is unchanged the job checkpoints
          or redistributes, exits, and is relaunched with --resume

The policy's view changes at once (as in the engine); the physical view
follows: a launch waits until every workstation it needs is free of other
mpiexecs (a shrinking job still redistributing, a finished job's mpiexec
still exiting), so two jobs never share a workstation.

Timeline rows (the engine's format) carry measured times, seconds since the
run started: arrive (scheduled arrival), start (first mpiexec launched),
preempt_request (preempt line sent; for a job still launching that is when
it said hello, after the decision), ack (ack received), resize (decision,
partition sent), finish (done received, or the exit of a failed job). Policy calls:
ARRIVAL, ACK, RECONFIGURED (a relaunched job reported restored) and
COMPLETION (done, or a failure: the job leaves the system).

Rigid jobs (an `Arrival` with a `size`, its class `rigid`) start once, through the same
launcher, with exactly their size (the state machine's rule, shared with the engine: a policy
that starts one on another size, preempts or resizes it gets the same one-line error here).
Their command runs as given with no control channel: a clean exit is the end of the job, any
other exit a failure. A `python3 -m` program goes to the resident pool when the launcher has one,
anything else to mpiexec; each job's launch path and measured launch cost (`JobState.launch_via`,
`launch_s`) are recorded. A rigid job with `walltime_s` still running at start + walltime_s is
terminated then (mpiexec's SIGTERM, or the pool's cancel) and recorded COMPLETED_WALLTIME_REACHED
(its FINISH row and its processors' release at the exit, when they really come back).

`availability`, when given, is called before each policy call for what the owners and the
traffic leave now (processor i = hosts[i]; the caller reads the monitor, this module does not
import the testbed) and shown to the policy as `Snapshot.availability`; None means not known.
"""
from __future__ import annotations

import math
import queue
import threading
import time
import uuid
from collections import deque
from typing import Callable, Sequence

from scheduler.actions import Preempt, Resize, Start
from scheduler.availability import Availability
from scheduler.jobs import EventKind, JobRecord, JobStatus, Outcome
from scheduler.live.channel import Event, Launch
from scheduler.live.result import Decision, JobState, LiveResult, PhysicalRun
from scheduler.live.stream import Arrival
from scheduler.model import Job
from scheduler.policy import Policy
from scheduler.registry import get_policy
from scheduler.results import TimelineEvent
from scheduler.snapshot import Reason, Snapshot
from scheduler.state_machine import PolicyError, SchedulerState, TrackedJob, check_jobs
from workloads import channel_auth
from workloads.host.control_server import ControlServer
from workloads.host.launch import OUT_OF_MEMORY, Launcher
from workloads.host.records import ResizeRecord
from workloads.redistribution_plan import resize_kind

Progress = Callable[[str, int, int], None]  # (what happened, jobs finished, jobs in all)
OnFinish = Callable[[JobRecord, JobState], None]  # a job left the system (done or failed)
AvailabilityProvider = Callable[[], Availability | None]  # now, by processor id; None: not known


class Stopped(RuntimeError):
    """The run was stopped from outside (`stop` set): finished jobs were reported, the rest were killed."""


def _quiet(_what: str, _done: int, _total: int) -> None:
    return None


def check_arrivals(arrivals: Sequence[Arrival], policy: Policy, P: int | None = None) -> None:
    """ValueError unless the ids are unique, the models tell the policy what it needs and (given
    the cluster's P) no rigid job is wider than it."""
    check_jobs([a.job() for a in arrivals], policy, P)


class _Job(TrackedJob):
    """Executor-side job: the state machine's job plus what is going on physically."""

    __slots__ = ("cls", "key", "launches", "pending", "leaving", "outbox", "failed", "error", "done", "request", "reconf",
                 "resizes", "delay_s", "launch_via", "launch_s")

    def __init__(self, arrival: Arrival, seq: int, P: int, key: str) -> None:
        super().__init__(arrival.id, seq, arrival.arrival, arrival.job_class.model, P, arrival.size, arrival.walltime_s)
        self.cls = arrival.job_class
        self.key = key
        self.launches: list[Launch] = []
        self.pending: Launch | None = None  # decided, waiting for its workstations
        self.leaving: Launch | None = None  # told to release its workstations for a relaunch
        self.outbox: list[dict] = []  # control lines for the next launch to say hello
        self.failed = False
        self.error = ""
        self.done: dict = {}
        self.request: ResizeRecord | None = None  # a preemption asked for, not yet answered by a partition
        self.reconf: ResizeRecord | None = None  # partition sent, job not yet running again
        self.resizes: list[ResizeRecord] = []
        self.delay_s = 0.0  # seconds of the overhead knob waited before its launches
        self.launch_via = ""  # a rigid job's launch path: pool or mpiexec
        self.launch_s = math.nan  # a rigid job's launch cost, measured (NaN: its program said no start)

    @property
    def current(self) -> Launch | None:
        return self.launches[-1] if self.launches else None


class LiveExecutor:
    """Run `arrivals` under `policy` on `hosts` (processor i = hosts[i]) through `launcher`."""

    def __init__(self, arrivals: Sequence[Arrival], policy: Policy | str, launcher: Launcher,
                 hosts: Sequence[str], controller_host: str, *, env: dict[str, str] | None = None,
                 connect_timeout_s: float = 120.0, job_timeout_s: float = 1800.0,
                 run_timeout_s: float | None = None, progress: Progress = _quiet, tag: str | None = None,
                 on_finish: OnFinish | None = None, stop: threading.Event | None = None,
                 launch_delay_s: float = 0.0, resize_delay_s: float = 0.0,
                 availability: AvailabilityProvider | None = None,
                 allowed_networks: Sequence[str] | None = None) -> None:
        for name, value in (("launch_delay_s", launch_delay_s), ("resize_delay_s", resize_delay_s)):
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a finite number of seconds >= 0, got {value}")
        # The overhead knob: a slower system's costs, waited out before each launch / relaunch.
        self.launch_delay_s = float(launch_delay_s)
        self.resize_delay_s = float(resize_delay_s)
        self.policy = get_policy(policy) if isinstance(policy, str) else policy
        if not hosts or len(set(hosts)) != len(hosts):
            raise ValueError(f"hosts must be distinct workstation names, got {list(hosts)}")
        self.hosts = list(hosts)
        self.P = len(self.hosts)
        check_arrivals(arrivals, self.policy, self.P)
        self.arrivals = sorted(arrivals, key=lambda a: a.arrival)
        self.launcher = launcher
        self.controller_host = controller_host  # the control server listens here only (never 0.0.0.0)
        self.allowed_networks = allowed_networks  # peers outside these are refused (None: any that has the secret)
        self.env = env
        self.control_refused = 0  # connections the control server refused (bad secret, silent, outside)
        self.connect_timeout_s = connect_timeout_s
        self.job_timeout_s = job_timeout_s
        self.run_timeout_s = run_timeout_s
        self.progress = progress
        self.tag = tag or f"live-{uuid.uuid4().hex[:8]}"
        self.on_finish = on_finish  # called as each job leaves, so a caller can store it at once
        self.stop = stop  # set from another thread: the loop raises Stopped within a second
        self.availability = availability
        self.state = SchedulerState(self.policy, self.P)  # what the policy sees, as in the engine
        self.jobs: list[_Job] = []
        # physical state
        self.occupant: dict[str, Launch] = {}
        self.waiting: list[Launch] = []
        self.delayed: list[tuple[float, Launch]] = []  # (monotonic time due, launch): workstations held, knob delay
        self.kills: list[tuple[float, Launch]] = []  # (monotonic time due, launch): rigid jobs' walltimes
        self.runs: list[PhysicalRun] = []
        # records
        self.timeline: list[TimelineEvent] = []
        self.decisions: list[Decision] = []
        self.events: "queue.Queue[Event]" = queue.Queue()
        self.t0 = 0.0
        self.n_done = 0

    # -- clock ----------------------------------------------------------------
    def _rel(self, at: float) -> float:
        return at - self.t0

    def _log(self, t: float, job: _Job, event: EventKind, procs: tuple[int, ...]) -> None:
        self.timeline.append(TimelineEvent(t, job.id, event, procs))

    # -- the run --------------------------------------------------------------
    def run(self) -> LiveResult:
        secret = channel_auth.new_secret()  # this run's: only its jobs can speak on its channel
        with ControlServer(self.controller_host, secret=secret, allowed_networks=self.allowed_networks) as server:
            self.server = server
            self.control = f"{self.controller_host}:{server.port}"
            self.job_env = {**(self.env or {}), **channel_auth.secret_env(secret)}
            try:
                self._loop()
            finally:
                for job in self.jobs:
                    for launch in job.launches:
                        launch.terminate()
                self.control_refused = server.refused
        return self._result()

    def _loop(self) -> None:
        n = len(self.arrivals)
        nxt = 0
        held: deque[Event] = deque()
        self.t0 = time.monotonic()
        deadline = math.inf if self.run_timeout_s is None else self.t0 + self.run_timeout_s
        self.progress("started", 0, n)
        while self.n_done < n:
            if self.stop is not None and self.stop.is_set():
                raise Stopped(f"stopped with {n - self.n_done} of {n} job(s) unfinished")
            due = self.t0 + self.arrivals[nxt].arrival if nxt < n else math.inf
            if held:
                event = held.popleft()
            else:
                self._start_delayed()
                self._kill_due()
                soon = min((at for at, _ in (*self.delayed, *self.kills)), default=math.inf)
                wait = min(due, deadline, soon, time.monotonic() + 1.0) - time.monotonic()
                try:
                    event = self.events.get(timeout=max(wait, 0.0))
                except queue.Empty:
                    event = None
            if event is not None and event.at > due:
                held.appendleft(event)  # the arrival came first
                event = None
            if event is None:
                now = time.monotonic()
                if nxt < n and now >= due:
                    self._arrive(self.arrivals[nxt], nxt)
                    nxt += 1
                elif now > deadline:
                    raise TimeoutError(f"run still going after {self.run_timeout_s:g} s: "
                                       f"{n - self.n_done} job(s) unfinished")
                continue
            self._handle(event)
        self._drain(deadline)

    def _drain(self, deadline: float, grace_s: float = 30.0) -> None:
        """Every job is done: wait for the mpiexecs still exiting, so `runs` is complete and the
        workstations are really free when run() returns (a next run may use them at once)."""
        until = min(deadline, time.monotonic() + grace_s)
        while any(h in self.occupant for h in self.hosts) and time.monotonic() < until:
            if self.stop is not None and self.stop.is_set():
                return
            self._start_delayed()
            self._kill_due()
            try:
                event = self.events.get(timeout=max(0.0, min(until - time.monotonic(), 1.0)))
            except queue.Empty:
                continue
            if event.kind == "exited":
                self._handle(event)

    # -- events ---------------------------------------------------------------
    def _arrive(self, arrival: Arrival, seq: int) -> None:
        job = _Job(arrival, seq, self.P, f"{self.tag}-{arrival.id}")
        self.jobs.append(job)
        self.state.admit(job)
        self._log(arrival.arrival, job, EventKind.ARRIVE, ())
        self.progress(f"job {job.id} arrived", self.n_done, len(self.arrivals))
        self._call(Reason.ARRIVAL, job, arrival.arrival)

    def _handle(self, ev: Event) -> None:
        launch, job = ev.launch, ev.launch.job
        t = self._rel(ev.at)
        kind = ev.kind
        if kind == "hello":
            if launch is job.current:
                for message in job.outbox:
                    sent = launch.send(message)
                    if sent is None:  # the job already ended; its done or exit event follows
                        break
                    if message["type"] == "preempt" and job.request is not None:
                        job.request.sent_at = self._rel(sent)
                        self._log(job.request.sent_at, job, EventKind.PREEMPT_REQUEST, job.request.from_procs)
                else:
                    job.outbox.clear()
        elif kind == "ack":
            self.state.ack(job)
            job.request.ack_at = t
            job.request.iteration = int(ev.message.get("iteration", -1))
            self._log(t, job, EventKind.ACK, job.procs)
            self._call(Reason.ACK, job, t)
        elif kind == "released":
            r = job.reconf
            if r is not None:
                r.released_at = t
                r.add_report(ev.message)
                if not ev.message.get("exit", True):  # same set: running again already
                    r.running_at = t
                    self._resize_done(job)
        elif kind == "restored":
            r = job.reconf
            if r is not None:
                r.running_at = t
                r.add_report(ev.message)
                self._resize_done(job)
            self._call(Reason.RECONFIGURED, job, t)
        elif kind == "done":
            job.done = ev.message
            if job.request is not None:  # the job ended before its next safe point
                if job.request.sent_at is None:  # or even before the request could reach it
                    self._log(job.request.requested_at, job, EventKind.PREEMPT_REQUEST, job.request.from_procs)
                    job.outbox.clear()
                job.request.outcome = "finished first"
                job.resizes.append(job.request)
                job.request = None
            self._finish(job, t)
        elif kind in ("error", "no_connect"):
            job.error = str(ev.message.get("error") or ev.message)[:500]
        elif kind == "exited":
            self._exited(launch, job, t, ev)
        else:
            raise RuntimeError(f"unknown event {kind!r}")

    def _resize_done(self, job: _Job) -> None:
        job.resizes.append(job.reconf)
        job.reconf = None

    def _exited(self, launch: Launch, job: _Job, t: float, ev: Event) -> None:
        for host in launch.hosts:
            if self.occupant.get(host) is launch:
                del self.occupant[host]
        self.runs.append(PhysicalRun(job.id, launch.number, tuple(launch.hosts), self._rel(launch.launched_at),
                                     t, ev.exit_code if ev.exit_code is not None else -1,
                                     self._rel(launch.hello_at)))
        if launch.rigid:
            self._rigid_exited(launch, job, t, ev)
            return
        clean = ev.exit_code == 0
        leaving = launch is job.leaving
        if leaving:
            job.leaving = None
            if job.reconf is not None:
                job.reconf.exited_at = t
        if job.status is not JobStatus.FINISHED and not (clean and leaving):
            job.failed = True
            memory = memory_reason(ev.output)
            if memory:  # the cause, over whatever the channel saw of the rank's death
                job.error = memory
            elif not job.error:
                job.error = f"mpiexec exited {ev.exit_code} without finishing: {ev.output.strip()[-300:]}"
            if job.pending is not None and job.pending in self.waiting:
                self.waiting.remove(job.pending)
            job.pending = None
            self._finish(job, t)
        elif job.status is JobStatus.FINISHED and not clean and not job.failed:
            job.error = f"mpiexec exited {ev.exit_code} after done: {ev.output.strip()[-300:]}"
        launch.release()
        if job.status is JobStatus.FINISHED and job.current is launch:
            self.server.forget(job.key)
        self._launch_waiting()

    def _rigid_exited(self, launch: Launch, job: _Job, t: float, ev: Event) -> None:
        """A rigid job's one mpiexec (or pool run) ended: done, killed at its walltime, or failed."""
        self.kills = [(at, k) for at, k in self.kills if k is not launch]
        job.launch_via = str(ev.message.get("via", ""))
        job.launch_s = float(ev.message.get("launch_s", math.nan))
        job.done = {"stdout": ev.message.get("stdout", "")}
        if job.killed and ev.exit_code == 0:
            job.killed = False  # its program ended on its own before the kill reached it (its exit was under way)
        if job.killed:
            pass  # stopped at its walltime: its exit code is the kill's
        elif ev.exit_code != 0:
            job.failed = True
            memory = memory_reason(ev.output)
            job.error = memory or f"exited {ev.exit_code}: {ev.output.strip()[-300:]}"
        launch.release()
        self._finish(job, t)
        self._launch_waiting()

    def _kill_due(self) -> None:
        """Terminate every rigid job whose start + walltime has come."""
        now = time.monotonic()
        due = [launch for at, launch in self.kills if at <= now]
        if due:
            self.kills = [(at, launch) for at, launch in self.kills if at > now]
            for launch in due:
                launch.job.killed = True  # unless it exits cleanly all the same (_rigid_exited)
                launch.terminate()
                self.progress(f"job {launch.job.id} killed at its walltime", self.n_done, len(self.arrivals))

    def _finish(self, job: _Job, t: float) -> None:
        if job.status is JobStatus.FINISHED:
            return
        if job.outbox and job.request is not None:  # a request that never reached the job
            self._log(job.request.requested_at, job, EventKind.PREEMPT_REQUEST, job.request.from_procs)
            job.outbox.clear()
        self._log(t, job, EventKind.FINISH, self.state.finish(job, t))
        self.n_done += 1
        what = "failed" if job.failed else "finished"
        if self.on_finish is not None:
            self.on_finish(*self._record(job))
        self.progress(f"job {job.id} {what}", self.n_done, len(self.arrivals))
        self._call(Reason.COMPLETION, job, t)

    # -- the policy call ------------------------------------------------------
    def _call(self, reason: Reason, subject: _Job, t: float) -> None:
        state = self.state
        if state.idle_for_policy():
            return
        snap = Snapshot(t, self.P, reason, subject, state.free, state.running, state.preempting,
                        state.preempted, state.queue, self.availability() if self.availability else None)
        seen = Decision.state_of(snap)
        t_a = time.perf_counter_ns()
        actions = self.policy.decide(snap)
        t_b = time.perf_counter_ns()
        self.decisions.append(Decision(t, reason.value, subject.id, seen, tuple(actions), (t_b - t_a) / 1e9))
        state.now = t  # the rules' errors name the time of the call they broke
        for action in actions:
            self._apply(action, t)

    def _apply(self, action, t: float) -> None:
        """Carry out one action: the state machine checks and records it, then the cluster follows."""
        job = self.state.job_of(action)
        if type(action) is Start:
            procs = self.state.start(job, action.procs)
            self._queue_launch(job, procs, resume=False)
        elif type(action) is Preempt:
            self.state.preempt(job)
            self._request_preemption(job, t)
        elif type(action) is Resize:
            old_hosts = [self.hosts[p] for p in job.procs]
            procs = self.state.resize(job, action.procs, t)
            self._repartition(job, old_hosts, procs, t)
        else:
            raise PolicyError(f"{self.policy.name}: unknown action {action!r}")

    def _request_preemption(self, job: _Job, t: float) -> None:
        """Send `preempt` now, or when the job's next mpiexec says hello."""
        job.request = ResizeRecord(job.id, requested_at=t, from_procs=job.procs,
                                   from_hosts=tuple(self.hosts[p] for p in job.procs))
        launch = job.current
        sent = None
        if job.pending is None and job.leaving is None and launch is not None and launch.conn is not None:
            sent = launch.send({"type": "preempt"})
        if sent is not None:
            job.request.sent_at = self._rel(sent)
            self._log(job.request.sent_at, job, EventKind.PREEMPT_REQUEST, job.procs)
        else:  # launching or relaunching: sent when the new mpiexec says hello (or never: it ended)
            job.outbox.append({"type": "preempt"})

    def _repartition(self, job: _Job, old_hosts: list[str], procs: tuple[int, ...], t: float) -> None:
        """Send `partition`; unless the set is unchanged, relaunch once the old mpiexec has left."""
        new_hosts = [self.hosts[p] for p in procs]
        kind = resize_kind(old_hosts, new_hosts)
        r = job.reconf = job.request
        job.request = None
        r.to_procs, r.to_hosts, r.kind, r.partition_at = procs, tuple(new_hosts), kind, t
        if job.current.send({"type": "partition", "hosts": new_hosts}) is None:
            job.error = "channel closed before the partition could be sent"  # its exit event fails it
        self._log(t, job, EventKind.RESIZE, procs)
        if kind != "same":
            job.leaving = job.current
            self._queue_launch(job, procs, resume=True)

    # -- launching ------------------------------------------------------------
    def _queue_launch(self, job: _Job, procs: tuple[int, ...], *, resume: bool) -> None:
        launch = Launch(job, job.key, len(job.launches), [self.hosts[p] for p in procs], resume, job.cls.rigid)
        job.pending = launch
        self.waiting.append(launch)
        self._launch_waiting()

    def _launch_waiting(self) -> None:
        """Start every waiting launch whose workstations no other mpiexec holds (in decision order)."""
        for launch in list(self.waiting):
            job = launch.job
            if job.leaving is not None:
                continue  # its own previous mpiexec is still releasing
            if any(h in self.occupant for h in launch.hosts):
                continue
            self.waiting.remove(launch)
            for h in launch.hosts:
                self.occupant[h] = launch
            delay = self.resize_delay_s if launch.resume else self.launch_delay_s
            if delay > 0:  # the knob: the workstations are held meanwhile, as by a slow launch
                now = time.monotonic()
                self.delayed.append((now + delay, launch))
                job.delay_s += delay
                if not launch.resume:  # the job has started: the delay is part of its launch, as in the engine
                    job.start = job.t_area = self._rel(now)
                    self._log(job.start, job, EventKind.START, job.procs)
                continue
            self._start(launch)

    def _start_delayed(self) -> None:
        now = time.monotonic()
        due = [launch for at, launch in self.delayed if at <= now]
        if due:
            self.delayed = [(at, launch) for at, launch in self.delayed if at > now]
            for launch in due:
                self._start(launch)

    def _start(self, launch: Launch) -> None:
        job = launch.job
        if job.pending is not launch:  # the job failed while its launch was delayed: give the hosts back
            for h in launch.hosts:
                if self.occupant.get(h) is launch:
                    del self.occupant[h]
            self._launch_waiting()
            return
        job.pending = None
        launch.start(self.launcher, self.server, job.cls.argv, self.control, self.events, env=self.job_env,
                     connect_timeout_s=self.connect_timeout_s, exit_timeout_s=self.job_timeout_s)
        job.launches.append(launch)
        t = self._rel(launch.launched_at)
        if launch.resume:
            if job.reconf is not None:
                job.reconf.relaunched_at = t
        elif math.isnan(job.start):
            job.start = job.t_area = t
            self._log(t, job, EventKind.START, job.procs)
        if launch.rigid and job.walltime is not None:  # from its start (an RJMS counts from the allocation)
            self.kills.append((self.t0 + job.start + job.walltime, launch))

    # -- results --------------------------------------------------------------
    def job_record(self, job: _Job) -> JobRecord:
        """The job's record as of now (a job cut short has no finish yet: the caller sets one)."""
        return self.state.job_record(job, job.cls.name)

    def _record(self, job: _Job) -> tuple[JobRecord, JobState]:
        return self.job_record(job), JobState(
            job.id, job.cls.name, job.key,
            Outcome.FAILED if job.failed else Outcome.WALLTIME if job.killed else Outcome.DONE, job.error,
            len(job.launches), job.done, job.delay_s, job.launch_via, job.launch_s, job.killed)

    def holders(self) -> dict[str, int | str]:
        """Workstation -> id of the job whose mpiexec holds it now (for a caller that lost a workstation)."""
        return {host: launch.job.id for host, launch in self.occupant.items()}

    def _result(self) -> LiveResult:
        states, records = [], []
        for job in self.jobs:
            record, st = self._record(job)
            records.append(record)
            states.append(st)
        resizes = [r for job in self.jobs for r in job.resizes]
        return LiveResult(self.policy.name, self.P, self.hosts, records, sorted(self.timeline, key=lambda e: e.time),
                          self.decisions, resizes, sorted(self.runs, key=lambda r: r.launched_at), states,
                          self.control_refused)


def memory_reason(output: str) -> str:
    """'out of memory on wsN' when a launcher's output says so (its first such line), else ''."""
    for line in output.splitlines():
        at = line.find(OUT_OF_MEMORY)
        if at >= 0:
            return line[at:].strip()
    return ""
