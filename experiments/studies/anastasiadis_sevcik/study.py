"""The Section 6 procedure: independent replications per cell until the 95%
confidence half-width is at most 5% of the mean, run in worker processes.

A cell is one (workload, load, policy).  Replication r of every cell of a
workload uses the same job stream (see ``workload``), so comparisons between
policies and loads share their noise.  A cell is finished when

- one of its replications saturates (its mean response time is infinite,
  as in the paper, and more replications cannot change that), or
- its interval meets the target, or
- it reached ``max_replications`` (reported as not converged).

Replications are submitted in batches sized by ``experiments.reporting.stats.replications_needed``
so that both worker processes stay busy; the longest cells (high load) go
first, which keeps the tail of the run short.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Self

import pandas as pd
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)

from experiments.studies.anastasiadis_sevcik.replication import (
    ReplicationResult,
    ReplicationTask,
    run_replication,
)
from experiments.studies.anastasiadis_sevcik.claim import PER_REP, REP_FIGURES
from experiments.studies.anastasiadis_sevcik.spec import StudySpec
from experiments.reporting.stats import replications_needed, t_interval

CellKey = tuple[str, float, str]  # (workload, load, policy)

Runner = Callable[[ReplicationTask], ReplicationResult]


@dataclass
class _CellState:
    results: list[ReplicationResult] = field(default_factory=list)
    requested: int = 0
    done: bool = False


@dataclass(frozen=True)
class StudyResult:
    """Everything the report needs: one row per replication, and the wall time."""

    spec: StudySpec
    replications: pd.DataFrame
    wall_s: float

    @property
    def cells(self) -> pd.DataFrame:
        return summarise(self.replications, self.spec)


def tasks_for(spec: StudySpec, key: CellKey, first: int, count: int) -> list[ReplicationTask]:
    workload, load, policy = key
    return [ReplicationTask(generator=spec.generator, workload=workload, load=load, policy=policy,
                            replication=r, seed=spec.seed, jobs_per_replication=spec.jobs_per_replication,
                            warmup_jobs=spec.warmup_jobs, saturation_extra_jobs=spec.saturation_extra_jobs)
            for r in range(first, first + count)]


def run_study(spec: StudySpec, runner: Runner = run_replication, show_progress: bool = True) -> StudyResult:
    """Run every cell of ``spec`` to its stopping rule and return all replications."""
    start = time.perf_counter()
    # High loads first: they take longest, and starting them early shortens the tail.
    keys: list[CellKey] = [(w, l, p) for l in sorted(spec.loads, reverse=True)
                           for w in spec.workloads for p in spec.cell_policies]
    state = {k: _CellState() for k in keys}
    pending: dict[Future | int, tuple[CellKey, ReplicationTask]] = {}

    progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("replications; {task.fields[cells]} cells done"), TimeElapsedColumn(),
                        disable=not show_progress, transient=False)
    with progress, _executor(spec.workers) as pool:
        bar = progress.add_task("anastasiadis study", total=0, cells=f"0/{len(keys)}")

        def submit(key: CellKey, n: int) -> None:
            st = state[key]
            for task in tasks_for(spec, key, st.requested, n):
                pending[pool.submit(runner, task)] = (key, task)
            st.requested += n
            progress.update(bar, total=progress.tasks[bar].total + n)

        for k in keys:
            submit(k, spec.min_replications)
        while pending:
            finished, _ = wait(list(pending), return_when=FIRST_COMPLETED)
            for fut in finished:
                key, _task = pending.pop(fut)
                if fut.cancelled():
                    continue
                st = state[key]
                st.results.append(fut.result())  # a failed replication is a bug: let it raise
                progress.advance(bar)
                if len(st.results) < st.requested or st.done:
                    continue
                more = _more_needed(spec, st)
                if more == 0:
                    st.done = True
                    progress.update(bar, cells=f"{sum(s.done for s in state.values())}/{len(keys)}")
                else:
                    submit(key, more)
            _cancel_saturated(pending, state, progress, bar)
    rows = [r.as_row() for st in state.values() for r in st.results]
    return StudyResult(spec, pd.DataFrame(rows), time.perf_counter() - start)


def _more_needed(spec: StudySpec, st: _CellState) -> int:
    """How many further replications this cell needs (0: finished)."""
    if any(r.saturated for r in st.results):
        return 0
    n = len(st.results)
    if n >= spec.max_replications:
        return 0
    samples = [r.response_ks for r in st.results]
    target = replications_needed(samples, spec.target_rel_halfwidth, spec.confidence, cap=spec.max_replications)
    return max(0, min(target, spec.max_replications) - n)


def _cancel_saturated(pending: dict, state: dict, progress: Progress, bar: int) -> None:
    """Drop queued replications of cells already known to be saturated."""
    for fut, (key, _task) in list(pending.items()):
        if any(r.saturated for r in state[key].results) and fut.cancel():
            pending.pop(fut)
            state[key].requested -= 1
            progress.update(bar, total=progress.tasks[bar].total - 1)


class _InlineExecutor:
    """One worker: run tasks in this process (no pickling; easier to debug)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def submit(self, fn: Runner, task: ReplicationTask) -> Future:
        # A failing replication raises here, at once; the pool would raise at result().
        fut: Future = Future()
        fut.set_result(fn(task))
        return fut


def _executor(workers: int) -> ProcessPoolExecutor | _InlineExecutor:
    return _InlineExecutor() if workers == 1 else ProcessPoolExecutor(max_workers=workers)


def summarise(reps: pd.DataFrame, spec: StudySpec) -> pd.DataFrame:
    """One row per cell: means over replications, the interval, and the DYN-EQUI ratios.

    Each replication measures the same number of jobs, so the mean of the
    replication means is the pooled mean.  A saturated cell has infinite
    response, waiting and normalised times (the paper's convention).
    """
    rows = []
    for (wk, load, pol), g in reps.groupby(["workload", "load", "policy"], sort=False):
        saturated = bool(g.saturated.any())
        ok = g[~g.saturated]
        iv = t_interval(list(ok.response_ks), spec.confidence) if len(ok) else None
        inf = math.inf
        rows.append({
            "workload": wk, "load": load, "policy": pol,
            "replications": len(g), "saturated": saturated,
            "converged": bool(not saturated and iv is not None and iv.meets(spec.target_rel_halfwidth)),
            "response_ks": inf if saturated else iv.mean,
            "response_hw_ks": inf if saturated else iv.half_width,
            "rel_half_width": inf if saturated else iv.rel_half_width,
            "wait_ks": inf if saturated else ok.wait_ks.mean(),
            "run_ks": ok.run_ks.mean() if len(ok) else g.run_ks.mean(),
            "partition": ok.partition.mean() if len(ok) else g.partition.mean(),
            "actual_load": ok.actual_load.mean() if len(ok) else g.actual_load.mean(),
            "jobs_simulated": int(g.jobs_simulated.sum()),
            "cpu_s": float(g.wall_s.sum()),
            # the unsaturated replications' figures, so claims pair them (replication r: one stream for all policies)
            PER_REP: {int(r.replication): {c: float(getattr(r, c)) for c in REP_FIGURES}
                      for r in ok.itertuples(index=False)},
        })
    cells = pd.DataFrame(rows)
    base = cells[cells.policy == "DYN-EQUI"].set_index(["workload", "load"]).response_ks
    denom = [base.get((w, l), math.nan) for w, l in zip(cells.workload, cells.load)]
    for col in ("response", "wait", "run"):
        cells[f"norm_{col}"] = cells[f"{col}_ks"] / denom
    paired = [_paired_vs_dyn(reps, w, l, p, spec.confidence)
              for w, l, p in zip(cells.workload, cells.load, cells.policy)]
    cells["vs_dyn_rel"] = [m for m, _ in paired]
    cells["vs_dyn_rel_hw"] = [h for _, h in paired]
    order = {p: i for i, p in enumerate(spec.cell_policies)}
    cells["_order"] = cells.policy.map(order)
    return cells.sort_values(["workload", "load", "_order"]).drop(columns="_order").reset_index(drop=True)


def _paired_vs_dyn(reps: pd.DataFrame, wk: str, load: float, pol: str, confidence: float) -> tuple[float, float]:
    """(R - R_DYN-EQUI) / R_DYN-EQUI and its half-width, paired by replication.

    Replication r of both policies saw the same jobs, so the per-replication
    difference cancels the noise the two policies share (e.g. how many huge
    jobs the replication drew).  Only replications both cells ran are paired,
    so a cell that stopped after a few replications gets a wide interval.
    inf for a saturated cell; NaN when fewer than two pairs exist.
    """
    if bool(reps[(reps.workload == wk) & (reps.load == load) & (reps.policy == pol)].saturated.any()):
        return math.inf, math.nan
    sel = (reps.workload == wk) & (reps.load == load) & ~reps.saturated
    a = reps[sel & (reps.policy == pol)].set_index("replication").response_ks
    b = reps[sel & (reps.policy == "DYN-EQUI")].set_index("replication").response_ks
    common = a.index.intersection(b.index)
    if len(common) < 2:
        return math.nan, math.nan
    base = float(b[common].mean())
    iv = t_interval(list(a[common] - b[common]), confidence)
    return iv.mean / base, iv.half_width / base
