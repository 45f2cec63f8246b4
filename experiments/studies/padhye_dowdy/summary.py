"""One page for a paper's figures: every claim with the paper's number, ours, the verdict and
the prediction errors of the cells it rests on, plus the claims that compare figures.

A summary config (TOML) names each figure's results store and states the
cross-figure claims, which no single figure's config can judge:

    title = "Padhye & Dowdy (1996): the claims of §3 and §4"
    [figures]                      # name -> its config and results store, relative to this file
    fig4 = { config = "../fig4.toml", results = "../../results/fig4.sqlite" }
    fig5 = { config = "../fig5.toml", results = "../../results/fig5.sqlite" }
    [[claim]]                      # judged by experiments.reporting.cell_claims.judge_across
    text = "Folding's gain over RA is larger with exponential demand"
    quote = "..."
    metric = "response"
    lower = "FOLDING"
    than = "RA"
    larger = "fig5"
    smaller = "fig4"

`summary_tables` is pure (cells tables in, tables out) so it is tested on
hand-made numbers; `write_summary` reads the stores and writes summary.md and
summary.csv. A figure whose store does not exist yet has its claims listed
from its config, as not run, so the page always lists every claim.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, model_validator

from experiments import miss_causes
from experiments.report import DEFAULT_TARGETS
from experiments.reporting.cell_claims import Run, judge, judge_across
from experiments.reporting.claims import Verdict
from experiments.governor_hold import GovernorHold
from experiments.unresized import drift_text

# (cell statistic, its target in the config, its name in the per-figure table)
_TARGETED = (("response", "response_rel", "response"), ("median_execution", "execution_rel", "execution"))


class SummaryError(ValueError):
    """A summary config problem, as one line naming the key."""


class CrossClaim(BaseModel):
    """The largest gap of `lower` under `than` is above in figure `larger` than in figure `smaller`."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    text: str
    quote: str = ""
    paper_value: str = ""
    metric: Literal["response", "wait", "execution", "mean_procs", "preemptions", "sync_delay"]
    lower: str
    than: str
    gap: Literal["relative", "increase", "absolute"] = "relative"
    larger: str
    smaller: str


class FigureRef(BaseModel):
    """Where a figure's experiment config and its results store are, and why its cells miss."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    config: Path
    results: Path
    misses: str = ""  # the cause of its cells' prediction misses, as its README found it (written, not computed)


class SummaryConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    title: str
    paper: str = ""
    figures: dict[str, FigureRef] = Field(min_length=1, description="figure name -> its config and results store")
    claims: list[CrossClaim] = Field(default_factory=list, alias="claim")

    @model_validator(mode="after")
    def _names(self) -> "SummaryConfig":
        for i, c in enumerate(self.claims):
            for key in ("larger", "smaller"):
                if getattr(c, key) not in self.figures:
                    raise ValueError(f"claim[{i}].{key}: no figure {getattr(c, key)!r} "
                                     f"(figures: {', '.join(self.figures)})")
        return self


def load_config(path: str | Path) -> SummaryConfig:
    """Read a summary config; figure paths become absolute (relative to the file)."""
    from testbed.config_loader import load_toml

    path = Path(path)
    config = load_toml(path, SummaryConfig, SummaryError)
    def absolute(p: Path) -> Path:
        return p if p.is_absolute() else (path.parent / p).resolve()

    figures = {k: v.model_copy(update={"config": absolute(v.config), "results": absolute(v.results)})
               for k, v in config.figures.items()}
    return config.model_copy(update={"figures": figures})


@dataclass(frozen=True)
class Figure:
    """One figure's results: its config (as stored), its measured and predicted cells, and both side by side."""

    config: dict[str, Any]
    measured: pd.DataFrame  # report_stats.cell_table's columns
    predicted: pd.DataFrame
    compared: pd.DataFrame  # report_stats.compare's columns (err_* per statistic)
    unresized: pd.DataFrame = field(default_factory=pd.DataFrame)  # experiments.unresized's rows
    governor: GovernorHold | None = None  # experiments.governor_hold over the cells
    misses: pd.DataFrame = field(default_factory=pd.DataFrame)  # experiments.miss_causes' rows
    measured_reps: pd.DataFrame | None = None  # one row per policy, rate and replication: claims pair on them
    predicted_reps: pd.DataFrame | None = None

    @property
    def measured_run(self) -> Run:
        return Run(self.measured, self.measured_reps)

    @property
    def predicted_run(self) -> Run:
        return Run(self.predicted, self.predicted_reps)

    @property
    def run(self) -> bool:
        """Whether any measured cell exists (a store not written yet, or still empty: no)."""
        return not self.measured.empty

    @property
    def rates(self) -> list[float]:
        return list(self.config.get("arrivals", {}).get("rates") or sorted(set(self.measured.rate)))

    @property
    def targets(self) -> dict[str, float]:
        return {**DEFAULT_TARGETS, **(self.config.get("targets") or {})}


COLUMNS = ["figure", "claim", "quote", "paper", "ours", "verdict", "outside the 95% interval", "predicted",
           "prediction errors"]


def prediction_errors(fig: Figure, policies: Sequence[str], rates: Sequence[float]) -> str:
    """The prediction errors of the cells a claim rests on: largest |error| of mean response and of
    median execution, and how many of those cells miss their target."""
    cmp = fig.compared
    if cmp.empty:
        return "no cells"
    rows = cmp[cmp.policy.isin(policies) & np.isin(cmp.rate.astype(float), [float(r) for r in rates])]
    parts = []
    for stat, key, what in (("response", "response_rel", "response"),
                            ("median_execution", "execution_rel", "median execution")):
        col = f"err_{stat}"
        errs = rows[col].astype(float) if col in rows else pd.Series(dtype=float)
        errs = errs[np.isfinite(errs)]
        if errs.empty:
            parts.append(f"{what}: n/a")
            continue
        miss = int((errs.abs() > fig.targets[key]).sum())
        parts.append(f"{what}: up to {errs.abs().max():.0%}, {miss} of {len(errs)} cells beyond "
                     f"{fig.targets[key]:.0%}")
    return "; ".join(parts)


def summary_tables(figures: Mapping[str, Figure | None], cross: Sequence[Mapping[str, Any]],
                   misses: Mapping[str, str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(claims, cells): one row per claim of every figure then per cross-figure claim; one row per
    figure with its cells, how many miss each prediction target and, from `misses`, why. A figure
    given as None is not run."""
    rows, cells = [], []
    for name, fig in figures.items():
        if fig is None:
            rows.append({"figure": name, "claim": "(not run)", "verdict": Verdict.NO_DATA.value})
            cells.append({"figure": name, "cells": 0})
            continue
        for c in fig.config.get("claims", fig.config.get("claim", [])):
            if not fig.run:
                rows.append({"figure": name, "claim": c["text"], "quote": c.get("quote", ""),
                             "paper": c.get("paper_value", ""), "ours": "not run",
                             "verdict": Verdict.NO_DATA.value})
                continue
            m, p = judge(c, fig.measured_run, fig.rates), judge(c, fig.predicted_run, fig.rates)
            policies = [c[k] for k in ("lower", "than", "policy") if c.get(k)]
            rows.append({"figure": name, "claim": c["text"], "quote": c.get("quote", ""),
                         "paper": c.get("paper_value", ""), "ours": m.ours, "verdict": m.verdict.value,
                         "outside the 95% interval": m.interval, "predicted": p.ours or p.verdict.value,
                         "prediction errors": prediction_errors(fig, policies, c.get("rates") or fig.rates)})
        cells.append({**_cells_row(name, fig), "why cells miss": (misses or {}).get(name, "")})
    present = {k: f for k, f in figures.items() if f is not None and f.run}
    if len(present) > 1:
        cells.append(_total_row(list(present.values())))
    for c in cross:
        m = judge_across(c, {k: f.measured_run for k, f in present.items()}, {k: f.rates for k, f in present.items()})
        p = judge_across(c, {k: f.predicted_run for k, f in present.items()}, {k: f.rates for k, f in present.items()})
        errs = "; ".join(f"{k}: {prediction_errors(present[k], [c['lower'], c['than']], present[k].rates)}"
                         for k in (c["larger"], c["smaller"]) if k in present)
        rows.append({"figure": f"{c['larger']} vs {c['smaller']}", "claim": c["text"], "quote": c.get("quote", ""),
                     "paper": c.get("paper_value", ""), "ours": m.ours, "verdict": m.verdict.value,
                     "outside the 95% interval": m.interval, "predicted": p.ours or p.verdict.value,
                     "prediction errors": errs or "no cells"})
    claims = pd.DataFrame(rows, columns=COLUMNS).astype(object).fillna("")
    per_figure = pd.DataFrame(cells, columns=["figure", "cells", "response misses", "execution misses",
                                              "worst response error", "worst execution error",
                                              "misses, speed-normalised", "misses an exact model expects",
                                              "chance an exact model meets all", "unresized jobs / profile",
                                              "governor at its ceiling (speed held)", "causes, computed",
                                              "why cells miss"])
    return claims, per_figure.astype(object).fillna("")


def _cells_row(name: str, fig: Figure) -> dict[str, Any]:
    response, execution, _ = _misses([fig])
    out: dict[str, Any] = {"figure": name, "cells": len(fig.compared), "response misses": response,
                           "execution misses": execution}
    for stat, _, col in _TARGETED:
        errs = fig.compared.get(f"err_{stat}", pd.Series(dtype=float)).astype(float)
        errs = errs[np.isfinite(errs)]
        if errs.empty:
            out[f"worst {col} error"] = "n/a"
        else:
            worst = fig.compared.loc[errs.abs().idxmax()]
            out[f"worst {col} error"] = f"{errs.abs().max():.0%} ({worst.policy} at {float(worst.rate):g}/s)"
    out["misses, speed-normalised"] = _normalised_misses([fig])
    out.update(_luck(fig.compared))
    out["unresized jobs / profile"] = drift_text(fig.unresized)
    g = fig.governor
    out["governor at its ceiling (speed held)"] = "n/a" if g is None else f"{g.at_ceiling:.0%} ({g.held_mean:.2f})"
    out["causes, computed"] = miss_causes.counts_text(fig.misses)
    return out


def _misses(figs: Sequence[Figure], suffix: str = "") -> tuple[int, int, bool]:
    """(response misses, execution misses, any cell known) over the figures' cells, each against its
    own figure's targets; suffix "_norm": the errors with times brought to the profile's speed by
    the meter (report_stats.normalised)."""
    counts, known = [0, 0], False
    for f in figs:
        for i, (stat, key, _) in enumerate(_TARGETED):
            errs = f.compared.get(f"err_{stat}{suffix}", pd.Series(dtype=float)).astype(float)
            errs = errs[np.isfinite(errs)]
            known = known or not errs.empty
            counts[i] += int((errs.abs() > f.targets[key]).sum())
    return counts[0], counts[1], known


def _normalised_misses(figs: Sequence[Figure]) -> str:
    """'response / execution' misses speed-normalised; 'n/a' when no cell was metered."""
    response, execution, metered = _misses(figs, "_norm")
    return f"{response} / {execution}" if metered else "n/a"


def _total_row(figs: Sequence[Figure]) -> dict[str, Any]:
    """Every run figure's cells together, each judged against its own figure's targets."""
    response, execution, _ = _misses(figs)
    row: dict[str, Any] = {"figure": "all", "cells": sum(len(f.compared) for f in figs),
                           "response misses": response, "execution misses": execution,
                           "worst response error": "", "worst execution error": ""}
    row["misses, speed-normalised"] = _normalised_misses(figs)
    row.update(_luck(pd.concat([f.compared for f in figs], ignore_index=True)))
    row["causes, computed"] = miss_causes.counts_text(all_misses(dict(enumerate(figs))))
    return row


def all_misses(figs: Mapping[Any, Figure]) -> pd.DataFrame:
    """Every figure's misses in one frame, with its name in a figure column."""
    frames = [f.misses.assign(figure=name) for name, f in figs.items() if not f.misses.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=miss_causes.COLUMNS)


def _luck(cmp: pd.DataFrame) -> dict[str, str]:
    """What an exact model would score in one run, from the replays' own spread (report_stats'
    `chance_<stat>`): the misses it would expect and the chance it meets both targets everywhere.
    A figure whose misses are near that expectation cannot tell a wrong model from a noisy run."""
    if "chance_response" not in cmp or "chance_median_execution" not in cmp:
        return {"misses an exact model expects": "n/a", "chance an exact model meets all": "n/a"}
    r = cmp["chance_response"].astype(float).dropna()
    e = cmp["chance_median_execution"].astype(float).dropna()
    both = (cmp["chance_response"].astype(float) * cmp["chance_median_execution"].astype(float)).dropna()
    return {"misses an exact model expects": f"{float((1 - r).sum()):.1f} / {float((1 - e).sum()):.1f}",
            "chance an exact model meets all": f"{float(np.prod(both)):.0%}" if not both.empty else "n/a"}


def figure_from_store(path: Path) -> Figure:
    """A figure's tables from its results store (read-only), computed as its report computes them."""
    from experiments.report import analyse

    a = analyse(path)
    return Figure(a.config, a.measured, a.predicted, a.compared, a.unresized, a.governor, a.misses,
                  a.measured_reps, a.predicted_reps)


def render(config: SummaryConfig, claims: pd.DataFrame, cells: pd.DataFrame,
           misses: pd.DataFrame | None = None) -> str:
    """summary.md: the claims table, then the cells that miss their prediction targets and why."""
    from experiments.report import md_table

    out = [f"# {config.title}"]
    if config.paper:
        out.append(f"Reproduces: {config.paper}.")
    out += ["## Claims", md_table(claims.drop(columns=["quote"])), "## The paper's sentences",
            "\n".join(f"- {r.figure}, \"{r.claim}\": {r.quote}" for r in claims.itertuples(index=False) if r.quote),
            "## Prediction targets per figure", md_table(cells),
            ("Ours: the measured figure in the claim's terms (gaps relative to the second policy unless the "
             "claim says absolute). Verdict: the one rule of experiments/reporting/claims.py (holds, fails, unresolved; "
             "by construction is labelled and not counted), each margin paired by replication within a figure, "
             "and a change across two figures (separate runs) with their intervals in quadrature, each figure's "
             "gain on the claimed side too, so a reversed sign never holds. Outside the 95% interval: whether "
             "every margin the verdict rests on is farther from its threshold than its half-width. Prediction errors: "
             "(predicted - measured) / measured of the cells the claim uses. Misses, speed-normalised "
             "(response / execution): the same count with each job's time brought to the profile's speed by "
             "the meter on its workstations over its own span. Misses an exact model expects "
             "(response / execution): the sum over cells of the chance that the replays of the model's own "
             "noise fall outside the target, i.e. how many misses one run shows even if the model were "
             "right; chance an exact model meets all: the product over cells of its chance of meeting "
             "both (`experiments/studies/padhye_dowdy/analyses/replications_needed.py`: how many "
             "replications would raise it to 90%). Unresized jobs / profile: the median of measured over profiled execution of the jobs "
             "that kept one partition from start to end, then of the first and second half of them in the "
             "run's order (`experiments/unresized.py`): above 1, the jobs ran slower than the profile "
             "taken at the run's start. Governor at its ceiling (speed held): the share of the cells' quota "
             "settings at the workstation's reserved cap, where a slower core is not made up, and the mean "
             "quota x factor / speed asked (`experiments/governor_hold.py`). Causes, computed: how many of the "
             "figure's misses each cause explains, from the table below. Why cells miss: the cause each figure's "
             "README found for its misses (its folder has the evidence).")]
    if misses is not None and not misses.empty:
        shown = miss_causes.table(misses)
        shown.insert(0, "figure", list(misses.figure))
        out += ["## Each miss and its cause", md_table(shown), miss_causes.LEGEND]
    return "\n\n".join(out) + "\n"


def write_summary(config_path: str | Path, out_dir: str | Path) -> tuple[Path, Path]:
    """Write summary.md and summary.csv from the stores the summary config names."""
    from experiments.config import load as load_experiment

    config = load_config(config_path)
    figures = {name: figure_from_store(ref.results) if ref.results.is_file()
               else Figure(load_experiment(ref.config).dump(), pd.DataFrame(), pd.DataFrame(), pd.DataFrame())
               for name, ref in config.figures.items()}
    claims, cells = summary_tables(figures, [c.model_dump() for c in config.claims],
                                   {name: ref.misses for name, ref in config.figures.items()})
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    md, csv = out / "summary.md", out / "summary.csv"
    run = {name: f for name, f in figures.items() if f.run}
    md.write_text(render(config, claims, cells, all_misses(run)))
    claims.to_csv(csv, index=False)
    return md, csv


__all__ = ["CrossClaim", "Figure", "FigureRef", "SummaryConfig", "SummaryError", "load_config", "summary_tables",
           "write_summary"]
