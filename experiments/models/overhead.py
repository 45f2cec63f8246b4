"""The measured preemption-overhead summary: what one resize onto a different set cost in a run.

Predictions no longer use it (they take the profiled `models.resize.ResizeFit`,
never a figure from the run they predict); the replay's log and the
report show it beside the profiled cost as a diagnostic.

The engine charges a constant per job (`Job.reconfig_cost`), so the model's
answer is one number: the median of the measured resize times, which a few
slow relaunches on a loaded host do not drag about as a mean would. When the
samples allow it, a line a + b·bytes is fitted too (nonnegative least
squares), for the report to show how much of the cost is data movement.
"""
from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import nnls

MIN_LINE_SAMPLES = 5  # fewer points than this do not pin down a line worth reporting


@dataclass(frozen=True)
class OverheadModel:
    """Seconds per resize: `cost()` is the median; a + b·bytes is for information.

    samples is the number of measured resizes behind the median (0: the
    caller's default stands in). intercept_s and per_byte_s are None unless
    at least MIN_LINE_SAMPLES resizes with different bytes_moved were given.
    """

    median_s: float
    samples: int = 0
    intercept_s: float | None = None
    per_byte_s: float | None = None

    def __post_init__(self) -> None:
        if not (math.isfinite(self.median_s) and self.median_s >= 0):
            raise ValueError(f"median_s must be a finite time >= 0, got {self.median_s}")

    @classmethod
    def fit(cls, samples: pd.DataFrame | Iterable[Mapping[str, Any]], *, default_s: float) -> OverheadModel:
        """From measured resizes: rows with `reconfig_s` (seconds) and, optionally, `bytes_moved`.

        Pass only resizes onto a different set (the engine charges nothing for
        a same-set restart). `default_s` is the cost used when there are no
        samples at all; the caller says where its figure comes from.
        """
        if not (math.isfinite(default_s) and default_s >= 0):
            raise ValueError(f"default_s must be a finite time >= 0, got {default_s}")
        rows = samples.to_dict("records") if isinstance(samples, pd.DataFrame) else list(samples)
        if not rows:
            return cls(float(default_s), 0)
        times, sized = [], []
        for i, row in enumerate(rows):
            if "reconfig_s" not in row:
                raise ValueError(f"samples[{i}] has no reconfig_s")
            t = float(row["reconfig_s"])
            if not (math.isfinite(t) and t >= 0):
                raise ValueError(f"samples[{i}]: reconfig_s must be a finite time >= 0, got {t}")
            times.append(t)
            b = row.get("bytes_moved")
            if b is not None and math.isfinite(float(b)):
                if float(b) < 0:
                    raise ValueError(f"samples[{i}]: bytes_moved must be >= 0, got {b}")
                sized.append((float(b), t))
        a = per_byte = None
        if len(sized) >= MIN_LINE_SAMPLES and len({b for b, _ in sized}) > 1:
            x = np.array([b for b, _ in sized])
            scale = x.max()  # bytes in units of the largest, so both columns are O(1)
            coef, _ = nnls(np.column_stack([np.ones_like(x), x / scale]), np.array([t for _, t in sized]))
            a, per_byte = float(coef[0]), float(coef[1]) / scale
        return cls(statistics.median(times), len(times), a, per_byte)

    def cost(self) -> float:
        """Seconds the engine charges per resize onto a different set."""
        return self.median_s

    def line(self, bytes_moved: float) -> float | None:
        """a + b·bytes_moved, or None when no line was fitted."""
        if self.intercept_s is None or self.per_byte_s is None:
            return None
        return self.intercept_s + self.per_byte_s * bytes_moved
