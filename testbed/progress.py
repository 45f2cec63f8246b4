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

#: Finished rows kept on screen; older ones are dropped, so a run of a thousand cells draws (and
#: holds in memory) a few rows, not a thousand (issue 19's soak found one kept per cell).
DONE_ROWS_KEPT = 6


@contextlib.contextmanager
def progress_bar(console: Console | None = None) -> Iterator[Update]:
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console or Console(stderr=True), transient=False) as bar:
        tasks: dict[str, int] = {}  # stage -> task id, in the order the stages began
        finished: list[str] = []

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)
            if done >= total and stage not in finished:
                finished.append(stage)
                while len(finished) > DONE_ROWS_KEPT:
                    bar.remove_task(tasks.pop(finished.pop(0)))
            elif done < total and stage in finished:  # a stage begun again
                finished.remove(stage)

        yield update
