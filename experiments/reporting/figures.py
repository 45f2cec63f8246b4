"""The one figure helper: a report's matplotlib figure saved as a PNG and closed.

Reports are written on build machines without a display, so the backend is Agg;
every figure is closed once saved, so a report that draws dozens never holds
them all. DPI is the project's one resolution (a 6 x 4.2 in figure is 600 x 420 px).
"""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; no display on a build machine
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

DPI = 100


def save_png(fig: Figure, path: Path, *, dpi: int = DPI) -> Path:
    """Write `fig` to `path` (its folder made if missing) as a PNG, close it, return the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fig.savefig(path, dpi=dpi, format="png")
    finally:
        plt.close(fig)
    return path
