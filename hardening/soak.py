"""The soak run of issue 19: a long live experiment, and whether anything grows without bound.

    python -m hardening.soak                         # experiments/configs/faults/soak.toml, about 2 h
    python -m hardening.soak --config C --every 30 --csv soak.csv --png soak.png
    python -m hardening.soak --replot soak.csv --png soak.png   # the figure again, from the samples

Starts `nowlab run CONFIG` and samples, every --every seconds until it ends: the runner's
open file descriptors, threads and resident memory (from /proc), and the containers and
networks Docker holds for the run's cluster (by label). Prints the first and last samples and each series' slope over the
second half of the run (per hour): a resource that leaks keeps rising there, one that only
warms up does not.
"""
from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from rich.console import Console
from rich.table import Table

from experiments import config as experiment_config, runner

ROOT = Path(__file__).resolve().parents[1]
NOWLAB = str(Path(sys.executable).parent / "nowlab")
LABEL = "nowlab.cluster"  # testbed.backends.docker.engine.LABEL, the label every cluster object carries
SERIES = ("fds", "threads", "rss_mib", "rss_anon_mib", "cpu_s", "containers", "networks")
# rss_anon_mib: the runner's own heap, without the file pages (shared libraries) the kernel may
# drop and fault back; cpu_s: its CPU seconds so far (the slope is its CPU per hour). Older CSVs
# lack both, and --replot draws what a CSV has.


def cluster_name(config: Path) -> str:
    """The name of the cluster the run of CONFIG makes, so the counts are its own (other runs may share the host)."""
    return runner.cluster_name(experiment_config.load(config))


def sample(pid: int, cluster: str) -> dict[str, float]:
    proc = Path(f"/proc/{pid}")
    status = dict(line.split(":", 1) for line in (proc / "status").read_text().splitlines() if ":" in line)
    mine = ["--filter", f"label={LABEL}={cluster}", "-q"]
    count = lambda *argv: len(subprocess.run(["docker", *argv, *mine], capture_output=True, text=True,  # noqa: E731
                                             timeout=60).stdout.split())
    ticks = (proc / "stat").read_text().rsplit(")", 1)[1].split()[11:13]  # utime, stime
    return {"fds": len(list((proc / "fd").iterdir())), "threads": int(status["Threads"].strip()),
            "rss_mib": int(status["VmRSS"].split()[0]) / 1024, "rss_anon_mib": int(status["RssAnon"].split()[0]) / 1024,
            "cpu_s": sum(int(x) for x in ticks) / os.sysconf("SC_CLK_TCK"),
            "containers": count("ps", "-a"), "networks": count("network", "ls")}


def cells_done(store: Path) -> int:
    """Cells the run has finished so far (0 before its store exists): marks where each cell ends."""
    if not store.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=1.0) as db:
            return int(db.execute("SELECT count(*) FROM cells WHERE status = 'done'").fetchone()[0])
    except sqlite3.Error:  # not created yet, or busy: the next sample reads it
        return -1


def per_cell_peaks(frame: pd.DataFrame) -> list[tuple[int, float]]:
    """(cell, the runner's peak resident MiB while it ran), in order: a second cell that starts
    above the first's peak keeps something of it; growth that ends with its cell does not."""
    known = frame[frame.cells_done >= 0]
    return [(int(k) + 1, float(g.rss_mib.max())) for k, g in known.groupby("cells_done")]


def slope_per_hour(t_s: np.ndarray, y: np.ndarray) -> float:
    """Least-squares slope over the second half of the samples, per hour (0 with too few)."""
    half = t_s >= t_s[-1] / 2
    if half.sum() < 3 or np.ptp(t_s[half]) == 0:
        return 0.0
    return float(np.polyfit(t_s[half], y[half], 1)[0] * 3600)


def plot(frame: pd.DataFrame, path: Path, title: str) -> Path:
    """One panel per series against the run's time, the second half's fitted slope drawn over it."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = [k for k in SERIES if k in frame]
    fig, axes = plt.subplots(len(series), 1, figsize=(8, 1.6 * len(series)), sharex=True)
    t = frame.t_s.to_numpy()
    ends = []
    if "cells_done" in frame:  # a dotted line where each cell ended
        done = frame.cells_done.to_numpy()
        ends = [t[i] for i in range(1, len(done)) if done[i] > max(done[:i].max(), 0)]
    for ax, k in zip(axes, series):
        y = frame[k].to_numpy(dtype=float)
        ax.plot(t / 60, y, linewidth=1)
        for end in ends:
            ax.axvline(end / 60, color="grey", linestyle=":", linewidth=1)
        ax.set_ylabel(k)
        half = t >= t[-1] / 2
        if half.sum() >= 3:
            a, b = np.polyfit(t[half], y[half], 1)
            ax.plot(t[half] / 60, a * t[half] + b, linestyle="--", linewidth=1,
                    label=f"2nd half: {a * 3600:+.1f} /h")
            ax.legend(loc="lower right", fontsize="small")
    axes[-1].set_xlabel("minutes")
    axes[0].set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", type=Path, default=ROOT / "experiments" / "configs" / "faults" / "soak.toml")
    parser.add_argument("--every", type=float, default=60.0, help="seconds between samples")
    parser.add_argument("--out", type=Path, default=None, help="results store (default: a temp folder)")
    parser.add_argument("--csv", type=Path, default=None, help="also write every sample here")
    parser.add_argument("--png", type=Path, default=None, help="also draw the series here")
    parser.add_argument("--replot", type=Path, default=None, help="draw --png from this CSV of samples; run nothing")
    args = parser.parse_args()
    if args.replot is not None:
        if args.png is None:
            parser.error("--replot needs --png")
        plot(pd.read_csv(args.replot), args.png, f"soak: {args.replot.name}")
        return 0
    console = Console()
    out = args.out or Path(tempfile.mkdtemp(prefix="nowlab-soak-")) / "soak.sqlite"
    log = out.with_suffix(".log")
    with open(log, "w") as fh:
        proc = subprocess.Popen([NOWLAB, "run", str(args.config), "--out", str(out)], stdout=fh,
                                stderr=subprocess.STDOUT)
    cluster = cluster_name(args.config)
    rows, t0 = [], time.monotonic()
    console.log(f"soak: runner pid {proc.pid}, results {out}, log {log}")
    while proc.poll() is None:
        try:
            rows.append({"t_s": time.monotonic() - t0, **sample(proc.pid, cluster), "cells_done": cells_done(out)})
        except (OSError, KeyError, subprocess.SubprocessError):
            pass  # the runner ended between the poll and the read
        if args.csv and rows:  # as it goes: a soak stopped early keeps what it sampled
            pd.DataFrame(rows[-1:]).to_csv(args.csv, mode="a" if len(rows) > 1 else "w", header=len(rows) == 1,
                                           index=False)
        if rows and len(rows) % 10 == 0:
            console.log(f"{rows[-1]['t_s'] / 60:.0f} min: " + ", ".join(f"{k} {rows[-1][k]:.0f}" for k in SERIES))
        time.sleep(args.every)
    frame = pd.DataFrame(rows)
    if args.csv and not frame.empty:
        frame.to_csv(args.csv, index=False)
    if frame.empty:
        console.print(f"the run ended before the first sample (exit {proc.returncode}); see {log}")
        return 1
    table = Table(title=f"soak: {args.config.name}, {frame.t_s.iloc[-1] / 60:.0f} min, runner exit {proc.returncode}")
    for col in ("series", "start", "end", "max", "slope, 2nd half (/h)"):
        table.add_column(col)
    t = frame.t_s.to_numpy()
    for k in SERIES:
        y = frame[k].to_numpy(dtype=float)  # every series: this run sampled them all
        table.add_row(k, f"{y[0]:.0f}", f"{y[-1]:.0f}", f"{y.max():.0f}", f"{slope_per_hour(t, y):+.1f}")
    console.print(table)
    if "cells_done" in frame and frame.cells_done.max() >= 1:
        console.print("the runner's peak resident memory in each cell: "
                      + ", ".join(f"cell {c}: {peak:.0f} MiB" for c, peak in per_cell_peaks(frame)))
    if args.png:
        plot(frame, args.png, f"soak: {args.config.name}, runner exit {proc.returncode}")
    return 0 if proc.returncode == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
