"""The study's outputs: one CSV per figure, PNG plots, and report.md with the claims."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from experiments.reporting.claims import Claim  # noqa: E402
from experiments.reporting.figures import save_png  # noqa: E402
from experiments.reporting.tables import md_table  # noqa: E402
from experiments.studies.sanjay_vadhiyar.apps import APPLICATIONS  # noqa: E402
from experiments.studies.sanjay_vadhiyar.claims import error_increase, judge_all  # noqa: E402
from experiments.studies.sanjay_vadhiyar.study import StudyResult  # noqa: E402

TABLES = ("scalability", "budgets", "errors", "applications", "setups")


@dataclass(frozen=True)
class Outputs:
    report_md: Path
    claims: list[Claim]

FIGURE_DPI = 110  # the committed figures' resolution


def _md(df: pd.DataFrame) -> str:
    """A data frame as a Markdown table, its index as the first column (floats as %g)."""
    head = [str(df.index.name or "")] + [str(c) for c in df.columns]
    rows = [[str(i)] + [f"{v:g}" if isinstance(v, float) else str(v) for v in row] for i, row in zip(df.index, df.values)]
    return md_table(head, rows, spaced_rule=True)


def _mean_table(df: pd.DataFrame, by: str) -> pd.DataFrame:
    return df.groupby([by, "algorithm"]).exec_s.mean().unstack("algorithm").round(1)


def _plot(df: pd.DataFrame, by: str, title: str, xlabel: str, path: Path, logx: bool = False) -> None:
    table = _mean_table(df, by)
    ax = table.plot(marker="o", logx=logx, figsize=(6, 4))
    ax.set(title=title, xlabel=xlabel, ylabel="predicted execution time of the schedule (s)")
    ax.figure.tight_layout()
    save_png(ax.figure, path, dpi=FIGURE_DPI)


def _table1(setups: pd.DataFrame) -> pd.DataFrame:
    g = setups.groupby("algorithm").exec_s
    return pd.DataFrame({"arithmetic mean (s)": g.mean(), "std. dev. (s)": g.std(),
                         "geometric mean (s)": g.apply(lambda x: float(np.exp(np.log(x).mean())))}).round(2)


def write_outputs(result: StudyResult, out: Path) -> Outputs:
    out.mkdir(parents=True, exist_ok=True)
    spec = result.spec
    for name in TABLES:
        getattr(result, name).to_csv(out / f"{name}.csv", index=False)
    claims = judge_all(result)
    _plot(result.scalability, "size", "Fig. 8: scalability (MD, 2048)", "processors", out / "fig8.png", logx=True)
    for size in sorted(set(result.budgets["size"])) if len(result.budgets) else []:
        _plot(result.budgets[result.budgets["size"] == size], "budget_s", f"Fig. 9: budget, {size} processors",
              "seconds of search", out / f"fig9_{size}.png", logx=True)
    inc = error_increase(result)
    if not inc.empty:
        ax = inc.plot(marker="o", figsize=(6, 4))
        ax.set(title="Fig. 10(b): increase with prediction error", xlabel="±p %", ylabel="% increase")
        save_png(ax.figure, out / "fig10.png", dpi=FIGURE_DPI)
    if len(result.applications):
        ax = _mean_table(result.applications, "application").plot.bar(figsize=(6, 4))
        ax.set(title=f"Fig. 11: applications on {spec.app_size} processors", ylabel="s")
        ax.figure.tight_layout()
        save_png(ax.figure, out / "fig11.png", dpi=FIGURE_DPI)
    if len(result.setups):
        s = result.setups.assign(ratio=result.setups.weight_ratio.round(0))
        _plot(s, "ratio", "Fig. 12: heterogeneity", "max/min cluster weight", out / "fig12.png")

    lines = [f"# Sanjay & Vadhiyar (2009) §5.2-5.3, simulated ({spec.name} run)", "",
             f"Budgets: each paper-second runs {spec.budget_scale:g} s here (25 s -> "
             f"{spec.budget_s(25):g} s). Clusters per point: {spec.reps} (Fig. 8), {spec.budget_reps} (Fig. 9), "
             f"{spec.error_reps} (Fig. 10), {spec.app_reps} (Fig. 11); {spec.setups} multi-cluster setups of "
             f"{spec.setup_clusters[0]}-{spec.setup_clusters[1]} clusters. Seed {spec.seed}. "
             f"Wall time {result.wall_s:.0f} s.", "",
             "Times are Eq. 1's predictions for the schedule each algorithm returned (no error), as in the paper. "
             "The application models are ours (the paper does not print its fitted equations): "
             + "; ".join(f"{m.describe().split(' [')[0]} at N = {n:g}" for m, n in APPLICATIONS.values()) + ".", "",
             "## Claims", "",
             md_table(["claim", "figure", "the paper", "verdict", "ours"],
                      [(c.paper.key, c.paper.figure, f'"{c.paper.quote}"', f"**{c.words}**", c.ours) for c in claims])]
    fig9 = ([(f"Fig. 9: mean time by search budget (s), {size} processors", result.budgets[result.budgets["size"] == size],
              "budget_s") for size in sorted(set(result.budgets["size"]))] if len(result.budgets) else [])
    sections = [("Fig. 8: mean time by cluster size", result.scalability, "size"), *fig9,
                ("Fig. 10: mean time by prediction error (±%)", result.errors, "error_pct"),
                ("Fig. 11: mean time by application", result.applications, "application")]
    for title, df, by in sections:
        if len(df):
            lines += ["", f"## {title}", "", _md(_mean_table(df, by))]
    if len(result.scalability):
        procs = result.scalability.groupby(["size", "algorithm"]).procs.mean().unstack("algorithm").round(0)
        lines += ["", "Mean processors in the chosen schedule:", "", _md(procs)]
    if len(result.setups):
        lines += ["", "## Table I: multi-cluster setups", "", _md(_table1(result.setups)), "",
                  "The paper's Table I (its MD model, 1,100 setups): SA 188.42 / 44.908 / 183.34, "
                  "GA 217.41 / 49.46 / 212.19, DP 124.53 / 21.45 / 122.9, BE 71.29 / 27.22 / 66.96 s "
                  "(arithmetic mean / std. dev. / geometric mean)."]
    report = out / "report.md"
    report.write_text("\n".join(lines) + "\n")
    pd.DataFrame([{"key": c.paper.key, "figure": c.paper.figure, "quote": c.paper.quote, "verdict": c.verdict.value,
                   "words": c.words, "ours": c.ours} for c in claims]).to_csv(out / "claims.csv", index=False)
    return Outputs(report, claims)


def print_claims(claims: list[Claim]) -> None:
    for c in claims:
        print(f"{c.verdict.value:>16}  {c.paper.key}: {c.ours}")
