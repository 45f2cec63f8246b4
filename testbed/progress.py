"""The progress bar every long step shows: one row per stage, `update(stage, done, total)`.

Kept below the command line so that library code (a run, a calibration) can draw it too;
it writes to stderr, leaving stdout to results.
"""
from __future__ import annotations

import contextlib
from typing import Callable, Iterator

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

Update = Callable[[str, int, int], None]


@contextlib.contextmanager
def progress_bar(console: Console | None = None) -> Iterator[Update]:
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console or Console(stderr=True), transient=False) as bar:
        tasks: dict[str, int] = {}

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)

        yield update
