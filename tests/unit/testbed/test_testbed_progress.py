"""The progress bar keeps a few finished rows, so a long run's screen and memory stay bounded."""
from __future__ import annotations

import io

from rich.console import Console

from testbed.progress import DONE_ROWS_KEPT, progress_bar


def test_old_finished_rows_are_dropped_and_unfinished_ones_kept() -> None:
    out = io.StringIO()
    with progress_bar(Console(file=out, width=100, force_terminal=False)) as update:
        for n in range(30):
            update("cells", n, 30)
            update(f"cell {n:02d}", 0, 3)
            update(f"cell {n:02d}", 3, 3)
    last = out.getvalue()
    shown = [f"cell {n:02d}" for n in range(30) if f"cell {n:02d}" in last]
    assert shown == [f"cell {n:02d}" for n in range(30 - DONE_ROWS_KEPT, 30)]
    assert "cells" in last and "29/30" in last  # the unfinished stage stays
