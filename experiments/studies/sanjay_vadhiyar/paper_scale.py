"""The simulation at the paper's scale, resumable: Fig. 8, Fig. 9, Table I and Fig. 12.

The paper's numbers (§5.2-5.3.5): 50 clusters a point, 25 s a search, Fig. 9's budgets from
2 s to 3 min at 256 and 512 processors, 1,100 multi-cluster setups of U[4, 15] clusters of
U[32, 1024] processors. With SA and GA spending their whole budget that is about 1.2 million
CPU-seconds of search (two weeks of one core), so it runs over many sittings:

- every search is a case with a key; its row is appended to `cases.csv` (and flushed) as
  soon as it ends, so a killed run loses at most the search it was in;
- a run reads the keys already written and skips them (a last line cut off by the kill is
  dropped); clusters are drawn from seeds that depend only on the case, so a resumed run
  searches the very clusters the first one would have;
- the cases run in rounds, round r holding Fig. 8's and Fig. 9's repetition r and 1/50 of
  the setups, so a run stopped at any point has every figure's points at similar depth;
- budgets are counted in the search's own CPU time (`cpu_clock`), so a run at nice 19 on a
  shared host still gives each search the CPU seconds the paper names.

Figs. 10 and 11 are not part of this run (the quick and full specs in `spec.py` have them).
"""
from __future__ import annotations

import csv
import fcntl
import math
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import IO

import numpy as np
import pandas as pd

from experiments.studies.sanjay_vadhiyar.apps import MD
from experiments.studies.sanjay_vadhiyar.clusters import MAX_BW_BIT_S, PAPER_MIX, SCALING_FACTORS, Cluster, \
    LoadMix, make_cluster
from experiments.studies.sanjay_vadhiyar.spec import ALGORITHMS, StudySpec
from experiments.studies.sanjay_vadhiyar.study import MD_SIZE, StudyResult
from scheduler.selection import SelectionProblem, select_hosts

CASES_CSV = "cases.csv"
LOG_EVERY = 20  # cases between lines, when the progress goes to a file


@dataclass(frozen=True)
class PaperScaleSpec:
    """What the run searches; `paper()` is the paper's, tests use a small one."""

    seed: int = 2009
    sizes: tuple[int, ...] = (32, 64, 128, 256, 512, 1024)  # Fig. 8
    reps: int = 50  # clusters a point (§5.2)
    budget_s: float = 25.0  # Figs. 8 and 12, Table I
    budget_sizes: tuple[int, ...] = (256, 512)  # Fig. 9
    budgets_s: tuple[float, ...] = (2.0, 10.0, 30.0, 90.0, 180.0)  # Fig. 9: 2 s to 3 min
    budget_reps: int = 50
    setups: int = 1100  # Table I, Fig. 12
    setup_clusters: tuple[int, int] = (4, 15)
    setup_procs: tuple[int, int] = (32, 1024)
    algorithms: tuple[str, ...] = field(default=ALGORITHMS)

    def __post_init__(self) -> None:
        for name in ("reps", "budget_reps"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}: {getattr(self, name)} is not >= 1")
        if self.setups < 0:
            raise ValueError(f"setups: {self.setups} is not >= 0")
        if not (self.budget_s > 0 and all(b > 0 for b in self.budgets_s)):
            raise ValueError("budgets: every budget must be > 0 seconds")

    @property
    def rounds(self) -> int:
        return max(self.reps, self.budget_reps)

    def study_spec(self) -> StudySpec:
        """The same numbers as a StudySpec, for the report (budgets unscaled)."""
        return StudySpec(name="paper-scale", seed=self.seed, budget_scale=1.0, sizes=self.sizes, reps=self.reps,
                         budget_paper_s=self.budget_s, budget_sizes=self.budget_sizes,
                         budgets_paper_s=self.budgets_s, budget_reps=self.budget_reps, setups=self.setups,
                         setup_clusters=self.setup_clusters, setup_procs=self.setup_procs,
                         algorithms=self.algorithms)


@dataclass(frozen=True)
class Case:
    """One search: which figure, which cluster, which budget, which algorithm."""

    part: str  # fig8 | fig9 | setup
    size: int
    rep: int  # repetition (fig8, fig9) or setup number
    cluster: int  # the setup's cluster; 0 otherwise
    budget_s: float
    algorithm: str

    @property
    def key(self) -> tuple[str, int, int, int, str, str]:
        return (self.part, self.size, self.rep, self.cluster, f"{self.budget_s:g}", self.algorithm)


@dataclass(frozen=True)
class SetupCluster:
    """One cluster of a setup as §5.3.5 draws it, before its machines are drawn."""

    procs: int
    mix: LoadMix
    speed: float
    max_bw_bit_s: float


def setup_plan(spec: PaperScaleSpec, setup: int) -> list[SetupCluster]:
    """The clusters of setup `setup`, from a stream of its own (cheap: no machines drawn)."""
    rng = np.random.default_rng([spec.seed, 12, setup])
    plan = []
    for _ in range(int(rng.integers(spec.setup_clusters[0], spec.setup_clusters[1] + 1))):
        procs = int(rng.integers(spec.setup_procs[0], spec.setup_procs[1] + 1))
        plan.append(SetupCluster(procs, LoadMix.random(rng), float(rng.choice(SCALING_FACTORS)),
                                 float(rng.choice(MAX_BW_BIT_S))))
    return plan


def _fig8_max_bw(spec: PaperScaleSpec, rep: int) -> float:
    """Repetition r keeps one bandwidth class at every size, as study.py's Fig. 8 does."""
    return float(np.random.default_rng([spec.seed, 8, rep]).choice(MAX_BW_BIT_S))


def cluster_of(spec: PaperScaleSpec, case: Case) -> tuple[Cluster, dict]:
    """The cluster a case searches, and the columns that describe it."""
    if case.part == "fig8":
        rng = np.random.default_rng([spec.seed, 8, case.size, case.rep])
        return make_cluster(case.size, PAPER_MIX, rng, max_bw_bit_s=_fig8_max_bw(spec, case.rep)), {}
    if case.part == "fig9":
        return make_cluster(case.size, PAPER_MIX, np.random.default_rng([spec.seed, 9, case.size, case.rep])), {}
    plan = setup_plan(spec, case.rep)
    c = plan[case.cluster]
    cluster = make_cluster(c.procs, c.mix, np.random.default_rng([spec.seed, 12, case.rep, case.cluster]), c.speed,
                           c.max_bw_bit_s)
    weights = [p.procs * p.speed * (p.mix.light + p.mix.medium) for p in plan]
    return cluster, {"clusters": len(plan), "cluster_speed": c.speed, "weight_ratio": max(weights) / min(weights)}


def cases(spec: PaperScaleSpec) -> Iterator[Case]:
    """Every case, in rounds: Fig. 8's and Fig. 9's repetition r and the r-th share of the setups."""
    per_round = math.ceil(spec.setups / spec.rounds) if spec.setups else 0
    for r in range(spec.rounds):
        if r < spec.reps:
            for size in spec.sizes:
                for a in spec.algorithms:
                    yield Case("fig8", size, r, 0, spec.budget_s, a)
        if r < spec.budget_reps:
            for size in spec.budget_sizes:
                for budget_s in spec.budgets_s:
                    for a in spec.algorithms:
                        yield Case("fig9", size, r, 0, budget_s, a)
        for setup in range(r * per_round, min((r + 1) * per_round, spec.setups)):
            for k, c in enumerate(setup_plan(spec, setup)):
                for a in spec.algorithms:
                    yield Case("setup", c.procs, setup, k, spec.budget_s, a)


@dataclass(frozen=True)
class Row:
    """One finished search, as cases.csv holds it."""

    part: str
    size: int
    rep: int
    cluster: int
    budget_s: float
    algorithm: str
    exec_s: float  # Eq. 1's time for the schedule found (the paper's measure)
    procs: int
    evaluations: int
    search_cpu_s: float
    finished: bool
    clusters: int = 0
    cluster_speed: float = 1.0
    weight_ratio: float = 1.0


COLUMNS = [f.name for f in fields(Row)]


def search(spec: PaperScaleSpec, case: Case, problem: SelectionProblem, extra: dict) -> Row:
    best = select_hosts(problem, case.algorithm, case.budget_s, seed=spec.seed + case.rep, cpu_clock=True)
    index = {w.name: i for i, w in enumerate(problem.workstations)}
    summary = problem.summary([index[name] for name in best.workstations])
    return Row(case.part, case.size, case.rep, case.cluster, case.budget_s, case.algorithm,
               float(problem.predict_s(summary)), summary.procs, best.evaluations, best.elapsed_s, best.finished,
               **extra)


def done_keys(path: Path) -> set[tuple]:
    """Keys of the rows written so far; a last line without its newline (a killed run) is not one.
    Read-only: a report may read while a run appends."""
    if not path.exists():
        return set()
    text = path.read_text()
    keys = set()
    for rec in csv.DictReader(text[: text.rfind("\n") + 1].splitlines()):
        keys.add((rec["part"], int(rec["size"]), int(rec["rep"]), int(rec["cluster"]),
                  f"{float(rec['budget_s']):g}", rec["algorithm"]))
    return keys


def _cut_partial_line(fh: IO[str]) -> None:
    """Drop what a killed run left after its last newline, before appending."""
    fh.seek(0)
    text = fh.read()
    if text and not text.endswith("\n"):
        fh.truncate(text.rfind("\n") + 1)
    fh.seek(0, 2)


Progress = Callable[[Case, int, float], None]  # the case just done, cases done, its budget


def run(spec: PaperScaleSpec, out: Path, limit: int | None = None, on_case: Progress | None = None) -> int:
    """Search every case not yet in out/cases.csv (at most `limit` of them); the number searched."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / CASES_CSV
    path.touch()
    searched = 0
    cached: tuple[tuple, SelectionProblem, dict] | None = None
    predict = MD.predictor(MD_SIZE)
    with path.open("r+", newline="") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released when the file closes
        except BlockingIOError:
            raise ValueError(f"out: another run is appending to {path}") from None
        _cut_partial_line(fh)
        done = done_keys(path)
        todo = [c for c in cases(spec) if c.key not in done]
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        if fh.tell() == 0:
            writer.writeheader()
        for case in todo:
            if limit is not None and searched >= limit:
                break
            where = (case.part, case.size, case.rep, case.cluster)
            if cached is None or cached[0] != where:
                cluster, extra = cluster_of(spec, case)
                cached = (where, cluster.problem(predict, prefix=f"c{case.cluster}p"), extra)
            writer.writerow(asdict(search(spec, case, cached[1], cached[2])))
            fh.flush()
            searched += 1
            if on_case is not None:
                on_case(case, len(done) + searched, case.budget_s)
    return searched


def total_budget_s(spec: PaperScaleSpec, keys: set[tuple] | None = None) -> tuple[int, float, int, float]:
    """Cases and budget-seconds in all, and of those done (the ETA's measure: SA and GA use it all)."""
    keys = keys or set()
    n = n_done = 0
    s = s_done = 0.0
    for c in cases(spec):
        n += 1
        s += c.budget_s
        if c.key in keys:
            n_done += 1
            s_done += c.budget_s
    return n, s, n_done, s_done


def load(spec: PaperScaleSpec, out: Path) -> StudyResult:
    """The rows so far as the study's tables: a setup counts once every search of it is done."""
    path = out / CASES_CSV
    rows = pd.read_csv(path) if path.exists() and path.stat().st_size else pd.DataFrame(columns=COLUMNS)
    fig8 = rows[rows.part == "fig8"].drop(columns=["part", "cluster", "clusters", "cluster_speed", "weight_ratio"])
    fig9 = rows[rows.part == "fig9"].drop(columns=["part", "cluster", "clusters", "cluster_speed", "weight_ratio"])
    fig9 = fig9.assign(budget_paper_s=fig9.budget_s)
    setups = rows[rows.part == "setup"]
    complete = setups.groupby("rep").filter(
        lambda g: len(g) == int(g.clusters.iloc[0]) * len(spec.algorithms)) if len(setups) else setups
    if len(complete):
        best = complete.loc[complete.groupby(["rep", "algorithm"]).exec_s.idxmin()]
        setup_table = best.rename(columns={"rep": "setup", "size": "cluster_procs"}).drop(columns=["part"])
    else:
        setup_table = pd.DataFrame()
    empty = pd.DataFrame()
    return StudyResult(spec.study_spec(), scalability=fig8.reset_index(drop=True),
                       budgets=fig9.reset_index(drop=True), errors=empty, applications=empty,
                       setups=setup_table.reset_index(drop=True), wall_s=float(rows.search_cpu_s.sum()))


def run_with_progress(spec: PaperScaleSpec, out: Path, limit: int | None = None, show: bool = True) -> int:
    """`run` under a rich bar counted in budget-seconds, with cases done / total and an ETA: the
    budget-seconds left at this sitting's pace (SA and GA spend all of theirs; DP and BE often
    finish early, so the ETA errs long)."""
    import time

    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    n, s, n_done, s_done = total_budget_s(spec, done_keys(out / CASES_CSV))
    progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.fields[cases]}"),
                        TimeElapsedColumn(), TextColumn("ETA {task.fields[eta]}"), disable=not show)
    t0 = time.monotonic()
    spent = {"budget_s": 0.0}
    with progress:
        bar = progress.add_task("sanjay-vadhiyar paper scale", total=s, completed=s_done,
                                cases=f"{n_done:,}/{n:,} cases", eta="?")

        def step(case: Case, count: int, budget_s: float) -> None:
            spent["budget_s"] += budget_s
            left_s = (s - s_done - spent["budget_s"]) * (time.monotonic() - t0) / spent["budget_s"]
            where = {"fig8": "Fig. 8", "fig9": "Fig. 9", "setup": "Table I"}[case.part]
            progress.update(bar, advance=budget_s, cases=f"{count:,}/{n:,} cases", eta=_duration(left_s),
                            description=f"{where} {case.size} procs rep {case.rep} {case.algorithm}")
            if show and not progress.console.is_terminal and count % LOG_EVERY == 0:  # a log file: a line now and then
                progress.console.print(f"{count:,}/{n:,} cases, {where} {case.size} procs rep {case.rep}, "
                                       f"ETA {_duration(left_s)}", soft_wrap=True)

        return run(spec, out, limit, step)


def _duration(seconds: float) -> str:
    days, rest = divmod(max(0, int(seconds)), 86400)
    return f"{days}d {rest // 3600}h" if days else f"{rest // 3600}h {rest % 3600 // 60:02d}m"


def progress_md(spec: PaperScaleSpec, out: Path) -> str:
    """How far the run is, per part, and the command that continues it (for report.md)."""
    keys = done_keys(out / CASES_CSV)
    all_cases = list(cases(spec))
    lines = ["## How far this run is", "",
             "| part | searches done | of |", "|---|---:|---:|"]
    for part, name in (("fig8", "Fig. 8"), ("fig9", "Fig. 9"), ("setup", "Table I / Fig. 12")):
        these = [c for c in all_cases if c.part == part]
        lines.append(f"| {name} | {sum(c.key in keys for c in these):,} | {len(these):,} |")
    complete = load(spec, out).setups
    n_setups = complete.setup.nunique() if len(complete) else 0
    lines += ["", f"Setups complete (every cluster searched by every algorithm): {n_setups:,} of {spec.setups:,}. "
              "Budgets are the paper's, counted in each search's CPU time. Continue with "
              "`nice -n 19 nowlab study sanjay-vadhiyar simulate --scale paper --resume`. Figs. 10 and 11 are not "
              "part of this run (the quick and full runs have them)."]
    return "\n".join(lines) + "\n"
