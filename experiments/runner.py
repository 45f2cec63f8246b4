"""`nowlab run CONFIG`: every (policy, rate, replication) cell of an experiment, live.

The runner owns the order of things and their clean-up, nothing else: the
cluster comes up (and always goes down), is calibrated, its classes are
profiled dedicated when no cached profile matches, the load starts, and each
cell's stream goes through the live executor. Every job is written to the
results store the moment it leaves the system, so an interruption (Ctrl-C,
SIGTERM, a killed runner, a dead workstation) loses nothing: `--resume`
carries on in a new *segment* of the same cell, with the jobs still to run
(those unfinished when it stopped, then the ones not yet arrived, on the
stream's own clock from where it stopped).

However the runner ends (its last cell done, Ctrl-C, SIGTERM, an exception
in any step), no cell is left `running`: a cell cut short is `interrupted`
with the reason, and a cell a killed runner left `running` is marked so when
the next run starts. A cell whose policy breaks a rule (a `PolicyError`: the
policy's bug, not the run's) is `failed` with the one line that names the
rule, the job and the time, and the run goes on with the next cell. Steps that only derive data (a segment's artifacts, a
cell's availability, the monitor's series) go through `steps.attempt`: an
error there is stored and printed, and the run goes on.
"""
from __future__ import annotations

import dataclasses
import gc
import signal
import sqlite3
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator


from experiments import arrivals, delivered, owner_schedules, profile_checks, steps
from experiments.census import Census, malloc_trim
from experiments.governor_hold import governor_hold
from experiments.config import ExperimentConfig
from experiments.models import loop, speed_basis
from experiments.profiles import cached, measure, profile_key, run_check
from experiments.store import ResultsStore
from scheduler.jobs import FinishedJob, JobRecord, Outcome, SubmittedJob
from experiments.traces import swf
from scheduler.live import Arrival
from scheduler.live.executor import LiveExecutor, Stopped
from scheduler.live.result import JobState, LiveResult
from scheduler.live.stream import JobClass
from scheduler.model import SevcikModel
from scheduler.state_machine import PolicyError
from scheduler.user_policies import rule_broken
from testbed import backends
from testbed import lifecycle, meter, state
from testbed.load import owners
from testbed.load import traffic
from testbed.load.caps import CapController
from testbed.calibrate import calibrate
from testbed.cluster import Cluster
from testbed.image import image_ref
from testbed.load.monitor import Monitor
from testbed import speed_fit
from testbed.spec import ClusterSpec, SpecError, load as load_spec
from workloads.host.pool_client import PoolLauncher

Update = Callable[[str, int, int], None]
Log = Callable[[str], None]
#: The next round's cells, or None to stop (called before each round, with the cluster ready).
Rounds = Callable[[], "list[tuple[str, float, int]] | None"]


class RunStopped(RuntimeError):
    """The run stopped early and can be resumed; the message says how."""


#: How long a workstation may stay paused through the engine before its jobs are given up.
#: Longer than any owner burst the configs render (those are freezes nowlab makes itself and
#: does not count), short beside a job's 30 min timeout.
PAUSED_LIMIT_S = 10.0
GOVERNOR_SHORT = 0.10  # share of quota settings at the ceiling before the cells that earns a warning


def cluster_name(config: ExperimentConfig) -> str:
    return f"x-{config.name}"[:31].rstrip("-")


def cluster_spec(config: ExperimentConfig) -> ClusterSpec:
    """The config's cluster, its speeds times `speed_scale`, with its owner load put on the named
    workstations (as daemons; owners given as a schedule are carried out per segment instead,
    `Runner._segment`)."""
    spec = load_spec(config.cluster).scaled(config.speed_scale)
    daemons = {} if owner_schedules.in_use(config) else config.load.owner
    workstations = [w.model_copy(update={"owner": daemons.get(w.name, w.owner)})
                    for w in spec.workstations]
    return spec.model_copy(update={"workstations": workstations}).with_name(cluster_name(config))


def cells(config: ExperimentConfig) -> list[tuple[str, float, int]]:
    """Replication-major, then rate, then policy: drift in the host hits every policy alike."""
    a = config.arrivals
    return [(policy, rate, rep) for rep in range(a.replications) for rate in a.rates for policy in config.policies]


def stream_for(config: ExperimentConfig, rate: float, replication: int) -> list[SubmittedJob]:
    """The cell's stream, its demands rounded to whole phases (what the jobs really get)."""
    a = config.arrivals
    if a.swf is None:
        jobs = arrivals.stream(a.mix, rate, a.jobs, demand=a.demand, seed=a.seed, replication=replication)
    else:
        jobs = swf_stream(config, rate)
    return [dataclasses.replace(j, demand=config.classes[j.cls].realized(j.demand)) for j in jobs]


def swf_stream(config: ExperimentConfig, rate: float) -> list[SubmittedJob]:
    """The trace's first jobs, gaps rescaled to a mean arrival rate of `rate` (the same for every replication)."""
    src = config.arrivals.swf
    trace = swf.read_swf(src.path)
    P = len(load_spec(config.cluster).names)

    def imported(scale: float) -> list[SubmittedJob]:
        return swf.to_stream(trace, classes=src.classes, time_scale=scale, max_procs=P,
                             demand_from=src.demand_from, n=config.arrivals.jobs).jobs

    raw = imported(1.0)
    if len(raw) < 2 or raw[-1].arrival_s <= 0:
        raise ValueError(f"arrivals.swf.path: {src.path} has too few jobs with distinct submit times")
    mean_gap = raw[-1].arrival_s / (len(raw) - 1)
    return imported((1.0 / rate) / mean_gap)


def profile_keys(config: ExperimentConfig, spec: ClusterSpec, hosts: list[str]) -> dict[str, str]:
    """Each class's profile cache key when profiled on the first max(procs) of `hosts` (also `--estimate`'s)."""
    prof = config.profile
    # A governed workstation's cap is what placement reserved at the factor it measured, which
    # differs every time: its speed is what the profile depends on (a raw cap stays a number,
    # so the keys of profiles taken on raw caps are unchanged).
    cpus = [f"speed {spec.speed(h)}" if spec.speed(h) is not None else spec.cpu(h) for h in hosts[:max(prof.procs)]]
    image = image_ref().image
    return {name: profile_key(cls, prof, cpus, image, spec.defaults.host_idle) for name, cls in config.classes.items()}


def class_model(profile: dict, demand: float, pmax: int | None) -> SevcikModel:
    """What a policy is told about a job: the class's fit scaled to the job's demand."""
    W, alpha, beta = loop.stored(profile)  # as the predictions read it (experiments/replay.py)
    return SevcikModel(W=W * demand, alpha=alpha * demand, beta=beta * demand, pmax=pmax)


def live_arrivals(config: ExperimentConfig, profiles: dict[str, dict], jobs: list[SubmittedJob],
                  offset: float) -> list[Arrival]:
    """Stream jobs as the live executor takes them: each class's command line scaled to the job's
    demand, its profiled model, and its arrival on the segment's clock (stream time - offset)."""
    out = []
    for j in sorted(jobs, key=lambda j: (max(0.0, j.arrival_s - offset), j.id)):
        cls = config.classes[j.cls]
        caps = [x for x in (cls.pmax, j.requested_procs) if x is not None]
        pmax = min(caps) if caps else None  # None: the fit's optimum (Sevcik eq. 6)
        profile = speed_basis.profile_for(profiles[j.cls], config.profile.speed_basis)  # as the predictions read it
        jc = JobClass(j.cls, tuple(cls.argv(j.demand)), class_model(profile, j.demand, pmax))
        out.append(Arrival(j.id, jc, max(0.0, j.arrival_s - offset)))
    return out


@dataclasses.dataclass
class _Segment:
    """One segment of a cell as it runs: what its callbacks (a job leaving, the watch) share."""

    cell: int
    seg: int
    offset: float  # stream time at which the segment's clock starts
    hosts: list[str]
    by_id: dict[int, SubmittedJob]
    remaining: list[SubmittedJob]
    finished: set[int]
    label: str
    stop: threading.Event = dataclasses.field(default_factory=threading.Event)
    lost: list[str] = dataclasses.field(default_factory=list)
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)
    executor: LiveExecutor | None = None

    def outcome(self, record: JobRecord, status: Outcome, error: str) -> FinishedJob:
        return FinishedJob.of(self.by_id[record.id], record, offset_s=self.offset, status=status, error=error)


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """A killed runner (SIGTERM) cleans up exactly like Ctrl-C."""
    def handler(_signum, _frame):
        raise KeyboardInterrupt
    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def meter_dir(c: Cluster) -> Path | None:
    """Where the cluster's speed keeper writes (None: a backend without caps has no meter)."""
    return c.meter_dir


def reclaim(name: str, kind: str = backends.DEFAULT) -> None:
    """Remove a cluster a killed run left behind; refuse one a live process still uses."""
    backend = backends.get(kind)
    if name not in backend.cluster_names():
        return
    if not backend.orphaned(name):
        raise RunStopped(f"cluster {name!r} is in use by another running nowlab process")
    backend.remove(name)
    state.forget(name)


class Runner:
    def __init__(self, config: ExperimentConfig, store: ResultsStore, *, update: Update, log: Log,
                 reprofile: bool = False) -> None:
        self.config = config
        self.reprofile = reprofile  # measure the classes again even if a cached profile matches
        self.store = store
        self.update = update
        self.log = log
        self.cluster: Cluster | None = None
        self.monitor: Monitor | None = None
        self.hosts: list[str] = []
        self.calibration_id = 0
        self.profiles: dict[str, dict] = {}

    # -- the whole run ----------------------------------------------------------
    def run(self, rounds: Rounds | None = None) -> None:
        """Every cell of the config not yet done; with `rounds`, instead the cells it gives, round after
        round, until it gives None (`--until-resolved`: experiments/until_resolved.py decides them)."""
        todo = [(p, r, rep) for p, r, rep in cells(self.config)
                if self._cell_id(p, r, rep) is None or self.store.cell_status(self._cell_id(p, r, rep)) != "done"]
        if not todo and rounds is None:
            self.log("every cell is already done")
            return
        spec = cluster_spec(self.config)
        kind = self.store.backend  # chosen when the run began; a resume keeps it
        reclaim(spec.name, kind)  # refuses while another runner still uses the cluster, so no cell is live now
        for cell in self.store.interrupt_running("the runner stopped without clean-up (killed or crashed)"):
            self.log(f"cell {cell} was left running by a killed runner: marked interrupted")
        with sigterm_as_interrupt():
            self.cluster = lifecycle.up(spec, progress=self.update, backend=backends.get(kind, spec))
            try:
                self._prepare()
                if rounds is None:
                    self.run_cells(todo)
                else:
                    self.run_rounds(rounds)
            finally:
                self._teardown()

    def run_cells(self, todo: list[tuple[str, float, int]]) -> None:
        """Each cell in turn on the prepared cluster (hosts, calibration and profiles set)."""
        census = Census.from_env()  # opt-in: what the runner holds after each cell (issue 19)
        if census is not None:
            census.take("prepared")
        for n, (policy, rate, rep) in enumerate(todo):
            self.update("cells", n, len(todo))
            self._cell(policy, rate, rep)
            self._check_profile()
            if census is not None:
                census.take(f"{policy} {rate} rep {rep}")  # its own collection and trim, measured
            else:  # what a cell freed goes back to the system, not kept by the heaps for the next
                gc.collect()
                malloc_trim()
        self.update("cells", len(todo), len(todo))

    def run_rounds(self, rounds: Rounds) -> None:
        """The cells `rounds` gives, a round at a time, until it gives None (it reads the store between rounds)."""
        while (todo := rounds()) is not None:
            self.run_cells(todo)

    def _cell_id(self, policy: str, rate: float, rep: int) -> int | None:
        frame = self.store.cells_frame()
        if frame.empty:
            return None
        hit = frame[(frame.policy == policy) & (frame.rate == rate) & (frame.replication == rep)]
        return int(hit.iloc[0]["cell_id"]) if len(hit) else None

    def _prepare(self) -> None:
        c = self.cluster
        self.hosts = list(c.workstations)
        self.log("calibrating the workstations")
        cal = calibrate(c, cpu_seconds=3, link_seconds=2, links=[], progress=self.update)
        cal.pop("spec", None)
        # governed workstations deliver their spec's speed whatever cores that takes on their
        # core: the predictions take speeds from here, not from the cores calibration measured
        cal["speed_ref_cores"] = {ws: c.spec.speed(ws) for ws in self.hosts if c.spec.speed(ws) is not None}
        self.calibration_id = self.store.add_calibration(cal)
        self._profile()
        self._governor_check()
        for t in self.config.load.traffic:
            traffic.start(c, t.src, t.dst, t.rate)
        if self.config.load.owner or self.config.load.traffic:
            self.monitor = Monitor(c, interval=2.0).start()

    def _profile(self) -> None:
        """Dedicated profiles (owners stopped meanwhile); a cached or stored one is reused."""
        c = self.cluster
        stored = self.store.profiles()
        prof = self.config.profile
        hosts = self.hosts[:max(prof.procs)]
        keys = profile_keys(self.config, c.spec, hosts)
        owners_stopped = False
        try:
            for name, cls in self.config.classes.items():
                key = keys[name]
                data = stored.get(name) if stored.get(name, {}).get("key") == key else cached(key)
                if self.reprofile and name not in stored:
                    data = None
                if data is None:
                    if not owners_stopped and self.config.load.owner:
                        owners.stop(c)
                        owners_stopped = True
                    self.log(f"profiling class {name} on p = {prof.procs}")
                    data = measure(c, hosts, name, cls, prof, key, self.log)
                else:
                    self.log(f"class {name}: profile {key} reused")
                self.store.set_profile(name, data)
                self.profiles[name] = profile_checks.at_start(data)  # what every cell's policy is told
        finally:
            if owners_stopped:
                owners.start_from_spec(c)

    def _check_profile(self) -> None:
        """One profile run after a cell when the config asks for them (experiments/profile_checks.py),
        stored among the class's samples; owners stopped meanwhile, as for the profile itself."""
        sizes = self.config.profile.between_cells
        stored = self.store.profiles()
        index = profile_checks.done(stored)
        nxt = profile_checks.next_check(list(self.config.classes), sizes, index)
        if nxt is None:
            return
        name, p = nxt
        if p > len(self.hosts) or name not in stored:
            self.log(f"profile check {index} skipped: {p} workstations asked, {len(self.hosts)} left")
            return
        daemons = bool(self.config.load.owner) and not owner_schedules.in_use(self.config)
        if daemons:
            owners.stop(self.cluster)
        try:
            sample = run_check(self.cluster, self.hosts, name, self.config.classes[name], self.config.profile, p,
                               index, self.log)
        except RuntimeError as exc:  # a check only sharpens the prediction: the run goes on without it
            self.log(f"warning: profile check {index} ({name} on {p}) failed: {steps.one_line(exc)}")
            return
        finally:
            if daemons:
                owners.start_from_spec(self.cluster)
        self.store.update_profile(name, profile_checks.with_check(stored[name], sample))

    def _teardown(self) -> None:
        c = self.cluster
        try:
            if self.monitor is not None:
                m = self.monitor
                m.stop()
                steps.attempt(self.store, f"{steps.MONITOR}-{self.calibration_id}",
                              lambda: steps.save_monitor(self.store, self.calibration_id, *m.frames()),
                              log=self.log,
                              payload=lambda: steps.monitor_payload(*(f.to_dict("records") for f in m.frames())))
            try:
                self._save_meter()
            except (OSError, sqlite3.Error) as exc:  # raw times stay; only normalising needs these
                self.log(f"the meter's series was not kept: {exc}")
        finally:
            removed = c.down()
            self.log(f"cluster {c.name} down: {removed['containers']} containers removed")

    def _governor_check(self) -> None:
        """Say before the cells, not in the report an hour later, when the governor could not hold
        the speeds so far (calibration and profiles: minutes of the cluster's own load). Placement
        reads idle cores; under load the keeper read Figs. 3 and 4's at 1.26-1.29 where placement
        had read 1.71-1.77, and the quotas sat at their ceiling half the time."""
        d = meter_dir(self.cluster)
        path = d / meter.QUOTAS_CSV if d is not None else None
        if path is None or not path.exists():
            return
        held = governor_hold([path.read_text()], start=None)
        if held is None or held.at_ceiling <= GOVERNOR_SHORT:
            return
        k = self._scale_at(held.core_factors)
        room = (f"--speed-scale {k:g} fits the keeper's reading" if k is not None
                else "no --speed-scale fits the keeper's reading")
        self.log(f"warning: so far the governor was at its ceiling in {held.at_ceiling:.0%} of its settings and "
                 f"held a mean {held.held_mean:.2f} of the speeds (the keeper reads the cores at "
                 f"{held.factor_median:.2f}): raw times will run slow, which the report's speed-normalised "
                 f"errors allow for; to give it room, stop and run slower ({room})")

    def _scale_at(self, factors: dict[int, float]) -> float | None:
        """The --speed-scale that placement would take at the keeper's per-core factors (None: none)."""
        spec = load_spec(self.config.cluster)  # the spec's own speeds: the answer is a scale of them
        cores = sorted(factors)
        if not cores:
            return None
        try:
            return speed_fit.fitting_scale(spec, cores, {}, factors)
        except SpecError:  # raw caps that no longer fit: no scale of the speeds helps
            return None

    def _save_meter(self) -> None:
        """The meter's samples and the quotas set, kept with the run (down removes the originals)."""
        d = meter_dir(self.cluster)
        if d is None:
            return
        for name in (meter.SAMPLES_CSV, meter.QUOTAS_CSV):
            path = d / name
            text = path.read_text() if path.exists() else ""
            self.store.add_artifact(None, f"{path.stem}-{self.calibration_id}.csv", text)

    # -- one cell ----------------------------------------------------------------
    def _cell(self, policy: str, rate: float, rep: int) -> None:
        stream = stream_for(self.config, rate, rep)
        cell = self.store.ensure_cell(policy, rate, rep, stream)
        try:
            self._cell_segments(cell, policy, rate, rep, stream)
        except PolicyError as exc:  # the policy's bug, not the run's: this cell failed, the others go on
            self.store.set_cell_status(cell, "failed", steps.one_line(exc))
            self.log(f"cell {cell} ({policy} at {rate:g}/s, rep {rep}) failed: {steps.one_line(exc)}")
        except BaseException as exc:  # Ctrl-C, SIGTERM, RunStopped, a bug: never leave the cell `running`
            self._interrupted(cell, exc)
            raise

    def _interrupted(self, cell: int, exc: BaseException) -> None:
        """Mark a cell cut short by `exc` interrupted (unless already marked, e.g. a lost workstation)."""
        if isinstance(exc, KeyboardInterrupt):
            reason = "stopped by Ctrl-C or SIGTERM"
        else:
            reason = f"stopped by an error: {steps.one_line(exc)}"
        try:
            if self.store.cell_status(cell) == "running":
                self.store.set_cell_status(cell, "interrupted", reason)
        except (ValueError, sqlite3.Error) as store_exc:  # the store itself failing: keep the first error
            self.log(f"cell {cell}: could not mark it interrupted ({steps.one_line(store_exc)})")

    def _cell_segments(self, cell: int, policy: str, rate: float, rep: int, stream: list[SubmittedJob]) -> None:
        by_id = {j.id: j for j in stream}
        finished = self.store.finished_ids(cell)
        while True:
            remaining = [j for j in stream if j.id not in finished]
            if not remaining:
                self.store.set_cell_status(cell, "done")
                return
            if not self.hosts:
                raise RunStopped("no workstation is left")
            offset = self.store.cell_elapsed(cell)
            seg = self.store.start_segment(cell, offset, self.hosts, self.calibration_id)
            self.store.set_cell_status(cell, "running")
            lost = self._segment(cell, seg, policy, rate, rep, remaining, by_id, offset, finished)
            if not lost:
                continue  # the loop finds nothing remaining and marks the cell done
            self.hosts = [h for h in self.hosts if h not in lost]
            reason = f"workstation(s) {', '.join(lost)} stopped during the run"
            self.store.set_cell_status(cell, "interrupted", reason)
            if self.config.on_failure == "stop":
                raise RunStopped(f"{reason}; the jobs finished so far are stored: "
                                 f"continue with `nowlab run --resume {self.store.path}`")
            self.log(f"{reason}; going on with {len(self.hosts)} workstations")
            launcher = self.cluster.job_launcher()
            if isinstance(launcher, PoolLauncher):
                launcher.restart()  # no rank that shared a job with the dead one goes on

    def _segment(self, cell: int, seg: int, policy: str, rate: float, rep: int, remaining: list[SubmittedJob],
                 by_id: dict[int, SubmittedJob], offset: float, finished: set[int]) -> list[str]:
        """Run `remaining` from stream time `offset`; returns the workstations lost (empty: all done)."""
        label = f"{policy} at {rate:g}/s, rep {rep}" + (f", segment {seg}" if seg > 1 else "")
        run = _Segment(cell, seg, offset, list(self.hosts), by_id, remaining, finished, label)
        c = self.cluster
        run.executor = LiveExecutor(
            live_arrivals(self.config, self.profiles, remaining, offset), policy, c.job_launcher(), run.hosts,
            c.controller_address, on_finish=lambda record, st: self._job_left(run, record, st), stop=run.stop,
            tag=f"c{cell}s{seg}", launch_delay_s=self.config.overhead.launch_s,
            resize_delay_s=self.config.overhead.resize_s, allowed_networks=[c.control_network])
        watch = threading.Thread(target=self._watch, args=(run.executor, cell, offset, run.hosts, run.stop,
                                                            run.lost, run.lock), daemon=True)
        self.update(label, 0, len(remaining))
        t_monitor = self._monitor_time()
        owner_caps = self._owner_caps(rep, offset)
        watch.start()
        try:
            if owner_caps is not None:
                owner_caps.start()
            result = run.executor.run()
        except Stopped:
            self._store_cut_short(run)
            return run.lost
        except PolicyError as exc:  # a rule broken: the line names the policy, the job, the rule and the time
            raise PolicyError(rule_broken(exc, run.executor.policy)) from exc
        finally:
            if owner_caps is not None:
                owner_caps.stop(restore=True)
                meta = owner_caps.metadata()
                self.log(f"owner schedule: {meta['changes']} changes, latest {meta['max_lag_s'] * 1e3:.0f} ms late")
            run.stop.set()
            watch.join()
            if run.executor.t0:  # 0: the executor never started its clock; keep the last heartbeat
                self.store.heartbeat(cell, offset + time.monotonic() - run.executor.t0)
        self._save_segment(cell, seg, offset, result, t_monitor, run.hosts)
        return []

    def _owner_caps(self, rep: int, offset: float) -> CapController | None:
        """The replication's owner bursts from the segment's stream time on (schedule mode)."""
        if not owner_schedules.in_use(self.config):
            return None
        try:  # it caps and holds the workstations
            backends.require(self.cluster.backend, "cpu_caps", "load.owner_mode: schedule")
        except backends.Unsupported as exc:
            raise RunStopped(str(exc)) from None
        steps = owner_schedules.rendered(self.config, rep)
        return CapController(self.cluster, {ws: owner_schedules.shifted(s, offset) for ws, s in steps.items()},
                             mode="owner-schedule")

    def _job_left(self, run: "_Segment", record: JobRecord, st: JobState) -> None:
        """A job left the segment (done or failed): store it at once, with the speed it was delivered.
        A failure on a workstation that stopped stops the segment (the cell goes on in a new one)."""
        error = st.error
        used = [run.hosts[p] for a in record.allocations for p in a]
        if st.status != Outcome.DONE:
            dead = self._dead(set(used))
            if dead:
                error = f"workstation {', '.join(dead)} stopped: {error}"
                with run.lock:
                    run.lost.extend(h for h in dead if h not in run.lost)
                run.stop.set()
        out = run.outcome(record, st.status, error)
        t0 = run.executor.t0
        got = delivered.job_speed(meter_dir(self.cluster), used, delivered.monotonic_to_epoch(t0 + record.start),
                                  delivered.monotonic_to_epoch(t0 + record.finish))
        ratio = delivered.relative(got.speed, self.profiles[out.cls].get("ref_speed"))
        self.store.add_job(run.cell, out.with_speed(ratio), run.seg)
        run.finished.add(record.id)
        self.update(run.label, len([j for j in run.remaining if j.id in run.finished]), len(run.remaining))

    def _store_cut_short(self, run: "_Segment") -> None:
        """The segment stopped for a lost workstation: each unfinished job that held one failed now."""
        executor = run.executor
        now = time.monotonic() - executor.t0
        holders = executor.holders()
        for job in executor.jobs:  # its jobs: running there, or given it by the policy (relaunching)
            if job.id in run.finished or not job.history:
                continue
            held = {run.hosts[p] for p in job.procs} | {ws for ws, jid in holders.items() if jid == job.id}
            dead = sorted(held & set(run.lost))
            if not dead:
                continue
            record = executor.job_record(job)._replace(finish=now)
            reason = f"workstation {', '.join(dead)} stopped during the run"
            self.store.add_job(run.cell, run.outcome(record, Outcome.FAILED, reason), run.seg)
            run.finished.add(job.id)

    def _dead(self, hosts: set[str], grace_s: float = 3.0) -> list[str]:
        """Which of `hosts` are gone. A job can fail a moment before Docker shows its container
        stopped, so look again for a few seconds before blaming the job itself."""
        deadline = time.monotonic() + grace_s
        while True:
            dead = sorted(h for h in hosts if not self._alive(h))
            if dead or time.monotonic() > deadline:
                return dead
            time.sleep(0.25)

    def _paused(self, ws: str) -> bool:
        return self.cluster.is_paused(ws)

    def _alive(self, ws: str) -> bool:
        return self.cluster.is_running(ws)  # local: this host, up as long as the runner is

    def _watch(self, executor: LiveExecutor, cell: int, offset: float, hosts: list[str],
               stop: threading.Event, lost: list[str], lock: threading.Lock) -> None:
        """Heartbeat of stream time for --resume, and a check that every workstation is still up.

        A workstation paused through the engine (`docker pause`, not nowlab's owner bursts)
        for PAUSED_LIMIT_S counts as lost: its jobs would otherwise wait for it until their
        timeout, half an hour."""
        paused_since: dict[str, float] = {}
        while not stop.wait(2.0):
            if executor.t0:
                self.store.heartbeat(cell, offset + time.monotonic() - executor.t0)
            now = time.monotonic()
            for h in hosts:
                if self._paused(h):
                    paused_since.setdefault(h, now)
                else:
                    paused_since.pop(h, None)
            held = [h for h, t in paused_since.items() if now - t >= PAUSED_LIMIT_S]
            if held:
                self.log(f"workstation(s) {', '.join(held)} paused for {PAUSED_LIMIT_S:.0f} s: counted as lost")
            dead = [h for h in hosts if not self._alive(h) or h in held]
            if dead:
                with lock:
                    lost.extend(h for h in dead if h not in lost)
                stop.set()

    def _monitor_time(self) -> float | None:
        return None if self.monitor is None else time.monotonic() - self.monitor.t0

    def _save_segment(self, cell: int, seg: int, offset: float, result: LiveResult, t_monitor: float | None,
                      hosts: list[str]) -> None:
        """The segment's derived data; each step fails softly (stored, printed, redone later)."""
        steps.attempt(self.store, steps.ARTIFACTS, lambda: steps.segment_artifacts(self.store, cell, seg, offset,
                                                                                   result),
                      log=self.log, cell=cell, segment=seg, payload=lambda: steps.segment_payload(offset, result))
        if self.monitor is None or t_monitor is None:
            return
        window = steps.Window(self.calibration_id, tuple(hosts), t_monitor, time.monotonic() - self.monitor.t0)
        steps.attempt(self.store, steps.AVAILABILITY,
                      lambda: steps.availability(self.store, cell, *self.monitor.frames(window.t0, window.t1),
                                                                 window),
                      log=self.log, cell=cell, payload=window.payload)


def open_or_create(config: ExperimentConfig | None, config_text: str, out: Path, resume: bool) -> ResultsStore:
    if resume:
        return ResultsStore.open(out)
    return ResultsStore.create(out, config.dump(), config_text)


__all__ = ["Rounds", "Runner", "RunStopped", "cells", "cluster_spec", "stream_for", "open_or_create", "SpecError"]
