"""An effect (a difference, a ratio, a relative gap) of replication means, with its 95% interval by a stated test.

Each replication gives one figure per series (a policy's mean response at one
rate, say). An effect is a smooth function `f` of the series' means; its
interval is the delta method's (f's gradient at the means, found numerically)
with Student's t:

- paired (`Method.PAIRED`) when the series ran the same arrival streams, replication
  by replication (same seed and replication: `experiments.arrivals` draws one
  stream per (seed, replication) for every policy and rate). Each replication
  gives one linearised value z_r = sum_k f'_k · x_{k,r}; the half-width is
  t_{n-1} · sd(z)/sqrt(n) over the replications every series has. The noise the
  series share (how many long jobs the stream drew) cancels, which is the point;
- Welch (`Method.WELCH`) otherwise: var = sum_k f'_k² s_k²/n_k with the
  Welch-Satterthwaite degrees of freedom;
- one series (`Method.ONE_SAMPLE`): the t interval of its mean.

A series with fewer than two replications gives an infinite half-width: the
effect is then unresolved (`experiments.reporting.claims`), never decided by its
point estimate.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as st

from experiments.reporting.claims import Check, Method

CONFIDENCE = 0.95


@dataclass(frozen=True)
class Effect:
    """A figure, its 95% half-width (inf: none), the replications behind it and the test that gave the interval."""

    value: float
    half_width: float = math.inf
    n: int = 0
    test: Method = Method.NONE

    @property
    def known(self) -> bool:
        return math.isfinite(self.value)

    def check(self, where: str, sign: float = 1.0, threshold: float = 0.0) -> Check:
        """The check that sign · (value - threshold) > 0, carrying this effect's interval, n and test."""
        return Check(where, sign * (self.value - threshold), self.half_width, self.n, self.test)


def _t(df: float, confidence: float) -> float:
    return float(st.t.ppf(0.5 + confidence / 2, df))


def _gradient(f: Callable[[np.ndarray], float], m: np.ndarray) -> np.ndarray:
    """f's gradient at m by central differences (f is a difference or ratio of means: smooth where defined)."""
    g = np.empty_like(m)
    scale = float(np.max(np.abs(m))) or 1.0
    for k in range(len(m)):
        h = 1e-6 * (abs(m[k]) or scale)
        up, down = m.copy(), m.copy()
        up[k] += h
        down[k] -= h
        g[k] = (f(up) - f(down)) / (2 * h)
    return g


def effect(f: Callable[[np.ndarray], float], series: Sequence[pd.Series], *, paired: bool,
           confidence: float = CONFIDENCE) -> Effect:
    """f(means of `series`) with its interval: paired by replication (index) when `paired` and at least
    two replications are common to every series, else Welch's. Each series is indexed by replication."""
    clean = [s.dropna().astype(float) for s in series]
    if any(s.empty for s in clean):
        return Effect(math.nan)
    if paired and len(clean) > 1:
        common = clean[0].index
        for s in clean[1:]:
            common = common.intersection(s.index)
        if len(common) >= 2:
            x = np.column_stack([s.loc[common].to_numpy() for s in clean])
            m = x.mean(axis=0)
            value = float(f(m))
            if not math.isfinite(value):
                return Effect(math.nan)
            z = x @ _gradient(f, m)
            n = len(common)
            return Effect(value, _t(n - 1, confidence) * float(np.std(z, ddof=1)) / math.sqrt(n), n, Method.PAIRED)
    m = np.array([s.mean() for s in clean])
    value = float(f(m))
    if not math.isfinite(value):
        return Effect(math.nan)
    ns = np.array([len(s) for s in clean])
    n = int(ns.min())
    g = _gradient(f, m)
    used = np.abs(g) > 0
    test = Method.ONE_SAMPLE if len(clean) == 1 else Method.WELCH
    if (ns[used] < 2).any():
        return Effect(value, math.inf, n, Method.NONE)
    terms = np.array([g[k] ** 2 * np.var(s.to_numpy(), ddof=1) / len(s) if used[k] else 0.0
                      for k, s in enumerate(clean)])
    var = float(terms.sum())
    if var == 0:
        return Effect(value, 0.0, n, test)
    df = var ** 2 / float(sum(t * t / (k - 1) for t, k in zip(terms, ns) if t > 0))
    return Effect(value, _t(df, confidence) * math.sqrt(var), n, test)


def difference(a: pd.Series, b: pd.Series, *, paired: bool) -> Effect:
    """mean(a) - mean(b)."""
    return effect(lambda m: m[0] - m[1], [a, b], paired=paired)


def relative_gap(lower: pd.Series, than: pd.Series, *, paired: bool) -> Effect:
    """1 - mean(lower)/mean(than): how far `lower` is below `than`, as a fraction of `than`."""
    return effect(lambda m: 1.0 - m[0] / m[1] if m[1] != 0 else math.nan, [lower, than], paired=paired)


def increase(higher: pd.Series, base: pd.Series, *, paired: bool) -> Effect:
    """mean(higher)/mean(base) - 1: how much higher, as a fraction of `base`."""
    return effect(lambda m: m[0] / m[1] - 1.0 if m[1] != 0 else math.nan, [higher, base], paired=paired)


def mean(a: pd.Series) -> Effect:
    """One series' mean and its t interval."""
    return effect(lambda m: float(m[0]), [a], paired=False)


def propagate(f: Callable[[np.ndarray], float], parts: Sequence[Effect]) -> Effect:
    """f of separately estimated figures, their half-widths propagated to first order and added in
    quadrature (`Method.QUADRATURE`): for figures of separate runs, or where only each one's own interval is
    known. Wider than pairing where the figures shared streams; infinite when a figure that f depends on has none."""
    if not all(p.known for p in parts):
        return Effect(math.nan)
    m = np.array([p.value for p in parts])
    value = float(f(m))
    if not math.isfinite(value):
        return Effect(math.nan)
    g = _gradient(f, m)
    n = min(p.n for p in parts)
    if any(not math.isfinite(p.half_width) and gk != 0 for p, gk in zip(parts, g)):
        return Effect(value, math.inf, n, Method.NONE)
    hw = math.sqrt(sum((gk * p.half_width) ** 2 for p, gk in zip(parts, g) if gk != 0))
    return Effect(value, hw, n, Method.QUADRATURE if len(parts) > 1 else parts[0].test)
