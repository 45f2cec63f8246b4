"""The live global job manager (Zhou & Brent §5): tables to real local managers, resyncs, a watchdog.

Who sends what, when (docs/timeshare.md draws it):
1. The ranks check in with their workstation's local manager as their jobs start
   (workloads/timeshare_checkin.py); `wait_for_checkins` waits until every job a table names is
   registered where it is named (a manager refuses a table naming a job it does not know).
2. `start` sends every workstation its table with one common start: round 0 begins `lead_s`
   from now on this manager's clock, given to each manager on its own clock (below).
3. A keeper thread resynchronises by the ResyncPlan: strict gang at every slot boundary of any
   workstation's table, loose gang every k rounds, none for uncoordinated local scheduling.
   A resync tells a manager "round n begins at T" with T the global boundary on *its* clock:
   each time the manager's clock is read first (a status request; Cristian's estimate
   offset = its now - the midpoint of the request, good to half the round trip). Its reply's
   correction is how far its boundary had run off since the last one: the skew, recorded.
   The keeper also polls every manager's timeline (who ran when) each `timeline_poll_s`, and
   measures each one's skew then: where its round 0 lies on the global clock, against where
   it should (a `SkewSample`); with no resync that is how the skew grows.
4. A watchdog thread (testbed Watchdog) reports a manager that stops answering within its
   bound; it is given no more resyncs. Its ranks were continued by its guardian.
5. `job_finished` checks out whatever a finished job left registered; `stop` does it for every
   job, so nothing the tables stopped stays stopped once the global manager is gone.
6. `replace` puts a replan's tables in force at a round boundary of the running ones
   (`next_boundary_s`), as the simulator's global manager does after an arrival or an end
   (scheduler/timeshare/simulate.py): each manager holds its new table pending and keeps the
   old one until that boundary on its own clock, so the change-over is as aligned as the
   boundaries are. The resyncs then count rounds from the new tables' round 0. Each set of
   tables in force is a `TableEpoch` of the record.
"""
from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import TracebackType

from experiments.studies.zhou_brent.spec import TimeshareSpec
from experiments.studies.zhou_brent.wire import wire_slots
from scheduler.timeshare.tables import ResyncPlan, WorkstationTable
from experiments.studies.zhou_brent.manager_client import (DeadManager, ManagerClient, ManagerRefused, ManagerStatus, ManagerUnreachable,
                                      Watchdog, WireSlot)

DEFAULT_HORIZON_S = 1e7  # resyncs are planned this far ahead: longer than any run


class LiveTimeshareError(ValueError):
    """A live time-sharing setup or step that cannot go on: one line naming the field or workstation."""


class TableRefused(LiveTimeshareError):
    """A manager refused a replan's table (most often: a job it names checked out meanwhile)."""


@dataclass(frozen=True, slots=True)
class LiveSetup:
    resync: ResyncPlan
    # round 0 begins this long after the tables go out: every manager has its table by then. 0.3 s was
    # too short for three managers on 0.2-core workstations (28 Nov 2026): each send measures the clock offset first
    lead_s: float = 1.0
    # every rank checks in once it has started; cold starts of three CG jobs on 0.2-core workstations
    # took over 30 s once in CI, with the host loaded by the test run's other pass
    checkin_timeout_s: float = 60.0
    timeline_poll_s: float = 1.0
    watchdog_poll_s: float = 0.5
    missed_polls: int = 2
    policy: str | None = None       # the local policy every table asks for (None: the managers' default, implicit)

    def __post_init__(self) -> None:
        for name in ("lead_s", "checkin_timeout_s", "timeline_poll_s", "watchdog_poll_s"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise LiveTimeshareError(f"{name}: must be a positive time in s, got {value}")
        if self.missed_polls < 1:
            raise LiveTimeshareError(f"missed_polls: must be >= 1, got {self.missed_polls}")


@dataclass(frozen=True, slots=True)
class TableSent:
    """A table put in force: round 0 at at_s on the manager's clock; offset_s = its clock - ours, then."""

    workstation: str
    at_s: float
    offset_s: float
    rtt_s: float


@dataclass(frozen=True, slots=True)
class TableEpoch:
    """Tables in force from anchor_s (their round 0, global clock) until the next epoch's anchor."""

    anchor_s: float
    tables: Mapping[str, WorkstationTable]
    late: tuple[str, ...] = ()   # workstations whose table went out after anchor_s: they took it mid-round


@dataclass(frozen=True, slots=True)
class SyncRecord:
    """One resync of one manager; correction_s (None if it failed) is how far its boundary was off."""

    workstation: str
    round: int
    sent_s: float                 # on the global manager's clock
    offset_s: float | None        # the manager's clock minus the global one, as estimated just before
    rtt_s: float | None           # the estimate's round trip: its error is at most half of it
    correction_s: float | None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class SkewSample:
    """At at_s (global clock), w's slot boundaries lay skew_s from the global ones (> 0: late), to rtt_s / 2."""

    workstation: str
    at_s: float
    skew_s: float
    rtt_s: float


@dataclass(frozen=True, slots=True)
class LiveTimeshareRecord:
    """Everything a report needs: the tables, when they began, every resync, the timelines, the dead."""

    round_s: float
    anchor_s: float                                   # round 0 on the global manager's clock
    resync: ResyncPlan
    tables: Mapping[str, WorkstationTable]
    sent: tuple[TableSent, ...]
    syncs: tuple[SyncRecord, ...]
    skews: tuple[SkewSample, ...]
    timelines: Mapping[str, tuple[tuple[float, str | None], ...]]  # each on its manager's clock
    statuses: Mapping[str, ManagerStatus]             # the last status each manager gave
    dead: tuple[DeadManager, ...]
    checked_out: tuple[tuple[str, str, int], ...]     # (workstation, job, pid) the global manager let go
    watchdog_bound_s: float
    epochs: tuple[TableEpoch, ...] = ()               # the first tables, then one per replan (`replace`)
    policy: str | None = None                         # the local policy the tables asked for (None: implicit)

    def corrections_s(self, workstation: str) -> tuple[float, ...]:
        """The skew each resync removed on one workstation, in order."""
        return tuple(s.correction_s for s in self.syncs if s.workstation == workstation and s.correction_s is not None)

    def skews_s(self, workstation: str) -> tuple[float, ...]:
        """The skew measured at each timeline poll on one workstation, in order."""
        return tuple(s.skew_s for s in self.skews if s.workstation == workstation)

    def local_anchor_s(self, workstation: str) -> float:
        """Round 0 on that workstation's clock, as its table gave it."""
        return next(s.at_s for s in self.sent if s.workstation == workstation)


@dataclass
class LiveGlobalManager:
    """Sends `tables` to the managers in `clients` and keeps them in step by `setup.resync` (module docstring)."""

    tables: Mapping[str, WorkstationTable]
    clients: Mapping[str, ManagerClient]
    setup: LiveSetup
    clock: Callable[[], float] = time.time  # the managers' clocks are this one, run off by their drift
    on_dead: Callable[[DeadManager], None] | None = None  # told once of each manager the watchdog gives up on
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    _stop: threading.Event = field(default_factory=threading.Event, init=False)
    _threads: list[threading.Thread] = field(default_factory=list, init=False)
    _anchor_s: float | None = field(default=None, init=False)
    _sent: list[TableSent] = field(default_factory=list, init=False)
    _syncs: list[SyncRecord] = field(default_factory=list, init=False)
    _skews: list[SkewSample] = field(default_factory=list, init=False)
    _timelines: dict[str, list[tuple[float, str | None]]] = field(default_factory=dict, init=False)
    _statuses: dict[str, ManagerStatus] = field(default_factory=dict, init=False)
    _dead: list[DeadManager] = field(default_factory=list, init=False)
    _checked_out: list[tuple[str, str, int]] = field(default_factory=list, init=False)
    _watchdog: Watchdog | None = field(default=None, init=False)
    _send: threading.Lock = field(default_factory=threading.Lock, init=False)  # a resync never crosses a replan
    _epochs: list[TableEpoch] = field(default_factory=list, init=False)
    _named: dict[str, set[str]] = field(default_factory=dict, init=False)      # every job any table put on w
    round_s: float = field(default=math.nan, init=False)

    def __post_init__(self) -> None:
        if not self.tables:
            raise LiveTimeshareError("tables: none to send")
        missing = sorted(set(self.tables) - set(self.clients))
        if missing:
            raise LiveTimeshareError(f"clients: no manager for workstation {missing[0]} "
                                     f"(given: {', '.join(sorted(self.clients)) or 'none'})")
        rounds = {t.round_s for t in self.tables.values()}
        if len(rounds) != 1:
            raise LiveTimeshareError(f"tables: all workstations share one round, got {sorted(rounds)}")
        self.round_s = rounds.pop()
        self._timelines = {w: [] for w in self.clients}
        self._named = {w: set(t.processes) for w, t in self.tables.items()}

    @classmethod
    def from_spec(cls, spec: TimeshareSpec, clients: Mapping[str, ManagerClient],
                  setup: LiveSetup | None = None) -> "LiveGlobalManager":
        """The spec's tables, resynchronised as its [simulate] section says unless `setup` says otherwise."""
        setup = setup or LiveSetup(ResyncPlan(spec.simulate.resync, spec.simulate.every_rounds))
        tables = {w: t for w, t in spec.tables().items() if t.processes}  # a workstation with no job needs no manager
        return cls(tables, clients, setup)

    # --- before the run -----------------------------------------------------------------------
    def wait_for_checkins(self, expected: Mapping[str, tuple[str, ...]] | None = None) -> None:
        """Return once every job a table names (or `expected`: workstation -> jobs) is checked in on that
        workstation; TimeoutError naming what is missing."""
        expected = {w: t.processes for w, t in self.tables.items()} if expected is None else expected
        deadline = time.monotonic() + self.setup.checkin_timeout_s
        while True:
            missing, silent = {}, {}
            for w, jobs in expected.items():
                if not jobs:
                    continue
                try:
                    registered = set(self.clients[w].status().jobs)
                except ManagerUnreachable as exc:
                    # A manager slow to answer on a loaded host is asked again until the deadline.
                    silent[w] = exc
                    continue
                lacking = sorted(set(jobs) - registered)
                if lacking:
                    missing[w] = lacking
            if not missing and not silent:
                return
            if time.monotonic() > deadline:
                if silent:
                    w, exc = next(iter(silent.items()))
                    raise LiveTimeshareError(f"{w}: manager unreachable while waiting for check-ins: {exc}")
                w, jobs = next(iter(missing.items()))
                raise TimeoutError(f"check-in: after {self.setup.checkin_timeout_s:g} s {w} still has no "
                                   f"{', '.join(jobs)}")
            time.sleep(0.05)

    def start(self) -> float:
        """Send every table with one common round 0; start the resyncs and the watchdog. Returns round 0's time."""
        if self._anchor_s is not None:
            raise LiveTimeshareError("start: already started")
        sent_s = self.clock()
        anchor_s = sent_s + self.setup.lead_s
        late = self._send_tables(self.tables, anchor_s)
        if late:  # a manager that got its table after round 0: out of step
            raise LiveTimeshareError(f"lead_s: the tables took {self.clock() - sent_s:.2f} s to send, over the "
                                     f"{self.setup.lead_s:g} s lead ({', '.join(late)} late); raise LiveSetup.lead_s")
        self._anchor_s = anchor_s
        self._epochs.append(TableEpoch(anchor_s, dict(self.tables)))
        self._watchdog = Watchdog(dict(self.clients), self.setup.watchdog_poll_s, self.setup.missed_polls)
        self._threads = [threading.Thread(target=self._watchdog.run, args=(self._stop, self._on_dead),
                                          name="timeshare-watchdog", daemon=True),
                         threading.Thread(target=self._keep, name="timeshare-keeper", daemon=True)]
        for t in self._threads:
            t.start()
        return anchor_s

    # --- during the run -----------------------------------------------------------------------
    @property
    def dead(self) -> tuple[DeadManager, ...]:
        with self._lock:
            return tuple(self._dead)

    @property
    def watchdog_bound_s(self) -> float:
        return Watchdog(dict(self.clients), self.setup.watchdog_poll_s, self.setup.missed_polls).bound_s

    def next_boundary_s(self, lead_s: float | None = None) -> float:
        """The first round boundary of the tables in force at least lead_s (default setup.lead_s) from now."""
        if self._anchor_s is None:
            raise LiveTimeshareError("next_boundary_s: not started")
        earliest_s = self.clock() + (self.setup.lead_s if lead_s is None else lead_s)
        with self._lock:
            anchor_s = self._anchor_s
        return anchor_s + max(1, math.ceil((earliest_s - anchor_s) / self.round_s - 1e-9)) * self.round_s

    def replace(self, tables: Mapping[str, WorkstationTable], at_s: float) -> TableEpoch:
        """Put a replan's tables in force at at_s (global clock; a boundary from `next_boundary_s`).

        Every job they name must be checked in where they name it (`wait_for_checkins(expected)`).
        A workstation the new tables leave without a job gets a table of one dummy slot: its
        ranks are all gone or stopped. A table that reaches its manager after at_s takes over
        at once, on the same boundaries (the round does not change), and the epoch names it late.
        """
        if self._anchor_s is None:
            raise LiveTimeshareError("replace: start first")
        missing = sorted(set(tables) - set(self.clients))
        if missing:
            raise LiveTimeshareError(f"tables: no manager for workstation {missing[0]}")
        rounds = {t.round_s for t in tables.values()}
        if rounds != {self.round_s}:
            raise LiveTimeshareError(f"tables: a replan keeps the round of {self.round_s:g} s, got {sorted(rounds)}")
        with self._send:
            late = self._send_tables(tables, at_s)
            epoch = TableEpoch(at_s, dict(tables), tuple(late))
            with self._lock:
                self.tables = dict(tables)
                self._anchor_s = at_s
                self._epochs.append(epoch)
                for w, table in tables.items():
                    self._named.setdefault(w, set()).update(table.processes)
        return epoch

    def _send_tables(self, tables: Mapping[str, WorkstationTable], at_s: float) -> list[str]:
        """Each live manager its table, round 0 at at_s on its own clock; the workstations reached after at_s.

        A table with no job goes as one dummy slot (the workstation's ranks are gone or stopped)."""
        late = []
        for w, table in tables.items():
            if self._is_dead(w):
                continue
            slots = wire_slots(table) or (WireSlot(None, 0.0, table.round_s),)
            client = self.clients[w]
            try:
                offset_s, rtt_s = self._offset(client)
                client.table(table.round_s, slots, at_s=at_s + offset_s, workstation=w, policy=self.setup.policy)
            except ManagerRefused as exc:
                raise TableRefused(f"{w}: table refused: {exc}") from None
            except ManagerUnreachable as exc:
                raise LiveTimeshareError(f"{w}: manager unreachable: {exc}") from None
            if self.clock() > at_s:
                late.append(w)
            with self._lock:
                self._sent.append(TableSent(w, at_s + offset_s, offset_s, rtt_s))
        return late

    def job_finished(self, job: str) -> None:
        """Check out whatever the finished `job` left registered (a rank that died before its own check-out)."""
        with self._lock:
            named = [w for w, jobs in self._named.items() if job in jobs]
        for w in named:
            if self._is_dead(w):
                continue
            client = self.clients[w]
            try:
                pids = client.status().jobs.get(job, ())
            except ManagerUnreachable:
                continue
            for pid in pids:
                try:
                    client.checkout(job, pid)
                except (ManagerRefused, ManagerUnreachable):  # a descendant, not a checked-in root; or gone meanwhile
                    continue
                with self._lock:
                    self._checked_out.append((w, job, pid))

    def stop(self, release: bool = True) -> LiveTimeshareRecord:
        """End the resyncs and the watchdog, collect the last timelines; with `release`, check every job out."""
        self._stop.set()
        for t in self._threads:
            t.join()
        if self._anchor_s is not None:
            self._poll_timelines()
        if release:
            for job in sorted({j for jobs in self._named.values() for j in jobs}):
                self.job_finished(job)
        with self._lock:
            return LiveTimeshareRecord(
                round_s=self.round_s, anchor_s=self._anchor_s if self._anchor_s is not None else math.nan,
                resync=self.setup.resync, tables=dict(self.tables), sent=tuple(self._sent), syncs=tuple(self._syncs),
                skews=tuple(self._skews),
                timelines={w: tuple(tl) for w, tl in self._timelines.items() if self._named.get(w)}, statuses=dict(self._statuses),
                dead=tuple(self._dead), checked_out=tuple(self._checked_out), watchdog_bound_s=self.watchdog_bound_s,
                epochs=tuple(self._epochs), policy=self.setup.policy)

    def __enter__(self) -> "LiveGlobalManager":
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if not self._stop.is_set():
            self.stop()

    # --- the threads --------------------------------------------------------------------------
    def _offset(self, client: ManagerClient) -> tuple[float, float]:
        """(the manager's clock - ours, the round trip), from one status request (Cristian)."""
        t0_s = self.clock()
        now_s = client.status().now_s
        t1_s = self.clock()
        return now_s - (t0_s + t1_s) / 2, t1_s - t0_s

    def _on_dead(self, dead: DeadManager) -> None:
        with self._lock:
            self._dead.append(dead)
        if self.on_dead is not None:
            self.on_dead(dead)

    def _is_dead(self, workstation: str) -> bool:
        with self._lock:
            return any(d.workstation == workstation for d in self._dead)

    def _keep(self) -> None:
        """Resync at the plan's times and poll the timelines between; a resync that fell a round behind is skipped.

        After a replan the times are those of the new tables, from their round 0."""
        assert self._anchor_s is not None
        epochs = 0
        next_poll_s = self.clock() + self.setup.timeline_poll_s
        while not self._stop.is_set():
            with self._lock:
                if len(self._epochs) != epochs:
                    epochs, anchor_s = len(self._epochs), self._anchor_s
                    times = self.setup.resync.iter_sync_times_s(self.tables, DEFAULT_HORIZON_S)
                    next_sync = next(times, None)
            now_s = self.clock()
            while next_sync is not None and anchor_s + next_sync < now_s - self.round_s:
                next_sync = next(times, None)
            if next_sync is not None and anchor_s + next_sync <= now_s:
                self._resync(math.floor(next_sync / self.round_s + 1e-9), epochs)
                next_sync = next(times, None)
            elif next_poll_s <= now_s:
                self._poll_timelines()
                next_poll_s = max(next_poll_s + self.setup.timeline_poll_s, now_s)
            else:
                due_s = min(next_poll_s, anchor_s + next_sync if next_sync is not None else math.inf)
                self._stop.wait(max(0.0, min(due_s - now_s, self.setup.timeline_poll_s)))

    def _resync(self, round_index: int, epoch: int) -> None:
        with self._send:
            with self._lock:
                if len(self._epochs) != epoch:  # a replan went out meanwhile: its own round 0 is next
                    return
                boundary_s = self._anchor_s + round_index * self.round_s
                workstations = [w for w in self.clients if w in self.tables]
            for w in workstations:
                if self._is_dead(w):
                    continue
                client = self.clients[w]
                sent_s = self.clock()
                try:
                    offset_s, rtt_s = self._offset(client)
                    correction_s = client.sync(round_index, boundary_s + offset_s)
                    record = SyncRecord(w, round_index, sent_s, offset_s, rtt_s, correction_s)
                except (ManagerUnreachable, ManagerRefused) as exc:
                    record = SyncRecord(w, round_index, sent_s, None, None, None, str(exc).splitlines()[0])
                with self._lock:
                    self._syncs.append(record)

    def _poll_timelines(self) -> None:
        with self._lock:
            polled = [w for w in self.clients if self._named.get(w)]
            anchors = [e.anchor_s for e in self._epochs]
        for w in polled:
            if self._is_dead(w):
                continue
            client = self.clients[w]
            try:
                t0_s = self.clock()
                raw = client.request({"op": "status", "timeline": True})
                t1_s = self.clock()
            except (ManagerUnreachable, ManagerRefused):
                continue
            status = ManagerStatus.of(raw)
            offset_s = status.now_s - (t0_s + t1_s) / 2
            skew = None
            if raw.get("anchor_s") is not None and anchors:
                # against the round 0 of the epoch it is in (a pending replan has not taken over yet)
                local_s = raw["anchor_s"] - offset_s
                nearest_s = min(anchors, key=lambda a: abs(local_s - a))
                skew = SkewSample(w, (t0_s + t1_s) / 2, local_s - nearest_s, t1_s - t0_s)
            with self._lock:
                if skew is not None:
                    self._skews.append(skew)
                self._statuses[w] = status
                kept = self._timelines[w]
                last_s = kept[-1][0] if kept else -math.inf
                kept.extend(e for e in status.timeline if e[0] > last_s)
