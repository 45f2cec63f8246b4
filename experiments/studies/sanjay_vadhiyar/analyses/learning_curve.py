"""Would more training runs, or availability read during the run, bring Sanjay & Vadhiyar's
model under 10% held-out error? Answered from the stored live runs, without running anything.

    python -m experiments.studies.sanjay_vadhiyar.analyses.learning_curve experiments/results/sanjay-vadhiyar/live-cg/cg-runs.csv \
        experiments/results/sanjay-vadhiyar/live-cg/fig7/runs.csv --application cg

TRAIN is `nowlab select train`'s CSV; HELDOUT is `nowlab select live`'s runs.csv (measured runs
on the sets the algorithms chose; reused measurements and failures are left out). For each
availability window (`before`: the monitor's minima over the 8 s before the job, what a
scheduler knows when it chooses; `run`: over the job's own span, known only afterwards):

1. the learning curve: the model fitted on n of the training runs drawn at random (--repeats
   draws per n), its mean absolute error on every held-out run: the median and 10-90% range;
2. more runs of the held-out kind: the held-out runs split in --folds folds, the model fitted
   on all training runs plus every other fold, its error on the fold left out.

A curve still falling at n = all says more runs would help; a flat one says the model's form,
or the noise of the runs, is what is left.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from rich.console import Console
from rich.progress import track
from rich.table import Table

from experiments.models.sv_model import SvModelError
from experiments.models.sv_regression import TrainingRun, fit, holdout_mape

WINDOWS = {"before": ("before_min_avail_cpu", "before_min_avail_bw_bit_s", "min_avail_cpu", "min_avail_bw_bit_s"),
           "run": ("run_min_avail_cpu", "run_min_avail_bw_bit_s", "run_min_avail_cpu", "run_min_avail_bw_bit_s")}


def runs(frame: pd.DataFrame, cpu: str, bw: str, elapsed: str) -> list[TrainingRun]:
    return [TrainingRun(float(r.problem_size), int(r.procs), float(getattr(r, cpu)), float(getattr(r, bw)),
                        float(getattr(r, elapsed))) for r in frame.itertuples()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("train", type=Path)
    ap.add_argument("heldout", type=Path)
    ap.add_argument("--application", default="cg")
    ap.add_argument("--repeats", type=int, default=40)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    train = pd.read_csv(a.train)
    train = train[train.status == "done"]
    held = pd.read_csv(a.heldout)
    held = held[(held.status == "done") & (~held.reused.astype(bool))]
    console = Console()
    console.print(f"{len(train)} training runs, {len(held)} held-out runs ({a.heldout})")
    rng = np.random.default_rng(a.seed)
    for window, (tcpu, tbw, hcpu, hbw) in WINDOWS.items():
        missing = [c for c, f in ((tcpu, train), (tbw, train), (hcpu, held), (hbw, held))
                   if c not in f or f[c].isna().any()]
        if missing:
            console.print(f"window {window}: not recorded for every run ({', '.join(sorted(set(missing)))}); left out")
            continue
        tr = runs(train, tcpu, tbw, "elapsed_s")
        ho = runs(held, hcpu, hbw, "actual_s")
        table = Table(title=f"window: {window}; held-out mean absolute error")
        for col in ("training runs", "fits", "median", "10%", "90%"):
            table.add_column(col, justify="right")
        sizes = sorted({n for n in (12, 18, 24, 30, len(tr)) if n <= len(tr)})
        for n in track(sizes, description=f"{window}: learning curve", console=console, transient=True):
            errors = []
            for _ in range(1 if n == len(tr) else a.repeats):
                pick = rng.choice(len(tr), n, replace=False)
                try:
                    errors.append(holdout_mape(fit([tr[i] for i in pick], a.application), ho))
                except SvModelError:
                    continue  # too few unloaded runs among those drawn
            if errors:
                table.add_row(str(n), str(len(errors)), f"{100 * np.median(errors):.1f}%",
                              f"{100 * np.percentile(errors, 10):.1f}%", f"{100 * np.percentile(errors, 90):.1f}%")
        order = rng.permutation(len(ho))
        folds = np.array_split(order, a.folds)
        cv = []
        for k, fold in enumerate(folds):
            rest = [ho[i] for j, f in enumerate(folds) if j != k for i in f]
            cv.append(holdout_mape(fit(tr + rest, a.application), [ho[i] for i in fold]))
        table.add_row(f"{len(tr)} + {len(ho) - len(folds[0])} held-out kind", f"{a.folds} folds",
                      f"{100 * np.median(cv):.1f}%", f"{100 * min(cv):.1f}%", f"{100 * max(cv):.1f}%")
        console.print(table)


if __name__ == "__main__":
    main()
