"""Time sharing on an arrival stream (Zhou & Brent §2, §5): the global manager replans live.

The spec's jobs arrive at their arrival_s (from the run's start) and none gives a β: the global
manager allocates them by the paper's rule, with the same pure code the simulator replans with
(scheduler/timeshare/manager.py `GlobalManager.plan`). At every change, an arrival or an end, with
the jobs present in arrival order and the running ones kept on their workstations:
1. plan the tables (pure);
2. launch every job the plan newly admits on its workstations; its ranks check in, and their
   managers keep them stopped, since no table in force names them yet;
3. wait for those check-ins;
4. put the tables in force at the next round boundary (`LiveGlobalManager.replace`; the first
   plan `start`s the global manager). A job the plan does not admit waits for the next change.
A finished job checks out; the next plan leaves its slots to the others.

Where it differs from the simulator (so from the prediction): the simulator replans at the first
round boundary after a change and its jobs start at once; live, the tables change at the
first boundary after the new job's launch and check-in (`lead_s` after it at least), and a job's
launch (MPI start-up, its ranks stopped until their table) is part of its response.
"""
from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from experiments.studies.zhou_brent.global_manager import LiveGlobalManager, LiveSetup, LiveTimeshareRecord, TableRefused
from experiments.studies.zhou_brent.owners import LiveOwners, OwnerCommand, OwnerSetup
from experiments.studies.zhou_brent.live import (SYNTHETIC_PHASE_REF_S, JobRun, Progress, TimeshareBackend, TimeshareRunError,
                                       quiet, finish_job, job_argv, tear_down)
from experiments.studies.zhou_brent.spec import TimeshareSpec
from scheduler.jobs import SubmittedJob
from scheduler.timeshare.manager import GlobalManager
from scheduler.timeshare.tables import WorkstationTable
from experiments.studies.zhou_brent.manager_client import ManagerClient
from workloads.host.launch import Handle

POLL_S = 0.1
MAX_RETRIES = 3  # tables refused in a row before the run gives up


@dataclass(frozen=True, slots=True)
class Admission:
    """Where the plan that admitted a job put it: what a stream job adds (`SubmittedJob[Admission]`)."""

    hosts: tuple[str, ...]
    beta: float               # its share in the plan that admitted it (later plans may change it)
    admitted_s: float         # when that plan was made, on the host's clock


@dataclass(frozen=True, slots=True)
class StreamRun:
    spec_name: str
    started_s: float                       # the stream's time 0 on the host's clock
    jobs: Mapping[str, SubmittedJob[Admission]]  # id -> the job as it arrived (arrival_s from time 0), its admission
    runs: Mapping[str, JobRun]             # id -> its run, launched and done on the host's clock
    live: LiveTimeshareRecord
    plans: tuple[tuple[float, tuple[str, ...]], ...]   # (made at, the jobs admitted) for every plan
    owner_commands: tuple[OwnerCommand, ...] | None = None  # None: no owners ran

    def arrived_s(self, job: str) -> float:
        """When `job` arrived, on the host's clock."""
        return self.started_s + self.jobs[job].arrival_s

    def response_s(self, job: str) -> float:
        """Arrival to done: waiting, launch and the time-shared run."""
        return self.runs[job].done_s - self.arrived_s(job)


def _betas(tables: Mapping[str, WorkstationTable]) -> dict[str, float]:
    return {s.process: s.parallel_s / t.round_s for t in tables.values() for s in t.slots if s.process is not None}


def _hosts(tables: Mapping[str, WorkstationTable], job: str, order: Sequence[str]) -> tuple[str, ...]:
    return tuple(w for w in order if job in tables[w].processes)


@dataclass
class StreamRunner:
    """Runs `spec`'s arrival stream on `backend` (module docstring); spec.simulate.replan must be on."""

    spec: TimeshareSpec
    backend: TimeshareBackend
    setup: LiveSetup
    phase_ref_s: float = SYNTHETIC_PHASE_REF_S
    job_timeout_s: float = 3600.0
    progress: Progress = quiet
    owners: OwnerSetup | None = None   # owner daemons on some workstations, from time 0 to the end
    _plans: list[tuple[float, tuple[str, ...]]] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        if not self.spec.simulate.replan:
            raise TimeshareRunError("simulate.replan: a stream run has the global manager allocate every job; "
                                    "set replan = true and give no beta")
        spinning = [e for e in self.spec.job if e.wait != "polite"]
        if spinning:  # its stream.csv has no column for it: a spinning stream would read back as polite
            raise TimeshareRunError(f"job {spinning[0].id}: wait {spinning[0].wait}: a stream run records no wait "
                                    f"mode, so its jobs wait politely (a run of fixed tables takes --wait spin)")
        self._argv = {e.id: job_argv(e, self.phase_ref_s) for e in self.spec.job}

    def run(self) -> StreamRun:
        manager = self.spec.manager()
        order = [e.id for e in sorted(self.spec.job, key=lambda e: e.arrival_s)]
        arrival_rel = {e.id: e.arrival_s for e in self.spec.job}
        handles: dict[str, Handle] = {}
        launched: dict[str, float] = {}
        placed: dict[str, tuple[tuple[str, ...], float, float]] = {}  # job -> (hosts, beta, admitted at)
        done: dict[str, JobRun] = {}
        gm: LiveGlobalManager | None = None
        live = None
        owners = LiveOwners(self.backend, self.owners) if self.owners is not None else None
        try:
            clients = self.backend.start_managers(list(self.spec.workstations))
            if owners is not None:
                owners.start(clients)
            env = self.backend.rank_env()
            t0 = time.time()
            seen: set[str] = set()
            self.progress("stream", 0, len(order))
            retries = 0
            while len(done) < len(order):
                now = time.time()
                for job, h in handles.items():
                    if job not in done and h.poll() is not None:
                        done[job] = finish_job(h, job, placed[job][0], launched[job], 30.0)
                        if gm is not None:
                            gm.job_finished(job)
                        self.progress("stream", len(done), len(order))
                present = tuple(j for j in order if arrival_rel[j] <= now - t0 and j not in done)
                if set(present) != seen:
                    seen = set(present)
                    if present:
                        try:
                            gm = self._replan(manager, present, placed, handles, launched, clients, env, gm)
                            retries = 0
                        except TableRefused:
                            # a job ended between the poll and the tables (it checked out): plan again
                            retries += 1
                            if retries > MAX_RETRIES:
                                raise
                            seen = set()
                if now - t0 > self.job_timeout_s:
                    raise TimeshareRunError(f"job_timeout_s: {len(order) - len(done)} jobs not done after "
                                            f"{self.job_timeout_s:g} s")
                time.sleep(POLL_S)
            if gm is not None:
                live = gm.stop()
        finally:
            if gm is not None and live is None:
                gm.stop()
            commands = tear_down(handles.values(), owners, self.backend)
        assert live is not None
        workload = {e.id: e.workload for e in self.spec.job}
        jobs = {j: SubmittedJob(j, workload[j], arrival_rel[j],
                                extra=Admission(*placed[j])) for j in order}
        return StreamRun(self.spec.name, t0, jobs, {j: done[j] for j in order}, live, tuple(self._plans), commands)

    def _replan(self, manager: GlobalManager, present: tuple[str, ...],
                placed: dict[str, tuple[tuple[str, ...], float, float]], handles: dict[str, Handle],
                launched: dict[str, float], clients: Mapping[str, ManagerClient], env: Mapping[str, str],
                gm: LiveGlobalManager | None) -> LiveGlobalManager | None:
        """Plan for the jobs present, launch the newly admitted, put the tables in force; the global manager."""
        running = {j: placed[j][0] for j in present if j in placed}
        tables = manager.plan(present, running)
        betas = _betas(tables)
        made_s = time.time()
        self._plans.append((made_s, tuple(j for j in present if j in betas)))
        new = [j for j in present if j in betas and j not in placed]
        for j in new:
            hosts = _hosts(tables, j, self.spec.workstations)
            placed[j] = (hosts, betas[j], made_s)
            launched[j] = time.time()
            handles[j] = self.backend.launch(hosts, [*self._argv[j], "--job", j, "--hosts", ",".join(hosts)], env)
        if gm is None:
            in_use = {w: t for w, t in tables.items() if t.processes}
            if not in_use:
                return None
            gm = LiveGlobalManager(in_use, clients, self.setup)
            gm.wait_for_checkins()
            gm.start()
            return gm
        gm.wait_for_checkins({w: tuple(j for j in new if j in t.processes) for w, t in tables.items()})
        gm.replace(tables, gm.next_boundary_s())
        return gm
