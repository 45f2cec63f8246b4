"""How many replications would an exact model need to meet every prediction target in one run?

Each stored cell keeps its ensemble: 40 replays of its stream with each job's work drawn from the
class's run-to-run noise (`experiments.predict.ensemble`). Their spread is what a run of that
stream scatters by when the model is exact, so it bounds what any model can promise. A cell's
figure is the mean over its R replications; with k times as many, its spread shrinks by sqrt(k).
Taking the per-replication spread as normal, this benchmark gives, for k = 1, 2, 4, ... :
- the misses an exact model expects over every cell and target (sum of 1 - chance);
- the chance it meets every target of a figure, and of all figures together;
- what k that takes for a 90% chance, and the minutes of cells it costs (k x the run's own).
At k = 1 the expected misses agree with the summary's "misses an exact model expects", which
counts the replays directly (a check of the normal approximation).
The replays' noise is the profile's (each class's run_sigma, from a few dedicated runs a size).
The noise check beside it sets that against the live runs' own: the log-sd of measured over
profiled execution of the jobs that kept one partition, per class and size (8 jobs or more).
Where the live spread is the larger, the replications above are a lower bound.

    .venv/bin/python -m experiments.studies.padhye_dowdy.analyses.replications_needed RESULTS.sqlite [...] [--out DIR]

Reads the stores only, in a second or two; --out writes needed.md, needed.csv, needed.png and noise.csv there.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import norm

from experiments import analysis_io, miss_causes
from experiments.report import analyse, md_table
from experiments.reporting.figures import save_png
from experiments.store import ResultsStore
from experiments.report import DEFAULT_TARGETS

MULTIPLES = (1, 2, 4, 8, 16, 32)
STATS = (("response", "response_rel"), ("median_execution", "execution_rel"))
WANTED = 0.90


def cells_of(path: Path) -> tuple[pd.DataFrame, float]:
    """(one row per cell and target: mean, per-replication sd, replications, target; minutes of cells)."""
    with ResultsStore.open(path, readonly=True) as store:
        bands, cells, config = store.bands(), store.cells_frame(), store.config
        minutes = sum(c["updated_at"] - c["created_at"] for c in store.timeline()["cells"]) / 60
    targets = {**DEFAULT_TARGETS, **(config.get("targets") or {})}
    rows = []
    for (policy, rate), g in cells.groupby(["policy", "rate"]):
        for stat, key in STATS:
            runs = [bands[c][stat] for c in g.cell_id if c in bands and stat in bands[c]]
            if len(runs) == 0 or len({len(r) for r in runs}) != 1:
                continue
            arr = np.array(runs, dtype=float)
            rows.append({"policy": policy, "rate": float(rate), "statistic": stat, "replications": len(arr),
                         "mean": float(arr.mean()), "sd_one": float(math.sqrt(arr.var(axis=1, ddof=1).mean())),
                         "target": float(targets[key])})
    return pd.DataFrame(rows), minutes


def noise_check(path: Path, label: str) -> list[dict]:
    """Per class and size with 8 or more unresized jobs: their live log-sd of measured over
    profiled execution beside the class's run_sigma, which the replays drew from."""
    a = analyse(path)
    models = miss_causes.models_for(a.config, a.profiles)
    rows = []
    for (cls, p), g in a.unresized.groupby(["cls", "p"]):
        if len(g) < 8 or cls not in models:
            continue
        live = float(np.log(g.ratio.astype(float)).std(ddof=1))
        rows.append({"run": label, "class": cls, "workstations": int(p), "jobs": len(g), "live log-sd": round(live, 3),
                     "run_sigma": round(models[cls].run_sigma, 3),
                     "live / run_sigma": round(live / models[cls].run_sigma, 2) if models[cls].run_sigma else np.nan})
    return rows


def chance(frame: pd.DataFrame, k: float) -> pd.Series:
    """Each row's chance to land within its target with k times its replications."""
    z = frame.target * frame["mean"] / (frame.sd_one / np.sqrt(frame.replications * k))
    return 2 * norm.cdf(z) - 1


def needed(frame: pd.DataFrame) -> float:
    """The least multiple (a power of two up to 1024) giving every target a WANTED chance together."""
    k = 1.0
    while k <= 1024 and float(np.prod(chance(frame, k))) < WANTED:
        k *= 2
    return k


def plot(every: list[pd.DataFrame], together: pd.DataFrame, path: Path) -> None:
    """Chance of meeting every target against the multiple of the replications, per run and for all."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ks = np.geomspace(1, 64, 49)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for frame in every:
        ax.plot(ks, [float(np.prod(chance(frame, k))) for k in ks], lw=1, label=str(frame.run.iloc[0])[:28])
    ax.plot(ks, [float(np.prod(chance(together, k))) for k in ks], color="black", lw=2.5, label="all together")
    ax.axhline(WANTED, color="grey", ls=":")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("replications, as a multiple of the run's own")
    ax.set_ylabel("chance an exact model meets every target")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    save_png(fig, path, dpi=110)


def main() -> None:
    args = analysis_io.stored_runs_args(__doc__, "needed.md, needed.csv and needed.png")
    per_fig, every, noise = [], [], []
    for path in args.results:
        frame, minutes = cells_of(path)
        label = f"{path.parent.name}/{path.stem}" if path.parent.name.startswith("run-") else path.stem
        noise += noise_check(path, label)
        every.append(frame.assign(run=label))
        k = needed(frame)
        row = {"run": label, "targets": len(frame), "replications": int(frame.replications.max()),
               "minutes of cells": round(minutes, 1)}
        for m in MULTIPLES:
            c = chance(frame, m)
            row[f"x{m}: expected misses"] = round(float((1 - c).sum()), 1)
            row[f"x{m}: chance all met"] = f"{float(np.prod(c)):.0%}"
        row[f"multiple for {WANTED:.0%}"] = int(k)
        row["minutes it takes"] = round(k * minutes)
        per_fig.append(row)
    table = pd.DataFrame(per_fig)
    together = pd.concat(every, ignore_index=True)
    total = {f"x{m}": (float((1 - chance(together, m)).sum()), float(np.prod(chance(together, m))))
             for m in MULTIPLES}
    cols = ["run", "replications", "minutes of cells", "x1: expected misses", "x1: chance all met",
            "x4: chance all met", "x16: chance all met", f"multiple for {WANTED:.0%}", "minutes it takes"]
    analysis_io.table("Replications an exact model needs to meet every target", cols,
                  [[str(r[c]) for c in cols] for r in per_fig])
    line = "; ".join(f"{m}: {e:.1f} expected misses, {p:.0%} all met" for m, (e, p) in total.items())
    print(f"all runs together ({len(together)} targets), by multiple of the replications: {line}")
    checked = pd.DataFrame(noise)
    ratio = checked["live / run_sigma"].dropna() if not checked.empty else pd.Series(dtype=float)
    noise_line = (f"live spread over run_sigma: median {ratio.median():.2f}, above 1 in {int((ratio > 1).sum())} "
                  f"of {len(ratio)} class sizes" if len(ratio) else "no class size with 8 unresized jobs")
    print(noise_line)
    if args.out:
        analysis_io.write_report(args.out, "needed", table, lambda path: plot(every, together, path),
                             "Replications an exact model needs to meet every prediction target",
                             "-m experiments.studies.padhye_dowdy.analyses.replications_needed", args.results,
                             md_table(table) + "\n\nAll runs together, by multiple of the replications: " + line
                             + ".\n\n![needed](needed.png)\n\n## Noise check: the replays' noise against the live "
                             "runs'\n\n" + (md_table(checked) if not checked.empty else "") + "\n\n" + noise_line
                             + ".\n")
        checked.to_csv(args.out / "noise.csv", index=False)


if __name__ == "__main__":
    main()
