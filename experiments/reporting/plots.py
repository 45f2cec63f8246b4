"""Figures in Padhye & Dowdy's layout: each metric against the arrival rate,
one colour per policy; measured solid with markers (95% interval bars when
there are several replications), predicted dashed. Their Figure 4 also plots
execution time against the mean partition size; the panel figure's sixth
plot does the same.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; no display on a build machine
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from experiments.reporting.figures import DPI, save_png
from experiments.reporting.stats import in_band

#: statistic -> (file stem, axis label)
METRIC_FIGURES: dict[str, tuple[str, str]] = {
    "response": ("response", "mean response time (s)"),
    "wait": ("wait", "mean waiting time (s)"),
    "execution": ("execution", "mean execution time (s)"),
    "mean_procs": ("partition", "mean partition size (processors)"),
    "preemptions": ("preemptions", "preemptions per job"),
}


def _colours(cmp: pd.DataFrame) -> dict[str, str]:
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    return {p: cycle[i % len(cycle)] for i, p in enumerate(dict.fromkeys(cmp.policy))}


def _draw(ax: Axes, cmp: pd.DataFrame, stat: str, legend: bool) -> None:
    """One metric against the rate on `ax`."""
    colours = _colours(cmp)
    for policy, g in cmp.groupby("policy", sort=False):
        g = g.sort_values("rate")
        ci = g[f"measured_{stat}_ci"].to_numpy(dtype=float)
        yerr = ci if np.isfinite(ci).any() else None
        ax.errorbar(g.rate, g[f"measured_{stat}"], yerr=None if yerr is None else np.nan_to_num(yerr),
                    color=colours[policy], marker="o", linestyle="-", capsize=3, label=f"{policy} measured")
        ax.plot(g.rate, g[f"predicted_{stat}"], color=colours[policy], marker="x", linestyle="--",
                label=f"{policy} predicted")
        if f"band_{stat}_lo" in g:  # the ensemble's 90% band, shaded
            ax.fill_between(g.rate, g[f"band_{stat}_lo"].astype(float), g[f"band_{stat}_hi"].astype(float),
                            color=colours[policy], alpha=0.15, linewidth=0)
    if len(cmp):
        ax.set_xticks(sorted(set(cmp.rate)))
    ax.set_xlabel("arrival rate (jobs/s)")
    ax.set_ylabel(METRIC_FIGURES[stat][1])
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    if legend:
        ax.legend(*_legend(ax), fontsize=7)


def _legend(ax: Axes) -> tuple[list, list[str]]:
    """Handles in policy order, measured before predicted (errorbars otherwise come last)."""
    handles, labels = ax.get_legend_handles_labels()
    policies = list(dict.fromkeys(lb.rsplit(" ", 1)[0] for lb in labels))
    order = sorted(range(len(labels)), key=lambda i: (policies.index(labels[i].rsplit(" ", 1)[0]),
                                                      labels[i].endswith("predicted")))
    return [handles[i] for i in order], [labels[i] for i in order]


def _draw_execution_vs_partition(ax: Axes, cmp: pd.DataFrame) -> None:
    colours = _colours(cmp)
    for policy, g in cmp.groupby("policy", sort=False):
        g = g.sort_values("measured_mean_procs")
        ax.plot(g.measured_mean_procs, g.measured_execution, color=colours[policy], marker="o", linestyle="-")
        g = g.sort_values("predicted_mean_procs")
        ax.plot(g.predicted_mean_procs, g.predicted_execution, color=colours[policy], marker="x", linestyle="--")
    ax.set_xlabel("mean partition size (processors)")
    ax.set_ylabel("mean execution time (s)")
    ax.grid(alpha=0.3)


METRIC_SIZE_IN, PANEL_SIZE_IN = (6, 4.2), (15, 8.5)  # 600 x 420 and 1500 x 850 pixels at DPI


def metric_figure(cmp: pd.DataFrame, stat: str, title: str):
    """One metric against the rate, every policy measured and predicted (a Figure, not saved)."""
    fig, ax = plt.subplots(figsize=METRIC_SIZE_IN)
    _draw(ax, cmp, stat, legend=True)
    ax.set_title(f"{title}: {METRIC_FIGURES[stat][1].split(' (')[0]}", fontsize=9)
    fig.tight_layout()
    return fig


def panel_figure(cmp: pd.DataFrame, title: str):
    """The 2x3 panel: the five metrics and execution against the mean partition size."""
    fig, axes = plt.subplots(2, 3, figsize=PANEL_SIZE_IN)
    for ax, stat in zip(axes.flat, METRIC_FIGURES):
        _draw(ax, cmp, stat, legend=False)
    _draw_execution_vs_partition(axes.flat[5], cmp)
    handles, labels = _legend(axes.flat[0])
    fig.legend(handles, labels, loc="lower center", ncol=max(1, len(labels)), fontsize=8, frameon=False)
    fig.suptitle(f"{title} (solid: measured, dashed: predicted)")
    fig.tight_layout(rect=(0, 0.05, 1, 0.96))
    return fig


#: The statistics the band figure shows, and their axis labels.
BAND_FIGURE: dict[str, str] = {"response": "mean response (s)", "median_execution": "median execution (s)",
                               "wait": "mean wait (s)", "mean_procs": "mean partition (processors)"}


def band_figure(cmp: pd.DataFrame, title: str, causes: Mapping[tuple[str, float, str], str] | None = None):
    """The uncertainty as a picture: one column per policy, one row per banded statistic; the
    measured figure (meter-normalised where metered, as the band assumes the profile's speed)
    with its 95% interval over replications, the prediction's 90% band shaded around the
    ensemble's mean. A point outside its band is ringed in red and labelled with its cause
    (`causes`: (policy, rate, statistic) -> words), else "outside"."""
    stats = [s for s in BAND_FIGURE if f"band_{s}_lo" in cmp]
    policies = list(dict.fromkeys(cmp.policy))
    fig, axes = plt.subplots(max(1, len(stats)), max(1, len(policies)), squeeze=False,
                             figsize=(3.6 * max(1, len(policies)), 2.6 * max(1, len(stats))))
    colours = _colours(cmp)
    for r, stat in enumerate(stats):
        inside = in_band(cmp, stat)
        for c, policy in enumerate(policies):
            ax = axes[r][c]
            rows = cmp.index[cmp.policy == policy]
            g = cmp.loc[rows].sort_values("rate")
            measured = g[f"measured_{stat}"].astype(float)
            if f"measured_{stat}_norm" in g:
                measured = g[f"measured_{stat}_norm"].astype(float).fillna(measured)
            ci = g.get(f"measured_{stat}_ci", pd.Series(np.nan, index=g.index)).astype(float)
            ax.fill_between(g.rate, g[f"band_{stat}_lo"].astype(float), g[f"band_{stat}_hi"].astype(float),
                            color=colours[policy], alpha=0.2, linewidth=0, label="90% band")
            ax.plot(g.rate, g[f"predicted_{stat}"], color=colours[policy], linestyle="--", label="predicted")
            ax.errorbar(g.rate, measured, yerr=np.nan_to_num(ci.to_numpy()), color="black", marker="o",
                        linestyle="none", capsize=3, label="measured, 95% interval")
            for i, rate, y in zip(g.index, g.rate, measured):
                if inside[cmp.index.get_loc(i)] is False:
                    ax.plot([rate], [y], marker="o", markersize=11, markerfacecolor="none", color="red")
                    why = (causes or {}).get((policy, float(rate), stat), "outside")
                    ax.annotate(why, (rate, y), textcoords="offset points", xytext=(5, 6), fontsize=6, color="red")
            ax.set_xticks(sorted(set(g.rate)))
            ax.grid(alpha=0.3)
            if r == 0:
                ax.set_title(policy, fontsize=9)
            if c == 0:
                ax.set_ylabel(BAND_FIGURE[stat], fontsize=8)
            if r == len(stats) - 1:
                ax.set_xlabel("arrival rate (jobs/s)", fontsize=8)
    if stats and policies:
        axes[0][0].legend(fontsize=6)
    fig.suptitle(f"{title}: measured against the prediction's 90% band", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    return fig


def write_figures(cmp: pd.DataFrame, out_dir: Path, title: str,
                  causes: Mapping[tuple[str, float, str], str] | None = None) -> list[Path]:
    """One PNG per metric, then the 2x3 panel, then the bands (when the comparison has them);
    returns their paths in that order."""
    out_dir.mkdir(parents=True, exist_ok=True)
    figures = [(metric_figure(cmp, stat, title), f"{stem}.png") for stat, (stem, _) in METRIC_FIGURES.items()]
    figures.append((panel_figure(cmp, title), "panel.png"))
    if len(cmp) and "band_response_lo" in cmp:
        figures.append((band_figure(cmp, title, causes), "bands.png"))
    return [save_png(fig, out_dir / name) for fig, name in figures]
