"""Does the simulator make the live scheduler's choices when it is told each job's real time?

A cell's prediction can miss because the jobs took other times than their class model, or
because the simulated policy, given the same times, would still decide otherwise than the live
executor (other rounds, other start-up delays). This benchmark separates the two: it replays
every cell of a stored run with each job's work scaled so its execution at its live partition is
the measured one (the "oracle": x measured / repriced, `experiments.miss_causes.paired`), and
counts the jobs the oracle places differently from the live run, beside the single replay's count.
If the oracle places (nearly) every job as the live run did and meets the targets, the engine
reproduces the live scheduler and the misses are the job-time model's; if not, the simulated
policy or its overheads differ from the live one.

    .venv/bin/python -m experiments.studies.padhye_dowdy.analyses.schedule_oracle RESULTS.sqlite [...] [--out DIR]

Reads the stores only (about a second of CPU per store). Prints, per run and policy, the jobs
placed differently from live by the single replay and by the oracle, the mean partitions, and
the cells whose oracle misses a target; --out writes oracle.csv and oracle.md there.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from experiments import analysis_io, miss_causes
from experiments.config import ExperimentConfig
from experiments.predict import engine_jobs
from experiments.replay import owner_load, speeds_for
from experiments.report import md_table
from experiments.store import ResultsStore
from experiments.report import DEFAULT_TARGETS
from scheduler.engine import simulate
from scheduler.jobs import FinishedJob


def oracle_jobs(store: ResultsStore, cell_id: int, replication: int, policy: str, pairs: pd.DataFrame,
                models: dict, config: ExperimentConfig) -> pd.DataFrame:
    """The cell replayed with every live-done job's work scaled to its measured execution."""
    segments = store.segments(cell_id)
    hosts = segments[0]["hosts"] if segments else []
    stream = store.stream_of(cell_id)
    speeds = speeds_for(store.latest_calibration(), hosts)
    avail, schedule = owner_load(config, store, cell_id, replication, hosts)
    own = pairs[pairs.cell_id == cell_id]
    work = {int(j.job_id): float(j.execution) / float(j.repriced) for j in own.itertuples(index=False)
            if float(j.repriced) > 0}
    records = {r.id: r for r in simulate(engine_jobs(stream, models, work), policy, len(hosts), timeline=False,
                                         speeds=speeds, availability=avail, schedule=schedule).jobs}
    rows = [FinishedJob.of(sj, records[sj.id]) for sj in stream]
    return pd.DataFrame([{"cell_id": cell_id, "job_id": o.id, "mean_procs": o.mean_procs,
                          "execution": o.execution_s, "response": o.response_s, "status": o.status} for o in rows])


def over_model(pairs: pd.DataFrame, models: dict, label: str) -> list[dict]:
    """Per class and preemption count (4 or more together): the median of each job's execution over
    its class model at its mean partition, live and replayed (a resized job's excess is its resizes)."""
    rows = []
    known = pairs[pairs.cls.isin(list(models))]
    for (policy, cls), g in known.groupby(["policy", "cls"], sort=False):
        model = models[cls]
        live = [x / miss_causes.time_at(model, d, p) for x, d, p in zip(g.execution, g.demand, g.mean_procs)]
        rep = [x / miss_causes.time_at(model, d, p) for x, d, p in zip(g.execution_p, g.demand, g.mean_procs_p)]
        g = g.assign(live=live, rep=rep, k=np.minimum(g.preemptions.astype(int), 4))
        for k, h in g.groupby("k"):
            rows.append({"run": label, "policy": policy, "class": cls, "preemptions": f"{k}+" if k == 4 else str(k),
                         "jobs": len(h), "live / model": round(float(h.live.median()), 2),
                         "replay / model": round(float(h.rep.median()), 2)})
    return rows


def one_store(path: Path) -> tuple[list[dict], list[dict], list[dict]]:
    """(per policy, per cell, over the model) rows for one stored run."""
    with ResultsStore.open(path, readonly=True) as store:
        config = ExperimentConfig.model_validate(store.config)
        models = miss_causes.models_for(store.config, store.profiles())
        jobs, preds, cells = store.jobs_frame(), store.predictions_frame(), store.cells_frame()
        warmup = config.arrivals.warmup
        targets = {**DEFAULT_TARGETS, **(store.config.get("targets") or {})}
        pairs = miss_causes.paired(jobs, preds, models, 0)
        oracle = pd.concat([oracle_jobs(store, int(c.cell_id), int(c.replication), c.policy, pairs, models, config)
                            for c in cells.itertuples() if int(c.cell_id) in set(pairs.cell_id)], ignore_index=True)
    label = f"{path.parent.name}/{path.stem}" if path.parent.name.startswith("run-") else path.stem
    both = pairs[pairs.job_id >= warmup].merge(oracle, on=["cell_id", "job_id"], suffixes=("", "_o"))
    per_policy, per_cell = [], []
    tol = miss_causes.PLACEMENT_TOLERANCE
    for policy, g in both.groupby("policy", sort=False):
        live = g.mean_procs.astype(float)
        per_policy.append({"run": label, "policy": policy, "jobs": len(g),
                           "replay placed differently": int(((live - g.mean_procs_p).abs() > tol).sum()),
                           "oracle placed differently": int(((live - g.mean_procs_o).abs() > tol).sum()),
                           "partition live": live.mean(), "partition replay": g.mean_procs_p.mean(),
                           "partition oracle": g.mean_procs_o.mean()})
    for (policy, rate), g in both.groupby(["policy", "rate"], sort=False):
        # each figure per replication, then the mean over replications (as the report's cells are)
        m = g.groupby("cell_id").agg(
            response=("response", "mean"), response_o=("response_o", "mean"), response_p=("response_p", "mean"),
            execution=("execution", "median"), execution_o=("execution_o", "median"),
            execution_p=("execution_p", "median")).mean()
        per_cell.append({"run": label, "policy": policy, "rate": float(rate),
                         "response, oracle error": m.response_o / m.response - 1,
                         "response, replay error": m.response_p / m.response - 1,
                         "median execution, oracle error": m.execution_o / m.execution - 1,
                         "median execution, replay error": m.execution_p / m.execution - 1,
                         "response target": targets["response_rel"], "execution target": targets["execution_rel"]})
    return per_policy, per_cell, over_model(pairs[pairs.job_id >= warmup], models, label)


def main() -> None:
    args = analysis_io.stored_runs_args(__doc__, "the oracle report")
    per_policy, per_cell, excess = [], [], []
    for path in args.results:
        a, b, c = one_store(path)
        per_policy += a
        per_cell += b
        excess += c
    pol, cells = pd.DataFrame(per_policy), pd.DataFrame(per_cell)
    analysis_io.table("Jobs placed differently from the live run (past warm-up)",
                  ["run", "policy", "jobs", "replay", "oracle", "partition live", "replay", "oracle"],
                  [[r.run, r.policy, str(r.jobs), str(r._4), str(r._5), f"{r._6:.2f}", f"{r._7:.2f}", f"{r._8:.2f}"]
                   for r in pol.itertuples()])
    summary = misses_by_policy(pol, cells)
    analysis_io.table("Misses (response / median execution) and placements, by policy",
                  list(summary.columns), [[str(v) for v in r] for r in summary.itertuples(index=False)])
    worst = cells.assign(w=np.maximum(cells["response, oracle error"].abs(),
                                      cells["median execution, oracle error"].abs())).nlargest(8, "w")
    analysis_io.table("Oracle's largest errors", ["run", "policy", "rate", "response", "median execution"],
                  [[r.run, r.policy, f"{r.rate:g}", f"{r._4:+.1%}", f"{r._6:+.1%}"] for r in worst.itertuples()])
    if args.out:
        analysis_io.write_report(
            args.out, "oracle", cells, lambda path: plot(cells, path), "The simulator told each job's measured time",
            "-m experiments.studies.padhye_dowdy.analyses.schedule_oracle", args.results,
            "## By policy\n\n" + md_table(summary) + "\n\n## By run and policy (jobs past warm-up)\n\n"
            + md_table(pol.round(2)) + "\n\n## By cell (errors: (predicted - measured) / measured)\n\n"
            + md_table(cells.round(3)) + "\n\n![oracle](oracle.png)\n\n## Execution over the class model at the "
            "job's mean partition, by preemptions (jobs past warm-up)\n\n" + md_table(pd.DataFrame(excess)) + "\n")
        pol.to_csv(args.out / "oracle-placements.csv", index=False)
        pd.DataFrame(excess).to_csv(args.out / "over-model.csv", index=False)


def misses_by_policy(pol: pd.DataFrame, cells: pd.DataFrame) -> pd.DataFrame:
    """Per policy: cells, their misses under the single replay and the oracle, and the jobs each
    placed differently from the live run."""
    rows = []
    for policy, g in cells.groupby("policy", sort=False):
        p = pol[pol.policy == policy]
        row: dict[str, object] = {"policy": policy, "cells": len(g)}
        for who in ("replay", "oracle"):
            r = int((g[f"response, {who} error"].abs() > g["response target"]).sum())
            e = int((g[f"median execution, {who} error"].abs() > g["execution target"]).sum())
            row[f"{who} misses"] = f"{r} / {e}"
            row[f"{who} placed differently"] = f"{int(p[f'{who} placed differently'].sum())} of {int(p.jobs.sum())}"
        rows.append(row)
    return pd.DataFrame(rows)


def plot(cells: pd.DataFrame, path: Path) -> None:
    """Each cell's median-execution and response error, single replay against oracle, with the targets."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4.5))
    for ax, stat, target in ((axes[0], "response", "response target"),
                             (axes[1], "median execution", "execution target")):
        for policy, g in cells.groupby("policy", sort=False):
            ax.scatter(g[f"{stat}, replay error"] * 100, g[f"{stat}, oracle error"] * 100, label=policy, s=18)
        t = float(cells[target].iloc[0]) * 100
        lim = max(40.0, float(cells[[f"{stat}, replay error", f"{stat}, oracle error"]].abs().max().max()) * 105)
        ax.axhspan(-t, t, color="green", alpha=0.12, label=f"target ±{t:g}%")
        ax.axvspan(-t, t, color="grey", alpha=0.08)
        ax.set_xlim(-lim, lim)
        ax.set_ylim(-lim, lim)
        ax.set_xlabel(f"{stat}: single replay's error (%)")
        ax.set_ylabel(f"{stat}: oracle's error (%)")
        ax.legend(fontsize=8)
    fig.suptitle("Cells replayed with each job's measured time (oracle) against the profile's (single replay)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
