"""Benchmark: a stored run's cells predicted three ways from its own profile, side by side.

    .venv/bin/python -m experiments.studies.padhye_dowdy.analyses.prediction_variants RESULTS.sqlite [...] [--out DIR]

The measured jobs are the same in every variant; only what the prediction takes from the
profile changes, on copies of the stores (the originals are not touched):

- `reference` (`[profile] speed_basis = "reference"`, experiments/models/speed_basis.py): each
  profile run's times brought by the meter to the profile's reference speed (the median its
  runs were delivered), the checks between cells included when the run took them
  (experiments/profile_checks.py).
- `reference, start only`: the same without the checks: the profile as taken before the first cell.
- `as profiled` (`speed_basis = "as-profiled"`): the profile's times as measured, not brought to one speed. A job on p
  workstations is then predicted at the speed the profile's runs on p were delivered. Where
  the governor runs short of headroom when every workstation is busy (Fig. 4: its runs on 8
  got 0.245 reference cores, its others 0.27-0.29), the reference speed is one the cells
  do not get, and this variant keeps the shortfall in.

Prints per cell the response and median-execution errors of each variant and the misses
against the config's targets; with --out, writes variants.md, variants.csv and variants.png.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from experiments.analysis_io import console, stored_runs_args, table  # noqa: E402

from experiments import profile_checks  # noqa: E402
from experiments.replay import replay  # noqa: E402
from experiments.report import analyse  # noqa: E402
from experiments.store import ResultsStore  # noqa: E402
from experiments.reporting.tables import md_table  # noqa: E402

# name -> (the profile's samples kept, the speed basis predicted under)
VARIANTS = {
    "reference": (lambda p: p, "reference"),
    "reference, start only": (profile_checks.at_start, "reference"),
    "as profiled": (lambda p: p, "as-profiled"),
}


def copy_store(src: Path, into: Path) -> Path:
    into.mkdir(parents=True)
    for suffix in ("", "-wal", "-shm"):
        part = Path(f"{src}{suffix}")
        if part.exists():
            shutil.copy(part, into / f"{src.name}{suffix}")
    return into / src.name


def errors(src: Path, variant: str, tmp: Path) -> tuple[pd.DataFrame, dict]:
    """The cells' errors of one variant: policy, rate, err_response, err_median_execution."""
    db = copy_store(src, tmp / variant.replace(" ", "-"))
    with ResultsStore.open(db) as store:
        keep, basis = VARIANTS[variant]
        for name, data in store.profiles().items():
            store.update_profile(name, keep(data))
        replay(store, basis=basis)
    a = analyse(db)
    return a.compared[["policy", "rate", "err_response", "err_median_execution"]].copy(), a.targets


def main() -> None:
    args = stored_runs_args(__doc__, "variants.md, variants.csv and variants.png")
    frames = []
    for src in args.results:
        with ResultsStore.open(src, readonly=True) as store:
            run = store.config.get("name", src.stem)
            checks = profile_checks.drift_text(store.profiles())
        if src.parent.name.startswith("run-"):  # a figure's earlier or later run, kept beside it
            run = f"{run} ({src.parent.name})"
        with tempfile.TemporaryDirectory() as tmp:
            for variant in VARIANTS:
                frame, targets = errors(src, variant, Path(tmp))
                frames.append(frame.assign(run=run, variant=variant, response_target=targets["response_rel"],
                                           execution_target=targets["execution_rel"]))
        console.print(f"{run}: checks between cells: {checks or 'none'}")
    cells = pd.concat(frames, ignore_index=True)
    cells["response_miss"] = cells.err_response.abs() > cells.response_target
    cells["execution_miss"] = cells.err_median_execution.abs() > cells.execution_target
    wide = cells.pivot_table(index=["run", "policy", "rate"], columns="variant",
                             values=["err_response", "err_median_execution"], sort=False)
    rows = [[run, pol, f"{rate:g}", *(f"{wide.loc[(run, pol, rate), (m, v)]:+.1%}"
                                       for m in ("err_response", "err_median_execution") for v in VARIANTS)]
            for run, pol, rate in wide.index]
    table("prediction error per cell: response (reference | reference, start only | as profiled), "
          "then median execution (the same)",
          ["run", "policy", "rate", *(f"{m} {v}" for m in ("resp.", "exec.") for v in VARIANTS)], rows)
    totals = cells.groupby(["run", "variant"], sort=False)[["response_miss", "execution_miss"]].sum()
    overall = cells.groupby("variant", sort=False)[["response_miss", "execution_miss"]].sum()
    n = cells.groupby("variant", sort=False).size()
    table("cells missing the targets (response / median execution)", ["run", *VARIANTS],
          [[run, *(f"{int(totals.loc[(run, v)].response_miss)} / {int(totals.loc[(run, v)].execution_miss)}"
                   for v in VARIANTS)] for run in dict.fromkeys(cells.run)]
          + [[f"all ({n.iloc[0]} cells)", *(f"{int(overall.loc[v].response_miss)} / {int(overall.loc[v].execution_miss)}"
                                          for v in VARIANTS)]])
    if args.out:
        write(cells, overall, n, args)


def write(cells: pd.DataFrame, overall: pd.DataFrame, n: pd.Series, args: argparse.Namespace) -> None:
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    cells.to_csv(out / "variants.csv", index=False)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), sharey=False)
    for ax, metric, label in ((axes[0], "err_response", "mean response"), (axes[1], "err_median_execution", "median execution")):
        stored = cells[cells.variant == "reference"][metric].to_numpy()
        for variant, marker in (("reference, start only", "x"), ("as profiled", "o")):
            ax.scatter(stored * 100, cells[cells.variant == variant][metric].to_numpy() * 100, marker=marker,
                       label=variant, alpha=0.7)
        lim = max(abs(cells[metric]).max() * 100, 10) * 1.05
        ax.plot([-lim, lim], [-lim, lim], color="grey", lw=0.8)
        target = cells.response_target.iloc[0] if metric == "err_response" else cells.execution_target.iloc[0]
        for edge in (-target * 100, target * 100):
            ax.axhline(edge, color="grey", ls=":", lw=0.8)
            ax.axvline(edge, color="grey", ls=":", lw=0.8)
        ax.set_xlabel(f"{label} error, at the reference speed (%)")
        ax.set_ylabel(f"{label} error, variant (%)")
        ax.set_xlim(-lim, lim)
        ax.set_ylim(-lim, lim)
        ax.legend(fontsize=8)
    fig.suptitle("Each cell's prediction error: at the reference speed against the variants (dotted: targets)")
    fig.tight_layout()
    fig.savefig(out / "variants.png", dpi=110)
    plt.close(fig)
    per_run = cells.groupby(["run", "variant"], sort=False)[["response_miss", "execution_miss"]].sum()
    lines = ["# Prediction variants: the same runs predicted from their profiles three ways", "",
             f"Made by `{' '.join(['.venv/bin/python', '-m', 'experiments.studies.padhye_dowdy.analyses.prediction_variants', *sys.argv[1:]])}`.",
             "", (__doc__ or "").split("\n\n", 2)[2].split("Prints per cell")[0].strip(), "",
             "## Cells missing the targets (response / median execution)", ""]
    rows = [[run, *(f"{int(per_run.loc[(run, v)].response_miss)} / {int(per_run.loc[(run, v)].execution_miss)}"
                    for v in VARIANTS)] for run in dict.fromkeys(cells.run)]
    rows.append([f"all ({n.iloc[0]} cells)", *(f"{int(overall.loc[v].response_miss)} / "
                                               f"{int(overall.loc[v].execution_miss)}" for v in VARIANTS)])
    lines.append(md_table(["run", *VARIANTS], rows))
    lines += ["", "Every cell's errors are in `variants.csv`; `variants.png` plots each variant's against the reference one.", ""]
    (out / "variants.md").write_text("\n".join(lines))
    console.print(f"written: {out / 'variants.md'}, variants.csv, variants.png")


if __name__ == "__main__":
    main()
