"""A time-sharing simulator: jobs gang-scheduled by slot tables on workstations whose clocks drift.

Each workstation's local job manager is a RegistrationOffice driven by that workstation's own
clock: local time τ_w runs at (1 + drift_w) times real time and is set back to the global
manager's clock at every resynchronisation (ResyncPlan). Between events nothing changes, so
the simulation is a fluid one: it steps from event to event (a slot boundary on some local
clock, a resync, an arrival, a job's end, a proper-share budget used up).

A job of p processes needs T_d(p) seconds (its model) of time with all of them running
together: fine-grained communication, so a process alone makes no progress (§1). Inside a
slot the local policy decides who gets the CPU (§3):
- dedicated: the slot's process alone, spinning, in Δt_p; owners only in Δt_s and dummies;
- implicit: the slot's process in Δt_p shares the CPU with the owners (1/(1+n) each of n
  owners' CPU-bound processes) and blocks politely when its partners are not running;
- proper share: the process may run anywhere in its integrated slot Δt = Δt_p + Δt_s, sharing
  with the owners, until it has had Δt_p of CPU in that slot; then only the owners run.
Owners are CPU-bound processes, always ready, unless `owner_ready` gives the chance that one is
ready (an interactive owner who thinks between commands: its utilisation alone); then the
slot's process gets the expected share E[1/(1+K)], K ~ Binomial(n, ready), a fluid mean, and
the owners the CPU they are ready for. A job that has not arrived or has ended leaves
its slot to sequential work until the global manager (`replan`, optional) rebuilds the tables
at the next round boundary. The processes a table names check in when it is given. Of
scheduler.model.Job only the id, the arrival and the model are used: no start-up, resize or
teardown in time sharing. The global manager's clock is real time; switches cost nothing here
(the live managers will measure what they cost).
"""
from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType

from scheduler.jobs import FinishedJob, Outcome
from scheduler.model import Job
from scheduler.timeshare.office import Dispatch, RegistrationOffice
from scheduler.timeshare.slots import SlotError
from scheduler.timeshare.tables import Resync, ResyncPlan, WorkstationTable

SEQUENTIAL = "sequential"  # a timeline's label when no parallel process holds the CPU
_EPS = 1e-12
_MAX_STALLED_STEPS = 10_000  # events at one instant: more means a bug, not a schedule


class LocalPolicy(str, Enum):
    DEDICATED = "dedicated"
    IMPLICIT = "implicit"
    PROPER_SHARE = "proper-share"


@dataclass(frozen=True, slots=True)
class Clock:
    """A workstation clock: `drift` is its rate error (1e-3: runs 0.1 % fast), `offset_s` its error at t = 0."""

    drift: float = 0.0
    offset_s: float = 0.0

    def __post_init__(self) -> None:
        if not (math.isfinite(self.drift) and self.drift > -1):
            raise SlotError(f"drift: must be a finite rate error > -1, got {self.drift}")
        if not math.isfinite(self.offset_s):
            raise SlotError(f"offset_s: must be a finite time, got {self.offset_s}")


@dataclass(frozen=True, slots=True)
class TimeshareSetup:
    policy: LocalPolicy = LocalPolicy.DEDICATED
    resync: ResyncPlan = ResyncPlan(Resync.LOOSE, 1)
    clocks: Mapping[str, Clock] = field(default_factory=dict)   # missing: a perfect clock
    owners: Mapping[str, int] = field(default_factory=dict)     # owner processes per workstation
    horizon_s: float = 1e6
    owner_ready: Mapping[str, float] = field(default_factory=dict)  # chance an owner is ready; missing: 1 (CPU-bound)

    def __post_init__(self) -> None:
        for w, n in self.owners.items():
            if n < 0:
                raise SlotError(f"owners.{w}: must be >= 0, got {n}")
        for w, r in self.owner_ready.items():
            if not 0 < r <= 1:
                raise SlotError(f"owner_ready.{w}: must be in (0, 1], got {r}")
        if not (self.horizon_s > 0):
            raise SlotError(f"horizon_s: must be > 0, got {self.horizon_s}")


def _finished(jid: str, job: Job, processors: int, start_s: float | None, finish_s: float | None,
              dedicated_s: float) -> FinishedJob:
    """A simulated time-shared job as the finished job it is: `max_procs` its processors (0: never
    placed, the manager had no room by the horizon), `start_s` its first progress; not done by the
    horizon: status TIMEOUT, its finish (and a start it never made) NaN. T_d(p) in `extra`."""
    return FinishedJob(id=jid, cls=type(job.model).__name__, demand=1.0, arrival_s=job.arrival,
                       start_s=math.nan if start_s is None else start_s,
                       finish_s=math.nan if finish_s is None else finish_s, mean_procs=float(processors),
                       max_procs=processors, requested_procs=processors, preemptions=0,
                       status=Outcome.TIMEOUT if finish_s is None else Outcome.DONE,
                       extra=MappingProxyType({"dedicated_s": dedicated_s}))


def dedicated_s(record: FinishedJob) -> float:
    """T_d(p): the job's time alone on its processors, dedicated (seconds); NaN if never placed."""
    return float(record.extra["dedicated_s"])  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class Segment:
    """On one workstation, `process` (a job, or SEQUENTIAL) held the CPU from t0_s to t1_s."""

    process: str
    t0_s: float
    t1_s: float


@dataclass(frozen=True, slots=True)
class SkewSample:
    """At real time t_s (a round boundary of the global clock), the spread of the local clocks."""

    t_s: float
    skew_s: float


@dataclass(frozen=True, slots=True)
class TimeshareResult:
    jobs: tuple[FinishedJob, ...]
    timelines: dict[str, tuple[Segment, ...]]
    skew: tuple[SkewSample, ...]
    owner_cpu_s: dict[str, float]   # CPU the owners got
    spin_s: dict[str, float]        # CPU parallel processes burnt without progress (dedicated only)
    end_s: float


Replan = Callable[[tuple[str, ...], Mapping[str, tuple[str, ...]]], Mapping[str, WorkstationTable]]
"""The global manager: (jobs present, in arrival order; the workstations of those already placed) -> new tables."""


def simulate_timeshare(tables: Mapping[str, WorkstationTable], jobs: Sequence[Job],
                       setup: TimeshareSetup, replan: Replan | None = None) -> TimeshareResult:
    """Run the jobs under these tables until all are done or the horizon (see the module docstring).

    With `replan`, the global manager is asked for new tables at the first round boundary after a
    job arrives or ends; they are broadcast with a resync there. A placed job keeps its
    workstations; a job no table names yet waits. Without it, every job must have a slot.
    """
    ids = {str(j.id): j for j in jobs}
    if len(ids) != len(jobs):
        raise SlotError("jobs: ids must be unique")
    workstations = tuple(tables)
    for w in list(setup.clocks) + list(setup.owners):
        if w not in tables:
            raise SlotError(f"{w}: a clock or owners for a workstation with no table")
    hosts: dict[str, tuple[str, ...]] = {}
    remaining: dict[str, float] = {}
    dedicated: dict[str, float] = {}

    def place(new_tables: Mapping[str, WorkstationTable]) -> None:
        if set(new_tables) != set(workstations):
            raise SlotError(f"tables: for workstations {sorted(new_tables)}, not {sorted(workstations)}")
        found: dict[str, list[str]] = {}
        for w in workstations:
            for proc in new_tables[w].processes:
                if proc not in ids:
                    raise SlotError(f"{w}: table names unknown process {proc} (jobs: {', '.join(ids)})")
                found.setdefault(proc, []).append(w)
        for jid, ws in found.items():
            if jid in hosts and hosts[jid] != tuple(ws):
                raise SlotError(f"job {jid}: a new table moves it from {list(hosts[jid])} to {ws}")
            if jid not in hosts:
                hosts[jid] = tuple(ws)
                remaining[jid] = dedicated[jid] = ids[jid].model.T(len(ws))

    place(tables)
    missing = [jid for jid in ids if jid not in hosts]
    if missing and replan is None:
        raise SlotError(f"job {missing[0]}: no table gives it a slot")
    round_s = next(iter(tables.values())).round_s
    syncs = _Peek(setup.resync.iter_sync_times_s(tables, setup.horizon_s))

    clocks = {w: setup.clocks.get(w, Clock()) for w in workstations}
    tau = {w: clocks[w].offset_s for w in workstations}
    offices = _offices(tables, tau)
    owners = {w: setup.owners.get(w, 0) for w in workstations}
    ready = {w: setup.owner_ready.get(w, 1.0) for w in workstations}
    alone = {w: expected_share(owners[w], ready[w]) for w in workstations}   # the slot's process, beside them
    any_ready = {w: 1.0 - (1.0 - ready[w]) ** owners[w] for w in workstations}

    start: dict[str, float] = {}
    finish: dict[str, float] = {}
    budget: dict[str, tuple[tuple[float, str], float]] = {}   # w -> ((slot start, process), CPU left in it)
    owner_cpu = {w: 0.0 for w in workstations}
    spin = {w: 0.0 for w in workstations}
    timeline: dict[str, list[list]] = {w: [] for w in workstations}
    skew: list[SkewSample] = []
    arrivals = deque(sorted({j.arrival for j in jobs if j.arrival > 0}))
    order = sorted(ids, key=lambda jid: ids[jid].arrival)
    next_round_s = 0.0
    t = 0.0
    stalled = 0
    seen_present: set[str] = set()
    pending = False

    while t < setup.horizon_s and len(finish) < len(ids):
        present = {jid for jid, j in ids.items() if j.arrival <= t + _EPS and jid not in finish}
        if replan is not None and present != seen_present:
            pending, seen_present = True, present
        if t >= next_round_s - _EPS:
            skew.append(SkewSample(t, max(tau.values()) - min(tau.values())))
            next_round_s += round_s
            if pending and replan is not None:
                running = {jid: hosts[jid] for jid in present if jid in hosts}
                tables = dict(replan(tuple(jid for jid in order if jid in present), running))
                place(tables)
                if {t_.round_s for t_ in tables.values()} != {round_s}:
                    raise SlotError(f"tables: a new table changes the round from {round_s:g} s")
                tau = {w: t for w in workstations}
                offices = _offices(tables, tau)
                syncs = _Peek(t + x for x in setup.resync.iter_sync_times_s(tables, setup.horizon_s - t))
                pending = False
        while syncs.head <= t + _EPS:
            syncs.pop()
            for w in workstations:
                tau[w] = t
                _restart(offices[w], tables[w], t)
        disp = {w: offices[w].advance(tau[w]) for w in workstations}

        holder, eligible = _local_policy(setup.policy, disp, present, alone, budget, tables)
        rate = {jid: min(eligible[w] for w in hosts[jid]) for jid in present
                if jid in hosts and all(holder.get(w) == jid for w in hosts[jid])}

        # the next event
        dt = min(setup.horizon_s - t, next_round_s - t)
        dt = min(dt, syncs.head - t)
        while arrivals and arrivals[0] <= t + _EPS:
            arrivals.popleft()
        if arrivals:
            dt = min(dt, arrivals[0] - t)
        local_dt = {w: (d.until_s - tau[w]) / (1 + clocks[w].drift) for w, d in disp.items()}
        dt = min(dt, *local_dt.values())
        for jid, r in rate.items():
            dt = min(dt, remaining[jid] / r)
            if setup.policy is LocalPolicy.PROPER_SHARE:
                dt = min(dt, *(budget[w][1] / r for w in hosts[jid]))
        dt = max(dt, 0.0)
        stalled = stalled + 1 if dt == 0.0 else 0
        if stalled > _MAX_STALLED_STEPS:
            raise SlotError(f"time-sharing simulation makes no headway at t = {t:g} s")

        # advance
        for jid, r in rate.items():
            start.setdefault(jid, t)
            remaining[jid] -= r * dt
            if setup.policy is LocalPolicy.PROPER_SHARE:
                for w in hosts[jid]:
                    budget[w] = (budget[w][0], budget[w][1] - r * dt)
        progressing = {w for jid in rate for w in hosts[jid]}
        spinning = {w for w in holder if w not in progressing} if setup.policy is LocalPolicy.DEDICATED else set()
        for w in workstations:
            # a spinning process holds the CPU; a polite one that cannot progress leaves it to the owners
            label = holder[w] if w in progressing or w in spinning else SEQUENTIAL
            _extend(timeline[w], label, t, t + dt)
            if w in spinning:
                spin[w] += dt
            if owners[w]:
                got = (1.0 - eligible[w]) if w in progressing else (0.0 if w in spinning else any_ready[w])
                owner_cpu[w] += got * dt
            d = disp[w]
            if local_dt[w] <= dt * (1 + 1e-9) + _EPS:
                tau[w] = d.until_s   # exactly on the boundary, so the office moves on
            else:
                tau[w] += (1 + clocks[w].drift) * dt
        t += dt
        for jid in rate:
            if remaining[jid] <= 1e-9 * max(1.0, dedicated[jid]):
                finish[jid] = t

    records = tuple(_finished(jid, j, len(hosts.get(jid, ())), start.get(jid), finish.get(jid),
                              dedicated.get(jid, math.nan)) for jid, j in ids.items())
    return TimeshareResult(records, {w: tuple(Segment(*s) for s in segs) for w, segs in timeline.items()},
                           tuple(skew), owner_cpu, spin, t)


class _Peek:
    """An ascending iterator of times with its next one in view (inf when done)."""

    def __init__(self, times: Iterable[float]) -> None:
        self._it = iter(times)
        self.head = next(self._it, math.inf)

    def pop(self) -> None:
        self.head = next(self._it, math.inf)


def expected_share(n: int, ready: float) -> float:
    """E[1/(1+K)], K ~ Binomial(n, ready): a process's CPU share beside n owners each ready with that chance."""
    return sum(math.comb(n, k) * ready ** k * (1 - ready) ** (n - k) / (1 + k) for k in range(n + 1))


def _local_policy(policy: LocalPolicy, disp: Mapping[str, Dispatch], present: set[str], share: Mapping[str, float],
                  budget: dict[str, tuple[tuple[float, str], float]], tables: Mapping[str, WorkstationTable]
                  ) -> tuple[dict[str, str], dict[str, float]]:
    """Inside the slots (§3): per workstation, the process that may run now and its CPU fraction.

    Proper share opens a new budget of Δt_p CPU-seconds when a slot begins (kept in `budget`).
    """
    holder: dict[str, str] = {}
    fraction: dict[str, float] = {}
    for w, d in disp.items():
        proc = d.slot_process if policy is LocalPolicy.PROPER_SHARE else d.process
        if proc is None or proc not in present:
            continue
        if policy is LocalPolicy.PROPER_SHARE:
            key = (round(d.slot_start_s, 9), proc)  # a resync recomputes the start, to the last bit
            if w not in budget or budget[w][0] != key:
                budget[w] = (key, _parallel_s(tables[w], proc))
            if budget[w][1] <= _EPS:
                continue
        holder[w] = proc
        fraction[w] = 1.0 if policy is LocalPolicy.DEDICATED else share[w]
    return holder, fraction


def _offices(tables: Mapping[str, WorkstationTable], tau: Mapping[str, float]) -> dict[str, RegistrationOffice]:
    """Each workstation's office with the table's processes checked in, following it from its clock's round."""
    offices = {}
    for w, table in tables.items():
        office = RegistrationOffice(w)
        for proc in table.processes:
            office.check_in(proc)
        _restart(office, table, tau[w])
        offices[w] = office
    return offices


def _restart(office: RegistrationOffice, table: WorkstationTable, tau_s: float) -> None:
    """Point the office at the round that holds local time tau_s (a resync may move a clock back)."""
    k = math.floor(tau_s / table.round_s + 1e-12)
    office.follow(table, now_s=k * table.round_s)


def _parallel_s(table: WorkstationTable, process: str) -> float:
    return next(s.parallel_s for s in table.slots if s.process == process)


def _extend(segments: list[list], label: str, t0: float, t1: float) -> None:
    if t1 <= t0:
        return
    if segments and segments[-1][0] == label and abs(segments[-1][2] - t0) <= _EPS:
        segments[-1][2] = t1
    else:
        segments.append([label, t0, t1])


def effective_speedup(record: FinishedJob, t1_s: float) -> float:
    """S_e(p) = T_d(1) / T_e(p) (eq. 3), T_e the job's response."""
    if record.status != Outcome.DONE:
        raise SlotError(f"job {record.id}: not finished, so no effective speedup")
    return t1_s / record.response_s
