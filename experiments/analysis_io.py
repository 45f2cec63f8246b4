"""The input and output of a one-question analysis: the stored runs it reads from its command
line, a table on the console, and its report (md, csv, png) headed by the command that made it,
so a committed report says how to make it again.

The studies' `analyses/` and the benchmarks share these; nothing here names a paper.
"""
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:  # only annotated here: importing the benchmarks' helpers stays cheap
    import pandas as pd

console = Console()


def table(title: str, columns: list[str], rows: list[list[str]]) -> None:
    """Print rows under `title` on the console, every column right-aligned."""
    t = Table(title=title)
    for col in columns:
        t.add_column(col, justify="right")
    for row in rows:
        t.add_row(*row)
    console.print(t)


def use_bench_home() -> None:
    """Keep the clusters an analysis or benchmark brings up apart from the user's
    (~/.nowlab-bench unless NOWLAB_HOME says otherwise); call before the first cluster."""
    os.environ.setdefault("NOWLAB_HOME", str(Path.home() / ".nowlab-bench"))


def stored_runs_args(doc: str, writes: str, argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line of an analysis over stored runs: RESULTS.sqlite [...] [--out DIR],
    each store checked to exist (one line naming it when not)."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("results", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, help=f"write {writes} here")
    args = ap.parse_args(argv)
    for src in args.results:
        if not src.exists():
            sys.exit(f"error: results: {src} does not exist")
    return args


def write_report(out: Path, stem: str, frame: pd.DataFrame, plot: Callable[[Path], object], title: str,
                 program: str, results: list[Path], body: str) -> Path:
    """A report in out/: stem.csv (the frame), stem.png (`plot(path)`) and stem.md, headed by its
    title and the command that made it (`.venv/bin/python PROGRAM RESULTS... --out OUT`, PROGRAM
    being `-m package.module` or a script's path); returns the Markdown's path."""
    out.mkdir(parents=True, exist_ok=True)
    frame.to_csv(out / f"{stem}.csv", index=False)
    plot(out / f"{stem}.png")
    command = f".venv/bin/python {program} {' '.join(str(r) for r in results)} --out {out}"
    path = out / f"{stem}.md"
    path.write_text(f"# {title}\n\nMade by `{command}`.\n\n{body}")
    return path
