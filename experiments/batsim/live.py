"""Batsim's side of the protocol, live: the same messages and rules as the simulated server, on the wall clock,
with every job a real MPI program on the workstations the scheduler allocated.

Differences from `server.BatsimServer` (which this extends; its rules hold otherwise):

* Time is the wall clock since SIMULATION_BEGINS was sent. A message's `now` and its events'
  timestamps are when this side saw them happen (a submission a little after its subtime, a
  completion when its process was seen to exit, polled every `poll_s`); the scheduler's
  replies are awaited as in simulated mode, and the clock runs meanwhile.
* EXECUTE_JOB launches the job at once, through the cluster's `job_launcher()` (the resident
  pool; mpiexec for anything it does not run), one rank per executor on the allocated
  workstations: `workloads.batsim_job delay` for a delay profile, `workloads.batsim_job ptask`
  (the `cpu` flop as reference work, then `com` bytes to every other rank) for
  parallel_homogeneous. A `nowlab` profile runs its program rigidly, one rank per executor, as
  the live executor's rigid jobs do (scheduler/live): a project program as
  `python3 -m workloads.PROGRAM ARGS --job KEY --hosts WS,...` (no --control: not preemptible),
  a user's command as its argv, which the launcher sends to mpiexec on those workstations (a
  `python3 -m` command goes to the resident pool, as a rigid job's does). The job's start is
  when the launch returned.
* A job ends when its process does: exit 0 gives the profile's `ret` (0: COMPLETED_SUCCESSFULLY,
  else COMPLETED_FAILED, as simulated), another exit code COMPLETED_FAILED with that code.
  Its walltime is a timer from its start: still running then, it is stopped
  (COMPLETED_WALLTIME_REACHED, return code -1). KILL_JOB stops it at once. A stopped job's
  processes are waited for (up to `stop_timeout_s`) before its workstations are free again.
* CALL_ME_LATER is a timer. A decision dated later than its message is held until then.
* However the run ends (SIMULATION_ENDS, a misbehaving scheduler, Ctrl-C), every job still
  running is stopped and waited for; the records keep it as RUNNING with what was measured.

Every job also keeps the simulated run time of its profile on its allocation
(`platform.run_time_s`), for the measured-beside-simulated report (`report.py`); a nowlab
profile that states no time has none there (and a KILL_JOB reports its progress as 0).
"""
from __future__ import annotations

import contextlib
import heapq
import math
import re
import time
from dataclasses import dataclass, field
from typing import ClassVar

from experiments.batsim import protocol as p
from experiments.batsim.server import RUNNING, BatsimServer, ScheduleError, Stats, _Job
from experiments.batsim.platform import is_timed
from experiments.batsim.workload import DelayProfile, NowlabProfile, ParallelHomogeneousProfile, Profile
from workloads.host.launch import Handle, Launcher

PROGRAM = ("python3", "-m", "workloads.batsim_job")
_WALL = 4  # a job's walltime timer (after the server's kinds 0-3)


class LiveError(RuntimeError):
    """The cluster could not carry a decision out (a launch that failed): one line naming the job."""


@dataclass
class LiveBatsimServer(BatsimServer):
    """One live run of `workload` on the workstations of `platform` (named as the cluster's),
    jobs launched by `launcher` (a cluster's `job_launcher()`)."""

    needs_model: ClassVar[bool] = False  # a nowlab profile need not state a time: it runs for real
    launcher: Launcher | None = None
    poll_s: float = 0.01
    stop_timeout_s: float = 15.0
    sim_run_s: dict[str, float] = field(default_factory=dict)  # job -> simulated run time on its allocation
    stopped_at_end: dict[str, int | None] = field(default_factory=dict)  # job -> exit code once stopped by the run's end

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.launcher is None:
            raise ValueError("launcher: a live run needs the cluster's job launcher")
        self._handles: dict[str, Handle] = {}
        self._t0 = time.monotonic()

    def clock(self) -> float:
        """Seconds since the run began (SIMULATION_BEGINS)."""
        return time.monotonic() - self._t0

    # --- the loop ---------------------------------------------------------------------------------

    def run(self) -> Stats:
        t0 = time.perf_counter()
        self._t0 = time.monotonic()
        try:
            self._simulation_begins()
            while True:
                self._collect()
                if self._outbox:
                    events, self._outbox = tuple(self._outbox), []
                    self._exchange(p.Message(self.clock(), events))
                    continue
                if self._finished() and not self._handles:
                    break
                if not self._handles and not self._pending():
                    self._now = self.clock()
                    raise ScheduleError(self._stuck())
                due = self._heap[0][0] - self.clock() if self._heap else self.poll_s
                time.sleep(min(max(due, 0.0), self.poll_s))
            self._now = self.clock()
            self._exchange(p.Message(self._now, (p.SimulationEnds(timestamp=self._now),)), last=True)
        finally:
            self._now = max(self._now, self.clock())
            self._stop_all()
            self.stats.simulation_time_s = time.perf_counter() - t0
            self.stats.end_s = self._now
        return self.stats

    def _collect(self) -> None:
        """What happened since the last look: exited jobs, then due timers and submissions."""
        for job_id, handle in list(self._handles.items()):
            code = handle.poll()
            if code is not None:
                del self._handles[job_id]
                self._ended(self._jobs[job_id], self.clock(), code)
        now = self.clock()
        while self._heap and self._heap[0][0] <= now:
            _, kind, _, payload = heapq.heappop(self._heap)
            if kind == _WALL:
                job = self._jobs[payload]
                if job.state == RUNNING and payload in self._handles:
                    self._stop(job)
                    self._finish(job, self.clock(), "COMPLETED_WALLTIME_REACHED", -1)
            else:
                self._happen(now, kind, payload)
        self._now = now

    # --- jobs on the cluster ----------------------------------------------------------------------

    def _model_run_s(self, profile: Profile, placed: tuple[int, ...]) -> float:
        return super()._model_run_s(profile, placed) if is_timed(profile) else math.nan

    def _begin(self, job: _Job, t: float, placed: tuple[int, ...]) -> None:
        if job.run_s is not None and math.isfinite(job.run_s):
            self.sim_run_s[job.spec.id] = job.run_s
        hosts = [self.platform.hosts[r].name for r in placed]
        argv = job_argv(self.workload.profiles[job.spec.profile], self.platform.flop_per_ref_core_s, hosts,
                        key=f"batsim-{_KEY_UNSAFE.sub('-', job.spec.id)}-{time.time_ns() % 10**9}")
        try:
            self._handles[job.spec.id] = self.launcher.mpirun_popen(hosts, argv)
        except (OSError, RuntimeError, ValueError) as exc:
            raise LiveError(f"job {job.spec.id!r}: launching it on {', '.join(hosts)} failed: "
                            f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
        job.start_s = self.clock()
        job.finish_s = None
        if job.spec.walltime is not None:
            self._push(job.start_s + job.spec.walltime, _WALL, job.spec.id)

    def _stop(self, job: _Job) -> None:
        """Stop a running job's processes and wait for them (its workstations are then free)."""
        handle = self._handles.pop(job.spec.id, None)
        if handle is None:
            return
        handle.terminate()
        with contextlib.suppress(TimeoutError, OSError):
            handle.wait(self.stop_timeout_s)
        job.finish_s = self.clock()

    def _stop_all(self) -> None:
        for job_id in list(self._handles):
            handle = self._handles[job_id]
            self._stop(self._jobs[job_id])
            self._jobs[job_id].finish_s = None  # stopped by the run's end, not finished: still RUNNING
            self.stopped_at_end[job_id] = handle.poll()

    def _ended(self, job: _Job, t: float, code: int) -> None:
        if code == 0:
            ret = self.workload.profiles[job.spec.profile].ret
            self._finish(job, t, "COMPLETED_SUCCESSFULLY" if ret == 0 else "COMPLETED_FAILED", ret)
        else:
            self._finish(job, t, "COMPLETED_FAILED", code)

    def _finish(self, job: _Job, t: float, state: str, code: int) -> None:
        job.state, job.return_code, job.finish_s = state, code, t
        self._release(job)
        self._outbox.append(p.JobCompleted(timestamp=t, job_id=job.spec.id, job_state=state, return_code=code,
                                           alloc=job.alloc))
        self._count_done()

    def _pending(self) -> bool:
        """Something but a walltime timer is due later (a submission, a call, a held decision)."""
        return any(e[1] != _WALL for e in self._heap)

    def _finished(self) -> bool:
        return self._unsubmitted == 0 and self._active == 0 and not self._outbox and not self._pending()


_KEY_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def job_argv(profile: Profile, flop_per_ref_core_s: float, hosts: list[str], *, key: str) -> list[str]:
    """The command a job of `profile` runs on `hosts` (one rank each; module docstring). `key`
    names a project program's run (its --job: checkpoint directory, hello name)."""
    if isinstance(profile, DelayProfile):
        return [*PROGRAM, "delay", "--seconds", repr(profile.delay_s)]
    if isinstance(profile, ParallelHomogeneousProfile):
        return [*PROGRAM, "ptask", "--ref-seconds", repr(profile.cpu_flop / flop_per_ref_core_s),
                "--bytes", str(int(profile.com_bytes))]
    assert isinstance(profile, NowlabProfile)
    if profile.is_command:
        return list(profile.args)
    return ["python3", "-m", f"workloads.{profile.program}", *profile.args, "--job", key, "--hosts", ",".join(hosts)]


__all__ = ["LiveBatsimServer", "LiveError", "PROGRAM", "job_argv"]
