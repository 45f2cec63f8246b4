"""The figures of a time-sharing report: who ran when (Zhou & Brent Figs. 3/4), skew, S_e against β·S_d."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; no display on a build machine
import matplotlib.pyplot as plt  # noqa: E402

from experiments.reporting.figures import save_png  # noqa: E402
from experiments.studies.zhou_brent.measure import RunRows  # noqa: E402

IDLE = "#dddddd"


def _colours(jobs: list[str]) -> dict[str, str]:
    cmap = plt.get_cmap("tab10")
    return {j: matplotlib.colors.to_hex(cmap(i % 10)) for i, j in enumerate(jobs)}


def timeline_png(rows: RunRows, path: Path, rounds_shown: int = 6) -> Path:
    """Left: the first rounds as measured, one lane per workstation; right: one round of each table."""
    jobs = [j.job for j in rows.jobs]
    colour = _colours(jobs)
    workstations = sorted({t.workstation for t in rows.tables})
    round_s = rows.run.round_s
    fig, (ax, axt) = plt.subplots(1, 2, figsize=(12, 0.6 * len(workstations) + 2), sharey=True,
                                  gridspec_kw={"width_ratios": [3, 1]})
    horizon_s = rounds_shown * round_s
    for y, w in enumerate(workstations):
        for iv in rows.intervals:
            if iv.workstation != w or iv.start_s >= horizon_s:
                continue
            ax.broken_barh([(iv.start_s, min(iv.end_s, horizon_s) - iv.start_s)], (y - 0.4, 0.8),
                           facecolors=colour.get(iv.job, IDLE))
        for t in rows.tables:
            if t.workstation != w:
                continue
            if t.parallel_s > 0:
                axt.broken_barh([(t.offset_s, t.parallel_s)], (y - 0.4, 0.8), facecolors=colour[t.process])
                axt.text(t.offset_s + t.parallel_s / 2, y, t.process, ha="center", va="center", fontsize=8)
            if t.sequential_s > 0:
                axt.broken_barh([(t.offset_s + t.parallel_s, t.sequential_s)], (y - 0.4, 0.8), facecolors=IDLE)
    for k in range(rounds_shown + 1):
        ax.axvline(k * round_s, color="black", lw=0.5, ls=":")
    ax.set_yticks(range(len(workstations)), workstations)
    ax.set_xlim(0, horizon_s)
    ax.set_xlabel("s since round 0 (each workstation's clock)")
    ax.set_title(f"measured: {rows.run.resync}" + (f" every {rows.run.every_rounds}" if rows.run.resync == "loose" else ""))
    axt.set_xlim(0, round_s)
    axt.set_xlabel("s into the round")
    axt.set_title("scheduling tables")
    handles = [matplotlib.patches.Patch(color=colour[j], label=j) for j in jobs]
    handles.append(matplotlib.patches.Patch(color=IDLE, label="sequential / none"))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.25), ncol=len(handles), fontsize=8)
    fig.tight_layout()
    save_png(fig, path, dpi=120)
    return path


def skew_png(rows: RunRows, path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(8, 4))
    for w in sorted({s.workstation for s in rows.skews}):
        mine = [s for s in rows.skews if s.workstation == w and s.kind == "sample"]
        ax.plot([s.at_s for s in mine], [s.skew_s * 1e3 for s in mine], marker=".", lw=0.8, label=f"{w} skew")
        fixed = [s for s in rows.skews if s.workstation == w and s.kind == "correction"]
        if fixed:
            ax.scatter([s.at_s for s in fixed], [s.skew_s * 1e3 for s in fixed], marker="x", s=12,
                       label=f"{w} removed by resync")
    ax.axhline(0, color="black", lw=0.5)
    ax.set_xlabel("s since round 0")
    ax.set_ylabel("slot boundary skew (ms, > 0: late)")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    save_png(fig, path, dpi=120)
    return path


def speedup_png(rows: RunRows, path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(7, 4))
    xs = range(len(rows.jobs))
    ax.bar([x - 0.2 for x in xs], [j.s_e_predicted for j in rows.jobs], 0.4, label="predicted β·S_d")
    ax.bar([x + 0.2 for x in xs], [j.s_e_measured for j in rows.jobs], 0.4, label="measured T_d(1)/T_e")
    ax.set_xticks(list(xs), [f"{j.job}\nβ={j.beta:g} p={j.p}" for j in rows.jobs])
    ax.set_ylabel("effective speedup S_e")
    ax.legend()
    fig.tight_layout()
    save_png(fig, path, dpi=120)
    return path
