"""A time-sharing run end to end (Zhou & Brent §2-§5): dedicated runs for S_d, then every job time-shared.

Not the space-sharing executor: here several jobs' ranks share a workstation, under fixed
scheduling tables kept by the local job managers (docs/timeshare.md). In order:
1. each job alone, dedicated (β = 1, no manager), on one workstation and on its p: T_d(1),
   T_d(p), so S_d(p) = T_d(1) / T_d(p) (skipped with `dedicated=False`);
2. a local manager on every workstation a table uses (`TimeshareBackend.start_managers`);
3. every job's ranks launched at once, told their manager (NOWLAB_TIMESHARE) and their name;
4. the live global manager waits for the check-ins, puts the tables in force with one common
   round 0, resyncs by the plan, and checks each job out as it ends;
5. whatever happens, the global manager stops (every job checked out: nothing left stopped),
   unfinished jobs are ended, and every manager is stopped (its SIGTERM handler continues what
   it held; its guardian does if it dies otherwise).
Where the processes run is the backend's: managers and ranks on this host's Open MPI
(`experiments/studies/zhou_brent/host.py`, for tests) or in a cluster's workstations
(`experiments/studies/zhou_brent/cluster.py`). Every job starts at once under fixed tables; a spec
with arrivals and replanning is an arrival stream, run by experiments/studies/zhou_brent/stream.py.
With `OsAlone` in place of the LiveSetup, steps 2 and 4 are left out: no coscheduling at all
(Zhou & Brent §1's local scheduling), the arm that shows what the managers are for.
"""
from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from experiments.studies.zhou_brent.global_manager import LiveGlobalManager, LiveSetup, LiveTimeshareRecord
from experiments.studies.zhou_brent.owners import LiveOwners, OwnerBackend, OwnerCommand, OwnerSetup
from experiments.studies.zhou_brent.spec import JobEntry, TimeshareSpec
from scheduler.timeshare.tables import Resync, ResyncPlan
from experiments.studies.zhou_brent.manager_client import ManagerClient
from workloads.host.launch import Handle
from workloads.wire.control import RESULT_PREFIX

SYNTHETIC_PHASE_REF_S = 0.5   # a synthetic job's phase: half a reference-second of work, all ranks
ANSWER_KEYS = ("x", "x_norm", "residual_norm", "iterations", "phases_done", "data_intact")  # equal to the dedicated run's
Progress = Callable[[str, int, int], None]


class TimeshareRunError(RuntimeError):
    """A run that cannot go on: one line naming the job, workstation or field."""


class JobFailed(TimeshareRunError):
    """A job's ranks ended badly. `output` is all they wrote, for the run's folder: the line in the
    message is the cause where one can be found, and Open MPI's abort notice ends the output."""

    def __init__(self, job: str, code: object, output: str) -> None:
        super().__init__(f"job {job}: exit code {code}: {failure_cause(output)}")
        self.job, self.output = job, output


# A Python exception's last line ("ValueError: ..."), then Open MPI naming a rank that died.
_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Cancelled|Interrupt|Exit)\b")
_DEAD_RANK = re.compile(r"exited on signal|was killed")


def failure_cause(output: str) -> str:
    """The most telling line of a failed job's output: its last exception line, else the last
    line naming a dead rank, else its last three lines (Open MPI's abort notice ends the output,
    and the cause is above it)."""
    lines = [ln.strip() for ln in output.strip().splitlines() if ln.strip()]
    causes = [ln for ln in lines if _EXCEPTION.match(ln)] or [ln for ln in lines if _DEAD_RANK.search(ln)]
    return causes[-1] if causes else " | ".join(lines[-3:])


def quiet(_stage: str, _done: int, _total: int) -> None:
    return None


@dataclass(frozen=True, slots=True)
class JobProgram:
    """What job `job` runs: a workload's argv without --job and --hosts, on `hosts` (rank i on hosts[i])."""

    job: str
    hosts: tuple[str, ...]
    beta: float
    argv: tuple[str, ...]

    def argv_on(self, hosts: Sequence[str], name: str | None = None) -> list[str]:
        return [*self.argv, "--job", name or self.job, "--hosts", ",".join(hosts)]


def programs(spec: TimeshareSpec, phase_ref_s: float = SYNTHETIC_PHASE_REF_S) -> tuple[JobProgram, ...]:
    """Each job of the spec as its workload: the synthetic one, its demand_ref_s in phases of about
    phase_ref_s; or CG of its n and iterations, printing its x so the answers can be compared."""
    entries = {e.id: e for e in spec.job}
    return tuple(JobProgram(a.share.job, a.share.workstations, a.share.beta, job_argv(entries[a.share.job], phase_ref_s))
                 for a in spec.allocations())


def job_argv(entry: JobEntry, phase_ref_s: float = SYNTHETIC_PHASE_REF_S) -> tuple[str, ...]:
    """The workload one job of a spec runs, without --job and --hosts (`programs`)."""
    if not phase_ref_s > 0:
        raise TimeshareRunError(f"phase_ref_s: must be > 0 reference-seconds, got {phase_ref_s}")
    # polite is the workloads' default: its argv is the one every run had before the knob
    wait = ("--wait", entry.wait) if entry.wait != "polite" else ()
    if entry.cg is not None:
        return ("python3", "-m", "workloads.cg", "--n", str(entry.cg.n), "--iterations", str(entry.cg.iterations),
                "--print-x", *wait)
    phases = max(1, round(entry.demand_ref_s / phase_ref_s))
    return ("python3", "-m", "workloads.synthetic", "--phases", str(phases), "--work", repr(entry.demand_ref_s / phases),
            *wait)


def wait_of(argv: Sequence[str]) -> str:
    """How a program's ranks wait on MPI, read from its argv (the last --wait; none: polite, the
    workloads' default). From the argv, not the spec, so a program built in Python is recorded as it ran."""
    given = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--wait"]
    return given[-1] if given else "polite"


def parse_resync(text: str) -> ResyncPlan:
    """`strict`, `none`, `loose` (every round) or `loose:K` (every K rounds); one line naming the value if bad."""
    kind, _, every = text.strip().lower().partition(":")
    try:
        resync = Resync(kind)
    except ValueError:
        raise TimeshareRunError(f"resync: unknown {text!r} (known: strict, loose:K, none)") from None
    if every and resync is not Resync.LOOSE:
        raise TimeshareRunError(f"resync: only loose takes a round count, got {text!r}")
    if every and not every.isdigit() or every and int(every) < 1:
        raise TimeshareRunError(f"resync: K in loose:K must be a whole number >= 1, got {text!r}")
    return ResyncPlan(resync, int(every) if every else 1)


OS_ALONE = "os"  # the run's variant when no manager ran (`nowlab timeshare run --resync os`)


@dataclass(frozen=True, slots=True)
class OsAlone:
    """No coscheduling at all: no managers, no tables; every job's ranks launched at once on its
    workstations (without NOWLAB_TIMESHARE, as the dedicated runs are, so no rank checks in) and
    sharing each workstation's CPU under the kernel's scheduler alone: Zhou & Brent §1's local
    scheduling, against which coscheduling is measured.

    A runner's arm, not a `scheduler.timeshare.Resync`: a Resync says how a global manager
    realigns the tables its local managers keep, and this arm has neither tables nor managers. In
    the pure vocabulary it would be a plan with no tables for the simulator to run (its processes
    progress only in their slots), so it lives here, where processes are launched.
    """


def parse_variant(text: str) -> ResyncPlan | OsAlone:
    """`os` (no managers: OsAlone), or a resync plan of the managers (`parse_resync`)."""
    return OsAlone() if text.strip().lower() == OS_ALONE else parse_resync(text)


class TimeshareBackend(OwnerBackend, Protocol):
    """Where managers, ranks and owners run: this host (tests) or a cluster's workstations."""

    def start_managers(self, workstations: Sequence[str]) -> dict[str, ManagerClient]: ...
    def stop_managers(self) -> None: ...
    def rank_env(self) -> dict[str, str]: ...   # how a rank finds its workstation's manager
    def launch(self, hosts: Sequence[str], argv: Sequence[str], env: Mapping[str, str] | None) -> Handle: ...

    drift_ppm: Mapping[str, float]  # each workstation's manager clock, run off by this (none: one clock)


@dataclass(frozen=True, slots=True)
class JobRun:
    """One run of one job: launched and done on the host's clock; the workload's own result line."""

    job: str
    hosts: tuple[str, ...]
    launched_s: float
    done_s: float
    result: Mapping[str, Any]

    @property
    def compute_s(self) -> float:
        """The workload's own time from its first iteration to its last (MPI start-up left out)."""
        return float(self.result["compute_s"])


@dataclass(frozen=True, slots=True)
class TimeshareRun:
    """Everything the report needs from one run."""

    spec_name: str
    programs: tuple[JobProgram, ...]
    dedicated: Mapping[tuple[str, int], JobRun]     # (job, p) -> its dedicated run
    shared: Mapping[str, JobRun]
    live: LiveTimeshareRecord | None                # None: no managers ran (OsAlone)
    answers_equal: Mapping[str, bool | None]        # None: no dedicated run on p to compare with
    started_s: float                                # the time-shared jobs' launch, host clock
    owner_commands: tuple[OwnerCommand, ...] | None = None  # the owners' commands while time-shared; None: no owners
    drift_ppm: Mapping[str, float] = field(default_factory=dict)  # managers' clocks run off (emulated drift)


def result_of(output: str, job: str) -> dict[str, Any]:
    """The workload's result line (its last NOWLAB_RESULT line) as a dict.

    A long line (CG's x, 12 KB) was once seen cut at 10 KiB on the host's Open MPI under time
    sharing (not reproduced since; a coordinator stopped by its manager mid-write is the
    suspect): the lines after it are joined on until the JSON is whole.
    """
    lines = output.splitlines()
    starts = [i for i, ln in enumerate(lines) if ln.startswith(RESULT_PREFIX)]
    if not starts:
        raise TimeshareRunError(f"job {job}: no {RESULT_PREFIX.strip()} line in its output")
    text = lines[starts[-1]][len(RESULT_PREFIX):]
    for more in [*lines[starts[-1] + 1:], None]:
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            if more is None:
                raise TimeshareRunError(f"job {job}: its result line is not JSON ({exc.msg} at char {exc.pos} "
                                        f"of {len(text)})") from None
            text += more
    raise AssertionError("unreachable")


def finish_job(handle: Handle, job: str, hosts: Sequence[str], launched_s: float, timeout_s: float) -> JobRun:
    done = handle.wait(timeout_s)
    code = getattr(done, "exit_code", None)
    if code != 0:
        raise JobFailed(job, code, "\n".join(filter(None, (getattr(done, "stdout", "") or "",
                                                            getattr(done, "stderr", "") or ""))))
    result = result_of(getattr(done, "stdout", ""), job)
    return JobRun(job, tuple(hosts), launched_s, float(result.get("done_at", time.time())), result)


def tear_down(handles: Iterable[Handle], owners: LiveOwners | None, backend: TimeshareBackend
              ) -> tuple[OwnerCommand, ...] | None:
    """Whatever a time-sharing run ends with: its jobs ended, its owners stopped (their commands
    returned; None if it had none), then every manager stopped, even if a step before failed."""
    for h in handles:
        h.terminate()
    try:
        return owners.stop() if owners is not None else None
    finally:
        backend.stop_managers()


def same_answer(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """The answer keys both results give are equal (CG's x to the last bit, the synthetic's data intact)."""
    keys = [k for k in ANSWER_KEYS if k in a and k in b]
    return bool(keys) and all(a[k] == b[k] for k in keys)


@dataclass
class TimeshareRunner:
    """Runs `programs` under `spec`'s tables on `backend` (module docstring)."""

    spec: TimeshareSpec
    programs: tuple[JobProgram, ...]
    backend: TimeshareBackend
    setup: LiveSetup | OsAlone                     # OsAlone: no managers, the kernel schedules the ranks
    dedicated: bool = True
    job_timeout_s: float = 3600.0
    progress: Progress = quiet
    owners: OwnerSetup | None = None   # owner daemons beside the time-shared jobs (not the dedicated runs)
    _dedicated_runs: dict[tuple[str, int], JobRun] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        if self.spec.simulate.replan:
            raise TimeshareRunError("simulate.replan: this runner keeps its tables fixed; a stream is "
                                    "experiments/studies/zhou_brent/stream.py's")
        names = [p.job for p in self.programs]
        known = {a.share.job: a.share for a in self.spec.allocations()}
        for p in self.programs:
            if p.job not in known:
                raise TimeshareRunError(f"programs: job {p.job} is not in the spec (known: {', '.join(known)})")
            if p.hosts != known[p.job].workstations:
                raise TimeshareRunError(f"programs: job {p.job} runs on {list(p.hosts)}, the tables put it on "
                                        f"{list(known[p.job].workstations)}")
        lacking = sorted(set(known) - set(names))
        if lacking:
            raise TimeshareRunError(f"programs: no program for job {lacking[0]}")
        if isinstance(self.setup, OsAlone) and self.owners is not None:
            raise TimeshareRunError("simulate.owners: owners check in with the local managers, and the OS-alone "
                                    "arm starts none")

    def run(self) -> TimeshareRun:
        if self.dedicated:
            self._run_dedicated()
        if isinstance(self.setup, OsAlone):
            started_s, shared = self._run_os_alone()
            live, commands = None, None
        else:
            started_s, shared, live, commands = self._run_managed(self.setup)
        answers = {p.job: (same_answer(shared[p.job].result, self._dedicated_runs[(p.job, len(p.hosts))].result)
                           if (p.job, len(p.hosts)) in self._dedicated_runs else None) for p in self.programs}
        return TimeshareRun(self.spec.name, self.programs, dict(self._dedicated_runs), shared, live, answers, started_s,
                            commands, dict(self.backend.drift_ppm))

    def _run_managed(self, setup: LiveSetup) -> tuple[float, dict[str, JobRun], LiveTimeshareRecord,
                                                      tuple[OwnerCommand, ...] | None]:
        """Steps 2-5 of the module docstring: managers, every job under the tables, everything stopped."""
        tables = {w: t for w, t in self.spec.tables().items() if t.processes}
        handles: dict[str, Handle] = {}
        launched: dict[str, float] = {}
        owners = LiveOwners(self.backend, self.owners) if self.owners is not None else None
        try:
            clients = self.backend.start_managers(sorted(set(tables) | set(self.owners.processes if self.owners
                                                                           else ())))
            if owners is not None:
                owners.start(clients)
            gm = LiveGlobalManager(tables, clients, setup)
            with gm:
                started_s = self._launch(self.backend.rank_env(), handles, launched)
                gm.wait_for_checkins()
                gm.start()
                shared = self._collect(handles, launched, started_s, gm.job_finished)
                live = gm.stop()
        finally:
            commands = tear_down(handles.values(), owners, self.backend)
        return started_s, shared, live, commands

    def _run_os_alone(self) -> tuple[float, dict[str, JobRun]]:
        """Every job's ranks at once, no manager started, no NOWLAB_TIMESHARE: the kernel alone shares the CPU."""
        handles: dict[str, Handle] = {}
        launched: dict[str, float] = {}
        try:
            started_s = self._launch(None, handles, launched)
            return started_s, self._collect(handles, launched, started_s, lambda _job: None)
        finally:
            for h in handles.values():
                h.terminate()

    def _launch(self, env: Mapping[str, str] | None, handles: dict[str, Handle], launched: dict[str, float]) -> float:
        """Every program's ranks, one launch after another (into `handles` as they go, so a failure
        part way still ends those started); the time the first went."""
        started_s = time.time()
        for p in self.programs:
            launched[p.job] = time.time()
            handles[p.job] = self.backend.launch(p.hosts, p.argv_on(p.hosts), env)
        return started_s

    def _collect(self, handles: Mapping[str, Handle], launched: Mapping[str, float], started_s: float,
                 on_done: Callable[[str], None]) -> dict[str, JobRun]:
        """Each job's run as it ends (`on_done` told of it at once), until all have; job_timeout_s bounds the wait."""
        shared: dict[str, JobRun] = {}
        self.progress("time-shared", 0, len(handles))
        while len(shared) < len(handles):
            for job, h in handles.items():
                if job not in shared and h.poll() is not None:
                    shared[job] = finish_job(h, job, self._program(job).hosts, launched[job], 30.0)
                    on_done(job)
                    self.progress("time-shared", len(shared), len(handles))
            if time.time() - started_s > self.job_timeout_s:
                raise TimeshareRunError(f"job_timeout_s: {len(handles) - len(shared)} jobs still running "
                                        f"after {self.job_timeout_s:g} s")
            time.sleep(0.1)
        return shared

    @property
    def dedicated_runs(self) -> dict[tuple[str, int], JobRun]:
        """The dedicated runs made so far: kept by the caller when a later step fails."""
        return dict(self._dedicated_runs)

    def _program(self, job: str) -> JobProgram:
        return next(p for p in self.programs if p.job == job)

    def _run_dedicated(self) -> None:
        """Each job alone on its first workstation and on all of its own, one run at a time."""
        runs = [(p, hosts) for p in self.programs for hosts in {p.hosts[:1]: None, p.hosts: None}]
        for i, (p, hosts) in enumerate(runs):
            self.progress("dedicated", i, len(runs))
            launched_s = time.time()
            handle = self.backend.launch(hosts, p.argv_on(hosts, f"{p.job}-dedicated-p{len(hosts)}"), None)
            try:
                run = finish_job(handle, p.job, hosts, launched_s, self.job_timeout_s)
            finally:
                handle.terminate()
            self._dedicated_runs[(p.job, len(hosts))] = run
        self.progress("dedicated", len(runs), len(runs))
