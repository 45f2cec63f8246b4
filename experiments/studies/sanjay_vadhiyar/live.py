"""Sanjay & Vadhiyar §5.1 on a running cluster: training runs, Fig. 7, and the issue's live test.

Thin on purpose: the draws, the minima and the report are pure (`load_draws`, `live_records`,
`live_report`); this module only carries them out with the testbed's own pieces: cap mode
(`CapController`) for the CPU left, `traffic` for the bandwidth left, the `Monitor` for what
is really left, and the live executor (one job, RA on exactly the chosen set, as
`experiments.profiles` runs a profile) for the job. Loads are removed in `finally`, whatever
happens, and each table is rewritten after every run, so a run cut short keeps what it measured.
"""
from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd

from experiments.models.sv_model import SvModel, selection_problem
from experiments.studies.sanjay_vadhiyar.live_inputs import LiveApp
from experiments.studies.sanjay_vadhiyar.live_records import (LiveRecord, TrainingRecord, Window, append_training,
                                                              clamped, cluster_order, compute_s, finished_experiments,
                                                              finished_runs, live_frame, measured_job, ran, subset_minima,
                                                              with_during)
from experiments.studies.sanjay_vadhiyar.load_draws import LoadDraw, PlannedRun, avoidance_load, violations
from scheduler.jobs import FinishedJob, Outcome
from scheduler.live import Arrival, JobClass, LiveExecutor
from scheduler.live.stream import PmaxOnlyModel
from scheduler.selection import Selection, select_hosts
from testbed.cluster import Cluster
from testbed.load import traffic
from testbed.load.caps import CapController
from testbed.load.monitor import Availability, Monitor, summarize
from testbed.parallel import parallel
from testbed.progress import Update
from workloads.host.launch import Launcher

Log = Callable[[str], None]


def _silent(_message: str) -> None:
    return None


def quiet(_stage: str, _done: int, _total: int) -> None:
    return None


@dataclass(frozen=True)
class Timing:
    """How long to let a load settle, how long to read it, how long a run may take."""

    settle_s: float = 6.0  # after applying a load: flows ramp up, caps reach the keeper
    window_s: float = 8.0  # the monitor's averages before a job are taken over this
    interval_s: float = 2.0  # between monitor samples (16 workstations' tc counters each)
    run_timeout_s: float = 1800.0  # a job still going after this is stopped and recorded as timeout


@contextlib.contextmanager
def loaded(cluster: Cluster, draw: LoadDraw) -> Iterator[None]:
    """The draw's caps and flows in force for the body; removed whatever happens: every flow is
    stopped even if stopping one fails (the backend's and the spec's errors are ValueError,
    OSError or RuntimeError), then the caps are restored, then a failed stop is reported."""
    caps = CapController(cluster, draw.cap_schedules(), mode="sanjay-vadhiyar").start()
    flows = draw.flows()
    try:
        # each flow is its own pair of workstations and port: all at once (an exec waits most
        # of a second on a small cap)
        parallel(lambda f: traffic.start(cluster, f[0], f[1], f[2]), flows)
        yield
    finally:
        def stop(flow: tuple[str, str, int]) -> str | None:
            src, dst, _bits = flow
            try:
                traffic.stop(cluster, src, dst)
            except (ValueError, OSError, RuntimeError) as exc:
                return f"{src}->{dst}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
            return None

        failed = [f for f in parallel(stop, flows) if f is not None]
        caps.stop(restore=True)
        if failed:
            raise RuntimeError(f"traffic: {len(failed)} flow(s) may still run ({failed[0]}); "
                               f"`nowlab traffic stop -c {cluster.name}` stops them all")


class Watch:
    """The monitor, read by windows of its own clock."""

    def __init__(self, cluster: Cluster, interval_s: float) -> None:
        self.cluster = cluster
        self.monitor = Monitor(cluster, interval=interval_s)

    def __enter__(self) -> Watch:
        self.monitor.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.monitor.stop()

    def now(self) -> float:
        return time.monotonic() - self.monitor.t0

    def availability(self, t0: float, t1: float) -> Availability:
        cpu, links = self.monitor.frames(t0, t1)
        if cpu.empty:
            raise ValueError("monitor: no samples yet")
        return summarize(cpu, links, self.cluster.workstations, t0, t1)

    def settled(self, timing: Timing) -> Availability:
        """Wait out the settling, then average over the window (Sanjay & Vadhiyar's NWS reading)."""
        time.sleep(timing.settle_s)
        t0 = self.now()
        time.sleep(timing.window_s)
        return clamped(self.availability(t0, self.now()))


@dataclass(frozen=True)
class MeasuredRun:
    """A run's outcome and its span on the host's monotonic clock (None: it did not finish)."""

    outcome: FinishedJob  # live_records.measured_job
    span: tuple[float, float] | None = None


def run_job(launcher: Launcher, controller_host: str, app: LiveApp, problem_size: int, hosts: Sequence[str], tag: str,
            timeout_s: float) -> MeasuredRun:
    """One run of the application on exactly `hosts` (RA on a one-job stream, as a profile runs)."""
    argv = app.argv(problem_size)
    job = Arrival(0, JobClass(app.name, argv, PmaxOnlyModel(len(hosts))), 0.0)
    ex = LiveExecutor([job], "RA", launcher, list(hosts), controller_host, tag=tag, run_timeout_s=timeout_s)
    try:
        res = ex.run()
    except TimeoutError as exc:
        return MeasuredRun(measured_job(app.name, len(hosts), Outcome.TIMEOUT, error=str(exc).splitlines()[0]))
    state, record = res.states[0], res.jobs[0]
    if state.status != "done" or "compute_s" not in state.report:
        return MeasuredRun(measured_job(app.name, len(hosts), Outcome.FAILED,
                                   error=(state.error or "no compute_s in the job's report").splitlines()[0]))
    return MeasuredRun(measured_job(app.name, len(hosts), Outcome.DONE, compute_s=float(state.report["compute_s"]),
                               wall_s=record.finish - record.start),
                  (ex.t0 + record.start, ex.t0 + record.finish))


def measured_run(cluster: Cluster, watch: Watch, app: LiveApp, problem_size: int, hosts: Sequence[str], tag: str,
                 timing: Timing) -> FinishedJob:
    """`run_job` on the cluster, with the monitor's minima over the run's span."""
    hosts = cluster_order(cluster.workstations, hosts)
    run = run_job(cluster.job_launcher(), cluster.controller_address, app, problem_size, hosts, tag,
                  timing.run_timeout_s)
    if run.span is None:
        return run.outcome
    t0, t1 = (t - watch.monitor.t0 for t in run.span)
    try:
        return with_during(run.outcome, subset_minima(watch.availability(t0, t1), cluster.workstations, hosts))
    except ValueError:  # a run shorter than the monitor's interval has no sample of its own
        return run.outcome


# ---- training ------------------------------------------------------------------------------------

def train(cluster: Cluster, app: LiveApp, plan: Sequence[PlannedRun], out: Path, *, window: Window = "before",
          timing: Timing = Timing(), update: Update = quiet, log: Log = _silent) -> list[TrainingRecord]:
    """Each planned run not yet in `out` under its load, appended to the runs CSV (or to the failed
    runs beside it) as soon as it ends; the monitor's series is saved beside it."""
    skip = finished_runs(out, window)
    todo = [run for run in plan if run.index not in skip]
    if todo:
        cluster.job_launcher()  # the resident pool starts before any load (see avoidance_check)
    if skip:
        log(f"{len(skip)} runs already in {out}; {len(todo)} to go")
    records: list[TrainingRecord] = []
    with Watch(cluster, timing.interval_s) as watch:
        try:
            for i, run in enumerate(todo):
                update("training runs", i, len(todo))
                with loaded(cluster, run.load):
                    before = subset_minima(watch.settled(timing), cluster.workstations, run.workstations)
                    outcome = measured_run(cluster, watch, app, run.problem_size, run.workstations,
                                           f"sv-train-{app.name}-{run.index}", timing)
                records.append(TrainingRecord(run.index, app.name, run.problem_size, run.workstations,
                                              run.load.describe(), before, outcome))
                append_training(records[-1], window, out)
                log(f"run {run.index}: N {run.problem_size} on {len(run.workstations)} ({' '.join(run.workstations)}), "
                    f"cpu {before.min_avail_cpu:.1%} bw {before.min_avail_bw_bit_s / 1e6:.1f} Mbit/s: "
                    + (f"{compute_s(outcome):.2f} s" if ran(outcome) else f"{outcome.status} {outcome.error}"))
            update("training runs", len(todo), len(todo))
        finally:
            watch.monitor.save(out.with_name(f"{out.stem}-monitor-{int(time.time())}"))
    return records


# ---- Fig. 7 --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Fig7Plan:
    sizes: tuple[int, ...]
    algorithms: tuple[str, ...]
    budgets_s: tuple[float, ...]
    draws: tuple[LoadDraw, ...]
    seed: int

    @property
    def choices(self) -> int:
        return len(self.draws) * len(self.sizes) * len(self.budgets_s) * len(self.algorithms)

    def loads_json(self) -> str:
        return json.dumps([asdict(d) for d in self.draws], indent=2)


def kept(out: Path, plan: Fig7Plan) -> pd.DataFrame:
    """What a cut Fig. 7 run in `out` keeps on --resume: its experiments that ran every choice.
    ValueError (one line, naming --resume) if `out` is not a cut run of this plan."""
    per_experiment = len(plan.sizes) * len(plan.budgets_s) * len(plan.algorithms)
    return finished_experiments(out, plan.loads_json(), per_experiment)


def fig7(cluster: Cluster, app: LiveApp, model: SvModel, plan: Fig7Plan, out: Path, *, timing: Timing = Timing(),
         update: Update = quiet, log: Log = _silent, prior: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per experiment: load, read the availability, let each algorithm choose at each budget, run
    each set chosen (once per experiment and size), and record actual against predicted.
    `prior`, a cut run's `kept` rows, are kept, and their experiments not run again."""
    prior = live_frame([]) if prior is None else prior
    out.mkdir(parents=True, exist_ok=True)
    (out / "loads.json").write_text(plan.loads_json())
    skip = set(prior.experiment)
    if skip:
        log(f"resuming: experiments {', '.join(map(str, sorted(skip)))} kept ({len(prior)} choices)")
    monitor_dir, k = out / "monitor", 1
    while monitor_dir.exists():  # a resumed run's monitor goes beside the cut run's
        k += 1
        monitor_dir = out / f"monitor-{k}"
    records: list[LiveRecord] = []
    done = len(prior)

    def frame() -> pd.DataFrame:
        parts = [f for f in (prior, live_frame(records)) if not f.empty]
        return pd.concat(parts, ignore_index=True) if parts else live_frame([])

    with Watch(cluster, timing.interval_s) as watch:
        try:
            for e, draw in enumerate(plan.draws):
                if e in skip:
                    continue
                with loaded(cluster, draw):
                    avail = watch.settled(timing)
                    log(f"experiment {e}: {draw.describe()}; minAvgAvailCPU {avail.min_avg_avail_cpu:.1%}, "
                        f"minAvgAvailBW {avail.min_avg_avail_bw / 1e6:.1f} Mbit/s")
                    for size in plan.sizes:
                        problem = selection_problem(model, size, avail, cluster.workstations)
                        measured: dict[tuple[str, ...], FinishedJob] = {}
                        for budget in plan.budgets_s:
                            for algorithm in plan.algorithms:
                                update("choices run", done, plan.choices)
                                chosen = select_hosts(problem, algorithm, budget, plan.seed + e)
                                hosts = cluster_order(cluster.workstations, chosen.workstations)
                                reused = hosts in measured
                                if not reused:
                                    measured[hosts] = measured_run(
                                        cluster, watch, app, size, hosts,
                                        f"sv-fig7-{app.name}-e{e}-n{size}-{algorithm}-{budget:g}", timing)
                                records.append(_record(e, size, budget, chosen, hosts, avail, cluster, measured[hosts],
                                                       reused, draw))
                                frame().to_csv(out / "runs.csv", index=False)
                                log(_line(records[-1]))
                                done += 1
            update("choices run", done, plan.choices)
        finally:
            watch.monitor.save(monitor_dir)
    return frame()


def _record(experiment: int, size: int, budget: float, chosen: Selection, hosts: tuple[str, ...], avail: Availability,
            cluster: Cluster, outcome: FinishedJob, reused: bool, draw: LoadDraw) -> LiveRecord:
    return LiveRecord(experiment, size, budget, chosen.algorithm, hosts, chosen.predicted_s, chosen.evaluations,
                      chosen.elapsed_s, chosen.finished, subset_minima(avail, cluster.workstations, hosts), outcome,
                      reused, draw.describe())


def _line(r: LiveRecord) -> str:
    actual = f"{compute_s(r.outcome):.2f} s" if ran(r.outcome) else f"{r.outcome.status} {r.outcome.error}"
    return (f"experiment {r.experiment} N {r.problem_size} {r.algorithm} ({r.budget_s:g} s): {len(r.workstations)} "
            f"workstations, predicted {r.predicted_s:.2f} s, actual {actual}" + (" (same set as before)" if r.reused else ""))


# ---- the live test -----------------------------------------------------------------------

@dataclass(frozen=True)
class AvoidanceResult:
    load: LoadDraw
    chosen: Selection
    violations: tuple[str, ...]
    outcome: FinishedJob  # live_records.measured_job

    @property
    def passed(self) -> bool:
        return not self.violations and ran(self.outcome)


def avoidance_check(cluster: Cluster, app: LiveApp, model: SvModel, problem_size: int, *, algorithm: str = "BE",
                    budget_s: float = 2.0, seed: int = 0, timing: Timing = Timing()) -> AvoidanceResult:
    """Two workstations loaded and one link congested (`load_draws.avoidance_load`): the set the
    algorithm chooses from the monitor's reading must avoid them, and the job must run on it."""
    draw = avoidance_load(cluster.workstations, cluster.spec.link_rate)
    cluster.job_launcher()  # the resident pool starts before the loads: on a capped workstation it took 80 s
    with Watch(cluster, timing.interval_s) as watch, loaded(cluster, draw):
        avail = watch.settled(timing)
        chosen = select_hosts(selection_problem(model, problem_size, avail, cluster.workstations), algorithm,
                              budget_s, seed)
        outcome = measured_run(cluster, watch, app, problem_size, chosen.workstations, f"sv-avoid-{app.name}", timing)
    return AvoidanceResult(draw, chosen, tuple(violations(draw, chosen.workstations)), outcome)
