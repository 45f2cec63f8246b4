"""Figures like the paper's Figures 1 and 3-6 (and its appendix), from the cells table.

Each family figure has one column per workload: (a) the response time
normalised to DYN-EQUI, each bar split into its waiting part (dark) and
running part (light); saturated cells reach the top border, hatched, as in
the paper; (b) the mean partition size against load.
"""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; no display on a build machine
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from experiments.studies.anastasiadis_sevcik.analytic import wait_over_run_aep, wait_over_run_ap1

#: figure file stem -> (title, policies in the bar order, extra policies for the partition panel)
FAMILIES: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "fig3_sdf": ("Figure 3: SDF with fixed allocation limits",
                 ("SDF-MAX1", "SDF-MAX2", "SDF-MAX6", "SDF"), ()),
    "fig4_adaptive": ("Figure 4: adaptive policies", ("ASP", "AP1", "AEP"), ()),
    "fig5_adaptive_sdf": ("Figure 5: adaptive policies with SDF", ("ASP(1)", "AP1(1)", "AEP(1)"), ()),
    "fig6_adaptive_sdf_dif": ("Figure 6: adaptive policies with SDF and DIF",
                              ("ASP(2)", "AP1(2)", "AEP(2)"), ("DYN-EQUI",)),
}

#: Where saturated (infinite) bars stop, as a multiple of DYN-EQUI's response time.
TOP_BORDER = 4.0


FAMILY_DPI = 100


def family_figure(cells: pd.DataFrame, stem: str, out_dir: Path) -> Path | None:
    """Draw one family into `out_dir`; None if none of its policies were run."""
    fig = family_plot(cells, stem)
    if fig is None:
        return None
    return _save(fig, out_dir / f"{stem}.png")


def _save(fig: plt.Figure, path: Path) -> Path:
    fig.savefig(path, dpi=FAMILY_DPI)
    plt.close(fig)
    return path


def family_plot(cells: pd.DataFrame, stem: str) -> plt.Figure | None:
    """One family's figure, not saved (so a test can read what it shows); None if none of its
    policies were run."""
    title, policies, extra = FAMILIES[stem]
    policies = tuple(p for p in policies if p in set(cells.policy))
    if not policies:
        return None
    workloads = sorted(set(cells.workload))
    loads = sorted(set(cells.load))
    fig, axes = plt.subplots(2, len(workloads), figsize=(4.2 * len(workloads), 7.5), squeeze=False)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    width = 0.8 / len(policies)
    for col, wk in enumerate(workloads):
        ax = axes[0][col]
        for i, pol in enumerate(policies):
            rows = _rows(cells, wk, pol, loads)
            x = np.arange(len(loads)) + (i - (len(policies) - 1) / 2) * width
            sat = rows.saturated.to_numpy(dtype=bool)
            wait = np.where(sat, 0.0, np.minimum(rows.norm_wait.to_numpy(dtype=float), TOP_BORDER))
            run = np.where(sat, TOP_BORDER, np.minimum(rows.norm_run.to_numpy(dtype=float), TOP_BORDER - wait))
            c = colours[i % len(colours)]
            ax.bar(x, wait, width, color=c, edgecolor="black", linewidth=0.4,
                   label=f"{pol} waiting" if col == 0 else None)
            ax.bar(x, run, width, bottom=wait, color=c, alpha=0.4, edgecolor="black", linewidth=0.4,
                   label=f"{pol} running" if col == 0 else None)
            for xs in x[sat]:
                ax.bar(xs, TOP_BORDER, width, color="none", edgecolor="red", hatch="xx", linewidth=0.4)
        ax.axhline(1.0, color="grey", linestyle=":", linewidth=1)
        ax.set_ylim(0, TOP_BORDER)
        ax.set_xticks(range(len(loads)), [f"{round(l * 100)}%" for l in loads])
        ax.set_title(f"{wk} (a) response / DYN-EQUI")
        ax.set_xlabel("offered load")
        ax = axes[1][col]
        for i, pol in enumerate(policies + tuple(p for p in extra if p in set(cells.policy))):
            rows = _rows(cells, wk, pol, loads)
            ax.plot(loads, rows.partition, marker="o", label=pol, color=colours[i % len(colours)])
        ax.set_xticks(loads, [f"{round(l * 100)}%" for l in loads])
        ax.set_title(f"{wk} (b) mean partition size")
        ax.set_xlabel("offered load")
        ax.set_ylabel("processors")
        ax.set_ylim(bottom=0)
    axes[0][0].set_ylabel("normalised response time")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(policies), fontsize=8, frameon=False)
    axes[1][0].legend(fontsize=8)
    fig.suptitle(f"{title}: dark = waiting, light = running; hatched red = saturated")
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


def figure1(cells: pd.DataFrame, out_dir: Path) -> Path:
    """Figure 1 into `out_dir` (figure1_plot)."""
    return _save(figure1_plot(cells), out_dir / "fig1_wait_over_run.png")


def figure1_plot(cells: pd.DataFrame) -> plt.Figure:
    """Figure 1: analytic W/T for AEP and AP1 beside the simulated ratio.

    Simulated points are placed at the *measured* actual load rho_a, the
    quantity the analysis uses, not at the offered load.
    """
    rho = np.linspace(0.05, 0.99, 200)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5), sharey=True)
    for ax in (left, right):
        ax.plot(rho, wait_over_run_aep(rho), label="AEP: (1-rho)/rho", color="C0")
        ax.plot(rho, wait_over_run_ap1(rho), label="AP1: 1/rho", color="C1")
        ax.set_xlabel("actual load rho_a")
        ax.set_ylim(0, 5)
        ax.set_xlim(0, 1)
    left.set_title("analytic (Section 4)")
    left.set_ylabel("W(n) / T(n)")
    markers = {"WK1": "o", "WK2": "s", "WK3": "^", "WK4": "D"}
    for pol, colour in (("AEP", "C0"), ("AP1", "C1")):
        rows = cells[(cells.policy == pol) & ~cells.saturated]
        for wk, g in rows.groupby("workload"):
            right.scatter(g.actual_load, g.wait_ks / g.run_ks, color=colour, marker=markers.get(wk, "o"),
                          label=f"{pol} {wk}", edgecolor="black", linewidth=0.4)
    right.set_title("simulated (points) vs analytic (lines)")
    right.legend(fontsize=7, ncol=2)
    left.legend(fontsize=8)
    fig.tight_layout()
    return fig


def all_figures(cells: pd.DataFrame, out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [figure1(cells, out_dir)]
    paths += [p for stem in FAMILIES if (p := family_figure(cells, stem, out_dir)) is not None]
    return paths


def _rows(cells: pd.DataFrame, wk: str, pol: str, loads: list[float]) -> pd.DataFrame:
    """The cells of one policy on one workload, one row per load (NaN where not run)."""
    rows = cells[(cells.workload == wk) & (cells.policy == pol)].set_index("load")
    rows = rows.reindex(loads)
    rows["saturated"] = rows.saturated.fillna(False).astype(bool)
    return rows
