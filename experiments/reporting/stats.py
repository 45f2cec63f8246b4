"""The statistics every paper's report uses: intervals, bands and replications needed.

The method of independent replications: each replication contributes one number
(e.g. its mean response time); the interval is Student's t on those numbers.
Responses within one replication are strongly autocorrelated at high load, so
they are never treated as independent samples. A band is the spread of an
ensemble of predictions (its 5% to 95% points); `in_band` asks whether a measured
figure falls inside it.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as _st

#: The band a cell's ensemble prediction gives: from its 5% to its 95% point.
BAND = (0.05, 0.95)


@dataclass(frozen=True)
class Interval:
    """A two-sided confidence interval for a mean."""

    mean: float
    half_width: float
    n: int
    confidence: float

    @property
    def rel_half_width(self) -> float:
        """Half-width as a fraction of the mean (inf if undefined)."""
        if self.mean == 0 or not math.isfinite(self.half_width):
            return math.inf
        return abs(self.half_width / self.mean)

    def meets(self, target_rel: float) -> bool:
        """True if the half-width is at most ``target_rel`` of the mean (the paper's 5% rule)."""
        return self.rel_half_width <= target_rel


def t_interval(samples: Sequence[float], confidence: float = 0.95) -> Interval:
    """Student-t interval: mean +- t_{n-1, (1+c)/2} * s / sqrt(n).

    With one sample the half-width is infinite: a single replication says
    nothing about its own precision.
    """
    n = len(samples)
    if n == 0:
        raise ValueError("t_interval needs at least one sample")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1) (got {confidence})")
    mean = math.fsum(samples) / n
    if n == 1:
        return Interval(mean, math.inf, 1, confidence)
    var = math.fsum((x - mean) ** 2 for x in samples) / (n - 1)
    t = float(_st.t.ppf(0.5 + confidence / 2, n - 1))
    return Interval(mean, t * math.sqrt(var / n), n, confidence)


def replications_needed(samples: Sequence[float], target_rel: float, confidence: float = 0.95,
                        cap: int = 1000) -> int:
    """Smallest n whose t-interval would meet ``target_rel``, assuming the
    sample mean and standard deviation stay as observed.

    Used to ask for the right number of further replications at once, instead
    of one at a time, so the two worker processes stay busy.
    """
    n0 = len(samples)
    if n0 < 2:
        raise ValueError("need at least two replications to estimate the variance")
    iv = t_interval(samples, confidence)
    if iv.meets(target_rel):
        return n0
    s = iv.half_width * math.sqrt(n0) / float(_st.t.ppf(0.5 + confidence / 2, n0 - 1))
    goal = target_rel * abs(iv.mean)
    for n in range(n0 + 1, cap + 1):
        if float(_st.t.ppf(0.5 + confidence / 2, n - 1)) * s / math.sqrt(n) <= goal:
            return n
    return cap


def in_band(cmp: pd.DataFrame, stat: str) -> list[bool | None]:
    """Per cell: is the measured figure, normalised where metered (the band assumes the
    profile's speed), inside the ensemble's band? None without a band or a figure."""
    if f"band_{stat}_lo" not in cmp:
        return [None] * len(cmp)
    lo, hi = cmp[f"band_{stat}_lo"].astype(float), cmp[f"band_{stat}_hi"].astype(float)
    m = cmp[f"measured_{stat}"].astype(float)
    if f"measured_{stat}_norm" in cmp:
        m = cmp[f"measured_{stat}_norm"].astype(float).fillna(m)
    return [None if not (np.isfinite(a) and np.isfinite(x)) else bool(a <= x <= b) for a, b, x in zip(lo, hi, m)]
