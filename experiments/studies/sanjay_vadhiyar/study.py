"""Run the study's searches: Figs. 8-11, Table I and Fig. 12, one row per search.

Every search is judged, as in the paper, by the predicted time of the schedule it returns
(Eq. 1 without error); a cluster is drawn once per repetition and every algorithm searches
that same cluster with the same seed.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from experiments.studies.sanjay_vadhiyar.apps import APPLICATIONS, MD
from experiments.studies.sanjay_vadhiyar.clusters import MAX_BW_BIT_S, PAPER_MIX, make_cluster, make_setup
from experiments.studies.sanjay_vadhiyar.spec import StudySpec
from scheduler.selection import SelectionProblem, select_hosts
from scheduler.selection.problem import Predictor

MD_SIZE = 2048  # Figs. 8-10 and Table I: MD with 2048 molecules


@dataclass(frozen=True)
class StudyResult:
    spec: StudySpec
    scalability: pd.DataFrame  # Fig. 8
    budgets: pd.DataFrame  # Fig. 9
    errors: pd.DataFrame  # Fig. 10
    applications: pd.DataFrame  # Fig. 11
    setups: pd.DataFrame  # Table I, Fig. 12: one row per setup and algorithm
    wall_s: float


def with_error(predict_s: Predictor, pct: float, seed: int) -> Predictor:
    """§5.3.3: each prediction off by a uniform random share in [-pct, +pct] percent."""
    if pct == 0:
        return predict_s
    rng = np.random.default_rng(seed)
    return lambda s: predict_s(s) * (1.0 + rng.uniform(-pct, pct) / 100.0)


def _search(problem: SelectionProblem, truth: Predictor, algorithm: str, budget_s: float, seed: int) -> dict:
    best = select_hosts(problem, algorithm, budget_s, seed)
    index = {w.name: i for i, w in enumerate(problem.workstations)}
    chosen = [index[name] for name in best.workstations]
    summary = problem.summary(chosen)
    return {"algorithm": algorithm, "exec_s": float(truth(summary)), "procs": summary.procs,
            "evaluations": best.evaluations, "search_s": best.elapsed_s, "finished": best.finished}


def _count(spec: StudySpec) -> int:
    a = len(spec.algorithms)
    mean_clusters = sum(spec.setup_clusters) / 2
    return a * (len(spec.sizes) * spec.reps + len(spec.budget_sizes) * len(spec.budgets_paper_s) * spec.budget_reps
                + len(spec.errors_pct) * spec.error_reps + len(APPLICATIONS) * spec.app_reps
                + round(spec.setups * mean_clusters))


def run_study(spec: StudySpec, show_progress: bool = True) -> StudyResult:
    t0 = time.perf_counter()
    progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), disable=not show_progress)
    with progress:
        bar = progress.add_task("sanjay-vadhiyar", total=_count(spec))

        def step(what: str) -> None:
            progress.update(bar, advance=1, description=f"sanjay-vadhiyar {what}")

        tables = {name: pd.DataFrame(list(rows(spec, step))) for name, rows in _PARTS.items()}
        progress.update(bar, total=progress.tasks[bar].completed)
    return StudyResult(spec, wall_s=time.perf_counter() - t0, **tables)


Step = Callable[[str], None]


def _scalability(spec: StudySpec, step: Step) -> Iterator[dict]:
    predict = MD.predictor(MD_SIZE)
    # Repetition r has the same largest link bandwidth at every size (common random numbers):
    # that class moves MD's time by 100x, and would otherwise swamp the trend with size.
    max_bw = [float(np.random.default_rng([spec.seed, 8, rep]).choice(MAX_BW_BIT_S)) for rep in range(spec.reps)]
    for size in spec.sizes:
        for rep in range(spec.reps):
            rng = np.random.default_rng([spec.seed, 8, size, rep])
            problem = make_cluster(size, PAPER_MIX, rng, max_bw_bit_s=max_bw[rep]).problem(predict)
            for algorithm in spec.algorithms:
                yield {"size": size, "rep": rep,
                       **_search(problem, predict, algorithm, spec.budget_s(spec.budget_paper_s), spec.seed + rep)}
                step(f"Fig. 8, {size} procs")


def _budgets(spec: StudySpec, step: Step) -> Iterator[dict]:
    predict = MD.predictor(MD_SIZE)
    for size in spec.budget_sizes:
        for rep in range(spec.budget_reps):
            rng = np.random.default_rng([spec.seed, 9, size, rep])
            problem = make_cluster(size, PAPER_MIX, rng).problem(predict)
            for paper_s in spec.budgets_paper_s:
                for algorithm in spec.algorithms:
                    yield {"size": size, "rep": rep, "budget_paper_s": paper_s, "budget_s": spec.budget_s(paper_s),
                           **_search(problem, predict, algorithm, spec.budget_s(paper_s), spec.seed + rep)}
                    step(f"Fig. 9, {size} procs, {paper_s:g} paper-s")


def _errors(spec: StudySpec, step: Step) -> Iterator[dict]:
    truth = MD.predictor(MD_SIZE)
    for rep in range(spec.error_reps):
        rng = np.random.default_rng([spec.seed, 10, rep])
        cluster = make_cluster(spec.error_size, PAPER_MIX, rng)
        for pct in spec.errors_pct:
            for algorithm in spec.algorithms:
                problem = cluster.problem(with_error(truth, pct, spec.seed + rep))
                yield {"size": spec.error_size, "rep": rep, "error_pct": pct,
                       **_search(problem, truth, algorithm, spec.budget_s(spec.budget_paper_s), spec.seed + rep)}
                step(f"Fig. 10, ±{pct:g}%")


def _applications(spec: StudySpec, step: Step) -> Iterator[dict]:
    for rep in range(spec.app_reps):
        rng = np.random.default_rng([spec.seed, 11, rep])
        cluster = make_cluster(spec.app_size, PAPER_MIX, rng)
        for app, (model, size) in APPLICATIONS.items():
            predict = model.predictor(size)
            problem = cluster.problem(predict)
            for algorithm in spec.algorithms:
                yield {"application": app, "problem_size": size, "size": spec.app_size, "rep": rep,
                       **_search(problem, predict, algorithm, spec.budget_s(spec.budget_paper_s), spec.seed + rep)}
                step(f"Fig. 11, {app}")


def _setups(spec: StudySpec, step: Step) -> Iterator[dict]:
    """§5.3.5: each algorithm searches every cluster of a setup; its answer is its best cluster's."""
    predict = MD.predictor(MD_SIZE)
    for setup in range(spec.setups):
        rng = np.random.default_rng([spec.seed, 12, setup])
        clusters = make_setup(rng, spec.setup_clusters, spec.setup_procs)
        weights = [c.weight() for c in clusters]
        best: dict[str, dict] = {}
        for k, cluster in enumerate(clusters):
            problem = cluster.problem(predict, prefix=f"c{k}p")
            for algorithm in spec.algorithms:
                row = _search(problem, predict, algorithm, spec.budget_s(spec.setup_budget_paper_s), spec.seed + setup)
                if algorithm not in best or row["exec_s"] < best[algorithm]["exec_s"]:
                    best[algorithm] = {**row, "cluster": k, "cluster_procs": cluster.size,
                                       "cluster_speed": cluster.speed}
                step(f"Table I, setup {setup + 1}/{spec.setups}")
        for algorithm, row in best.items():
            yield {"setup": setup, "clusters": len(clusters), "weight_ratio": max(weights) / min(weights), **row}


_PARTS = {"scalability": _scalability, "budgets": _budgets, "errors": _errors, "applications": _applications,
          "setups": _setups}
