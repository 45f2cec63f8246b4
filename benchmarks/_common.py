"""Helpers shared by the benchmarks: medians and a rich table."""
from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
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
