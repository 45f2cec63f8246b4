"""The bookkeeping of the live runs: what each run measured, as rows and CSV files.

A run's availability is read twice from the monitor: over a window *before* the job (the
load applied and settled, nothing else running: what a scheduler sees when it chooses, and
what Fig. 7's predictions use) and over the job's own span (the paper's training reading).
The monitor's bandwidth is passive and counts the job's own messages as load (see
`testbed.load.monitor`), so over the span a job's busiest link looks congested by itself;
the model columns therefore take the *before* window unless asked otherwise, and the span's
figures are kept beside them. Either way the minima over a set are taken the one way the
selection algorithms take them (`SelectionProblem.summary`: the slowest machine, the slowest
link inside the set, and for one machine the mean of its links).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from types import MappingProxyType
from typing import Literal

import pandas as pd

from experiments.models.sv_store import RUN_COLUMNS
from scheduler.availability import MIN_AVAIL_CPU, MIN_LINK_BIT_S
from scheduler.jobs import FinishedJob, Outcome
from scheduler.selection import SelectionProblem, Workstation
from testbed.load.monitor import Availability

Window = Literal["before", "run"]
WINDOWS: tuple[Window, ...] = ("before", "run")


@dataclass(frozen=True)
class Minima:
    """minAvgAvailCPU (a fraction) and minAvgAvailBW (bit/s) over a set of workstations."""

    min_avail_cpu: float
    min_avail_bw_bit_s: float


def cluster_order(cluster: Sequence[str], subset: Sequence[str]) -> tuple[str, ...]:
    """`subset` in the cluster's order (ws2 before ws10), the order mpiexec needs its hosts in;
    the selection algorithms return names sorted as text (ws10 before ws2)."""
    members = set(subset)
    unknown = sorted(members - set(cluster))
    if unknown:
        raise ValueError(f"workstations: {unknown[0]} is not in the cluster")
    return tuple(w for w in cluster if w in members)


def clamped(availability: Availability) -> Availability:
    """The monitor's averages kept where Eq. 1 is defined: CPU in (0, 1] (a reading a little over
    the nominal speed, or a held machine's 0, would otherwise be refused) and every link > 0."""
    cpu = {w: min(1.0, max(MIN_AVAIL_CPU, float(v))) for w, v in availability.avg_avail_cpu.items()}
    bw = {k: max(MIN_LINK_BIT_S, float(v)) for k, v in availability.avg_avail_bw.items()}
    return Availability(cpu, bw, min(cpu.values(), default=float("nan")), min(bw.values(), default=float("nan")))


def subset_minima(availability: Availability, cluster: Sequence[str], subset: Sequence[str]) -> Minima:
    """Eq. 1's two load figures for `subset`, from the monitor's averages over the whole cluster."""
    names = list(cluster)
    missing = [w for w in subset if w not in names]
    if missing:
        raise ValueError(f"workstations: {missing[0]} is not in the cluster")
    absent = [w for w in names if w not in availability.avg_avail_cpu]
    if absent:
        raise ValueError(f"availability: no AvgAvailCPU for workstation {absent[0]}")
    avail = clamped(availability)
    machines = [Workstation(w, avail.avg_avail_cpu[w]) for w in names]
    links = avail.avg_avail_bw
    try:
        problem = SelectionProblem.from_links(machines, links, lambda _s: 0.0)
    except ValueError as exc:
        raise ValueError(str(exc).replace("bw_bit_s: no available bandwidth", "availability: no AvgAvailBW")) from None
    index = {w: i for i, w in enumerate(names)}
    s = problem.summary([index[w] for w in subset])
    return Minima(s.min_avail_cpu, s.min_avail_bw_bit_s)


def measured_job(application: str, procs: int, status: Outcome | str, *, compute_s: float = float("nan"),
                 wall_s: float = float("nan"), during: Minima | None = None, error: str = "",
                 start_s: float = 0.0) -> FinishedJob:
    """One real run of the application as the finished job it is (`scheduler.jobs.FinishedJob`), with
    what machine selection measures beside it in `extra`: its loop time (`compute_s`, the workload's
    own timer, what Eq. 1 models) and the monitor's minima during it (`during`). Launch to done is
    the job's `execution_s` (NaN when it did not finish)."""
    return FinishedJob(id=0, cls=application, demand=1.0, arrival_s=0.0, start_s=start_s, finish_s=start_s + wall_s,
                       mean_procs=float(procs), max_procs=procs, requested_procs=procs, preemptions=0,
                       status=Outcome(status), error=error,
                       extra=MappingProxyType({"compute_s": float(compute_s), "during": during}))


def compute_s(job: FinishedJob) -> float:
    """The run's loop time (seconds), the workload's own timer; NaN when it did not finish."""
    return float(job.extra.get("compute_s", float("nan")))  # type: ignore[arg-type]


def during(job: FinishedJob) -> Minima | None:
    """The monitor's minima over the run's span (None: no sample of its own, or it did not finish)."""
    minima = job.extra.get("during")
    return minima if isinstance(minima, Minima) else None


def with_during(job: FinishedJob, minima: Minima) -> FinishedJob:
    return replace(job, extra=MappingProxyType({**job.extra, "during": minima}))


def ran(job: FinishedJob) -> bool:
    """The run finished and timed its loop (what the training set and the model's error keep)."""
    return job.status == Outcome.DONE and compute_s(job) > 0


TRAINING_COLUMNS = (*RUN_COLUMNS, "window", "run", "application", "wall_s", "before_min_avail_cpu",
                    "before_min_avail_bw_bit_s", "run_min_avail_cpu", "run_min_avail_bw_bit_s", "workstations",
                    "load", "status", "error")


@dataclass(frozen=True)
class TrainingRecord:
    run: int
    application: str
    problem_size: int
    workstations: tuple[str, ...]
    load: str  # LoadDraw.describe()
    before: Minima
    outcome: FinishedJob  # measured_job

    def row(self, window: Window) -> dict:
        """A runs-CSV row; with window "run", a run too short for a monitor sample of its own
        carries the before-run figures (its run_min_avail_* columns stay empty)."""
        minima = during(self.outcome)
        chosen = self.before if window == "before" or minima is None else minima
        minima = minima or Minima(float("nan"), float("nan"))
        return {"problem_size": self.problem_size, "procs": len(self.workstations),
                "min_avail_cpu": chosen.min_avail_cpu, "min_avail_bw_bit_s": chosen.min_avail_bw_bit_s,
                "elapsed_s": compute_s(self.outcome), "window": window, "run": self.run,
                "application": self.application, "wall_s": self.outcome.execution_s,
                "before_min_avail_cpu": self.before.min_avail_cpu,
                "before_min_avail_bw_bit_s": self.before.min_avail_bw_bit_s,
                "run_min_avail_cpu": minima.min_avail_cpu, "run_min_avail_bw_bit_s": minima.min_avail_bw_bit_s,
                "workstations": " ".join(self.workstations), "load": self.load,
                "status": str(self.outcome.status), "error": self.outcome.error}


def training_frames(records: Sequence[TrainingRecord], window: Window) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the runs `nowlab select fit` reads: RUN_COLUMNS first, then the rest; the failed runs)."""
    if window not in WINDOWS:
        raise ValueError(f"--window: {window!r} is not one of {', '.join(WINDOWS)}")
    ok = [ran(r.outcome) for r in records]
    done = pd.DataFrame([r.row(window) for r, good in zip(records, ok) if good], columns=list(TRAINING_COLUMNS))
    failed = pd.DataFrame([r.row(window) for r, good in zip(records, ok) if not good], columns=list(TRAINING_COLUMNS))
    return done, failed


def failed_path(out: Path) -> Path:
    """Where the runs that did not finish go: beside the runs CSV, so `select fit` never reads them."""
    return out.with_name(out.stem + ".failed.csv")


def append_training(record: TrainingRecord, window: Window, out: Path) -> Path:
    """Add one run to the runs CSV (or, when it did not finish, to the failed runs beside it); the
    file is appended to, so a long training set cut short keeps every run before the cut."""
    done, failed = training_frames([record], window)
    path = out if len(done) else failed_path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    (done if len(done) else failed).to_csv(path, mode="a", header=not path.exists(), index=False)
    return path


def finished_runs(out: Path, window: Window) -> set[int]:
    """The plan indices already in a runs CSV, to continue it (--resume); its window must match."""
    if not out.exists():
        return set()
    try:
        table = pd.read_csv(out)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise ValueError(f"--out: {out.name} is not a runs CSV ({str(exc).splitlines()[0]})") from None
    if "run" not in table.columns or "window" not in table.columns:
        raise ValueError(f"--out: {out.name} was not written by `nowlab select train` (no run or window column)")
    windows = set(table.window.dropna())
    if windows - {window}:
        raise ValueError(f"--window: {out.name} was measured with --window {sorted(windows)[0]}, not {window}")
    return {int(r) for r in table.run}


@dataclass(frozen=True)
class LiveRecord:
    """One algorithm's choice in one Fig. 7 experiment, predicted and run."""

    experiment: int
    problem_size: int
    budget_s: float
    algorithm: str
    workstations: tuple[str, ...]
    predicted_s: float
    evaluations: int
    search_s: float
    finished: bool
    before: Minima
    outcome: FinishedJob  # measured_job
    reused: bool = False  # another algorithm chose the same set in this experiment: its run is shared
    load: str = field(default="")

    def row(self) -> dict:
        minima = during(self.outcome) or Minima(float("nan"), float("nan"))
        base = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("before", "outcome", "workstations")}
        return {**base, "procs": len(self.workstations), "workstations": " ".join(self.workstations),
                "actual_s": compute_s(self.outcome), "wall_s": self.outcome.execution_s,
                "status": str(self.outcome.status), "error": self.outcome.error,
                "min_avail_cpu": self.before.min_avail_cpu, "min_avail_bw_bit_s": self.before.min_avail_bw_bit_s,
                "run_min_avail_cpu": minima.min_avail_cpu, "run_min_avail_bw_bit_s": minima.min_avail_bw_bit_s}


LIVE_COLUMNS = ("experiment", "problem_size", "budget_s", "algorithm", "procs", "workstations", "predicted_s",
                "actual_s", "wall_s", "status", "reused", "evaluations", "search_s", "finished", "min_avail_cpu",
                "min_avail_bw_bit_s", "run_min_avail_cpu", "run_min_avail_bw_bit_s", "load", "error")


def live_frame(records: Sequence[LiveRecord]) -> pd.DataFrame:
    return pd.DataFrame([r.row() for r in records], columns=list(LIVE_COLUMNS))


def finished_experiments(out: Path, loads: str, per_experiment: int) -> pd.DataFrame:
    """The rows of a cut Fig. 7 run (`out`/runs.csv) whose experiment ran all `per_experiment`
    choices, to continue it (--resume): an experiment cut midway is run again whole, under its
    load. `loads` (the plan's loads.json text) must be the cut run's: same options, same loads."""
    try:
        cut_loads = (out / "loads.json").read_text()
        table = pd.read_csv(out / "runs.csv")
    except FileNotFoundError as exc:
        raise ValueError(f"--resume: {out} has no {Path(exc.filename).name} (not a cut `nowlab select live`)") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise ValueError(f"--resume: {out / 'runs.csv'} is not a runs CSV ({str(exc).splitlines()[0]})") from None
    if cut_loads != loads:
        raise ValueError(f"--resume: {out / 'loads.json'} holds other loads than these options draw "
                         f"(give the cut run's cluster, --experiments and --seed)")
    missing = [c for c in LIVE_COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"--resume: {out / 'runs.csv'} has no column {missing[0]}")
    counts = table.groupby("experiment").size()
    whole = set(counts[counts == per_experiment].index)
    return table[table.experiment.isin(whole)].reset_index(drop=True)
