"""Helpers shared by the benchmarks, checks and hardening harnesses: medians, a rich table, CPU counters.

Kept here, the lowest of the three top packages, so checks/ and hardening/ import it
(`benchmarks._common`) rather than each keeping a copy."""
from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:  # testbed is imported by the scripts, after NOWLAB_HOME below is set
    from testbed.backends import Backend, MachineId

os.environ.setdefault("NOWLAB_HOME", str(Path.home() / ".nowlab-bench"))

console = Console()


def median(values: list[float]) -> float:
    return statistics.median(values)


def table(title: str, columns: list[str], rows: list[list[str]]) -> None:
    t = Table(title=title)
    for col in columns:
        t.add_column(col, justify="right")
    for row in rows:
        t.add_row(*row)
    console.print(t)


def cpu_self_s() -> float:
    """CPU seconds this process (every thread) has used so far."""
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def machines_cpu_s(backend: Backend, machines: list[MachineId]) -> float:
    """CPU seconds the machines have used so far, as their backend counts them
    (`Backend.cpu_usage_ns`: for Docker, a container's cgroup on this machine)."""
    return sum(backend.cpu_usage_ns(m) for m in machines) / 1e9


def stored_runs_args(doc: str, writes: str):
    """The command line of a benchmark over stored runs: RESULTS.sqlite [...] [--out DIR],
    each store checked to exist (one line naming it when not)."""
    import argparse

    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("results", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, help=f"write {writes} here")
    args = ap.parse_args()
    for src in args.results:
        if not src.exists():
            sys.exit(f"error: results: {src} does not exist")
    return args


def write_report(out: Path, stem: str, frame, plot, title: str, script: str, results: list[Path],
                 body: str) -> Path:
    """A benchmark's report in out/: stem.csv (the frame), stem.png (`plot(path)`) and stem.md,
    headed by its title and the command that made it; returns the Markdown's path."""
    out.mkdir(parents=True, exist_ok=True)
    frame.to_csv(out / f"{stem}.csv", index=False)
    plot(out / f"{stem}.png")
    command = f".venv/bin/python benchmarks/{script} {' '.join(str(r) for r in results)} --out {out}"
    path = out / f"{stem}.md"
    path.write_text(f"# {title}\n\nMade by `{command}`.\n\n{body}")
    return path
