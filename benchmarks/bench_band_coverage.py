"""Do the 90% bands hold 90%? Coverage and bias of the predictions over every committed live store.

Out of sample: each store's bands are drawn from a noise model estimated from the *other*
committed runs (`experiments.noise.for_run`), never from its own jobs. For every cell
(policy, rate) and statistic, the measured figure (meter-normalised where metered, as the
report compares) is inside the band or not; the coverage is the fraction inside, per
statistic, per results folder and pooled, with its exact binomial 95% interval. Beside it
the bands stored in the committed runs (made before the noise model) are scored the same way.

Bias: the mean signed error of the ensemble's mean response against the measured one
(speed-normalised), pooled, per arrival rate of each figure with three or more rates, and
Equipartition's preemptions per job against the replays'.

    python -m benchmarks.bench_band_coverage [--replicas 100] [--write]

`--write` also writes the noise library (experiments/results/noise/runs.json) and the
per-cell table and summary (experiments/results/noise/coverage.csv, coverage.md).
"""
from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd
from rich.progress import track
from scipy import stats as st

from experiments import noise, noise_evidence
from experiments.config import ExperimentConfig
from experiments.replay import band_values, cell_replays, class_models, run_identity
from experiments.report import analyse
from experiments.reporting.run_stats import with_bands
from experiments.reporting.stats import in_band
from experiments.reporting.tables import md_table as _md_table
from experiments.store import ResultsStore

def md_table(frame: pd.DataFrame) -> str:
    return _md_table(list(frame.columns), frame.values.tolist())


STATS = ("response", "median_execution", "wait", "mean_procs")


def coverage_rows(path: Path, library: noise.Library, replicas: int) -> list[dict]:
    """One row per (cell, statistic): measured, the new band and the stored band, inside or not."""
    a = analyse(path)
    if a.compared.empty:
        return []
    run, family, paper = run_identity(path, a.config)
    with ResultsStore.open(path, readonly=True) as store:
        model = noise.for_run(library.runs, run, family, paper, created_at=float(store.timeline()["created_at"] or 0.0))
        config = ExperimentConfig.model_validate(store.config)
        models = class_models(config, store.profiles())
        draws = model.draws(replicas, seed=0) if model is not None else None
        bands = {c.cell_id: band_values(c, models, draws, replicas) for c in cell_replays(store, config) if c.counted}
    new = with_bands(a.compared, a.cells, bands, a.targets)
    rows = []
    for stat in STATS:
        inside_new = in_band(new, stat)
        inside_old = in_band(a.compared, stat)
        for i, row in new.iterrows():
            measured = row.get(f"measured_{stat}_norm")
            if measured is None or not np.isfinite(float(measured)):
                measured = row.get(f"measured_{stat}")
            rows.append({"paper": paper, "run": run, "policy": row.policy, "rate": float(row.rate), "stat": stat,
                         "replications": int(row.replications), "jobs": int(row.jobs),
                         "measured": float(measured) if measured is not None else math.nan,
                         "predicted": float(row.get(f"predicted_{stat}", math.nan)),
                         "band_lo": float(row.get(f"band_{stat}_lo", math.nan)),
                         "band_hi": float(row.get(f"band_{stat}_hi", math.nan)),
                         "inside": inside_new[i], "inside_before": inside_old[i],
                         "measured_preemptions": float(row.get("measured_preemptions", math.nan)),
                         "predicted_preemptions": float(row.get("predicted_preemptions", math.nan)),
                         "noise": model.text() if model is not None else "none"})
    return rows


def interval(k: int, n: int) -> str:
    if n == 0:
        return "n/a (0 cells)"
    ci = st.binomtest(k, n).proportion_ci(0.95, method="exact")
    return f"{k}/{n} = {k / n:.0%} [{ci.low:.0%}, {ci.high:.0%}]"


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Coverage per statistic and results folder, and pooled, now and with the stored bands."""
    out = []
    for stat in STATS:
        f = frame[frame.stat == stat]
        for paper, g in [*sorted(f.groupby("paper")), ("pooled", f)]:
            new, old = g.inside.dropna(), g.inside_before.dropna()
            width = ((g.band_hi - g.band_lo) / 2 / g.predicted).dropna()
            out.append({"statistic": stat, "results": paper,
                        "coverage (90% band)": interval(int(new.sum()), len(new)),
                        "bands stored in the run": interval(int(old.sum()), len(old)) if len(old) else "n/a (none stored)",
                        "median half-width / prediction": f"{width.median():.1%}" if len(width) else "n/a",
                        "no band (thin cell)": int(g.inside.isna().sum())})
    return pd.DataFrame(out)


def bias(frame: pd.DataFrame) -> tuple[str, pd.DataFrame, str]:
    """Pooled mean signed error of mean response; per rate of each run with >= 3 rates; EQUI preemptions."""
    r = frame[(frame.stat == "response") & frame.measured.notna() & frame.predicted.notna()].copy()
    r["err"] = (r.predicted - r.measured) / r.measured
    pooled = f"pooled mean signed error of mean response (speed-normalised): {r.err.mean():+.1%} over {len(r)} cells"
    per_rate = []
    for run, g in r.groupby("run"):
        if g.rate.nunique() >= 3:
            for rate, h in g.groupby("rate"):
                per_rate.append({"run": run, "rate": rate, "cells": len(h), "mean signed error": f"{h.err.mean():+.1%}"})
    e = frame[(frame.stat == "response") & (frame.policy.str.upper().str.startswith("EQUI"))].dropna(
        subset=["measured_preemptions", "predicted_preemptions"])
    e = e[e.predicted_preemptions > 0]
    equi = (f"Equipartition preemptions per job, measured/replays: median {np.median(e.measured_preemptions / e.predicted_preemptions):.2f} "
            f"over {len(e)} cells" if len(e) else "Equipartition preemptions: no cell")
    return pooled, pd.DataFrame(per_rate), equi


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, default=100)
    parser.add_argument("--write", action="store_true", help="write the noise library and the coverage report")
    args = parser.parse_args()
    t0 = time.perf_counter()
    stores = noise_evidence.committed_stores()
    library = noise.Library([noise_evidence.run_noise(p) for p in track(stores, description="noise evidence")])
    for run in library.runs:
        print(f"  {run.run}: {run.jobs} unresized jobs in {len(run.cell_n)} cells")
    rows = []
    for path in track(stores, description="bands"):
        rows += coverage_rows(path, library, args.replicas)
    frame = pd.DataFrame(rows)
    table = summary(frame)
    pooled, per_rate, equi = bias(frame)
    print(md_table(table))
    print(pooled)
    print(equi)
    if len(per_rate):
        print(md_table(per_rate))
    print(f"whole benchmark: {time.perf_counter() - t0:.0f} s, {len(stores)} stores, {args.replicas} replays a cell")
    if args.write:
        out = noise.LIBRARY.parent
        library.save(noise.LIBRARY)
        frame.to_csv(out / "coverage.csv", index=False)
        (out / "coverage.md").write_text(
            "# Coverage of the 90% bands over every committed live store\n\n"
            f"Made by `python -m benchmarks.bench_band_coverage --write` ({time.strftime('%Y-%m-%d')}), "
            f"{args.replicas} replays a cell; each store's bands from a noise model of the other runs "
            "(experiments/noise.py). Per-cell rows: coverage.csv.\n\n"
            f"{md_table(table)}\n\n{pooled}.\n\n{equi}.\n\n"
            + (f"Per arrival rate (runs with three or more rates):\n\n{md_table(per_rate)}\n" if len(per_rate) else ""))
        print(f"wrote {noise.LIBRARY}, {out / 'coverage.csv'}, {out / 'coverage.md'}")


if __name__ == "__main__":
    main()
