"""Open arrival streams, as in Padhye & Dowdy's experiments (§3-4).

Jobs arrive as a Poisson process at rate λ (exponential interarrival times),
each job's class is drawn independently from a mix, and its demand is either
constant (every job identical) or exponential around the class's mean.

Conventions, chosen once here so every policy and rate sees the same jobs:

* The stream starts at time 0 with an empty system; the first job arrives
  after one interarrival draw, not at 0. Every gap, the first included, is
  then an Exp(λ) draw, so the n arrivals are the first n events of a Poisson
  process started at 0 and `interarrival_stats` measures n true gaps.
* Common random numbers. `SeedSequence([seed, replication])` is split into
  three independent child streams: classes, demands and unit-rate gaps. The
  rate only rescales the unit gaps (arrival_i = U_i / λ, U_i their running
  sum), so one replication at two rates has the same classes, the same
  demands and arrivals in exact ratio (at 2λ, exactly half those at λ).
  Comparisons across policies and rates then differ by the treatment, not by
  the draw, which cuts the variance of the differences. Different
  replications (or seeds) give independent streams. A separate child per
  quantity also keeps the gaps and demands the same when only the mix changes.
* Demand multiplies the class's mean demand (`SubmittedJob.demand`): exactly 1.0
  for "constant", an Exp(1) draw for "exponential". There is no floor: a
  draw of exactly 0.0 (probability about 2^-53 per job) is raised to the
  smallest positive float, only so the record stays valid (demand > 0).
* Job ids are stream positions, 0..n-1 in arrival order (so the warm-up is
  the jobs with id < warmup); `write_swf` numbers them from 1 as SWF asks.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from scheduler.jobs import SubmittedJob

DEMANDS = ("constant", "exponential")


@dataclass(frozen=True)
class StreamSpec:
    """One stream: what to draw (mix, rate, n, demand) and which draw (seed, replication).

    Invalid values raise `ValueError` with one line naming the field.
    `mix` keeps its order (it sets which uniform range maps to which class)
    and is normalised to probabilities in `probabilities`.
    """

    mix: Mapping[str, float]
    rate: float
    n: int
    demand: str = "constant"
    seed: int = 0
    replication: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.mix, Mapping) or not self.mix:
            raise ValueError("mix: must map at least one class name to a weight")
        for name, w in self.mix.items():
            if not isinstance(name, str) or not name:
                raise ValueError(f"mix: class names must be non-empty strings, got {name!r}")
            if isinstance(w, bool) or not isinstance(w, (int, float)) or not (math.isfinite(w) and w > 0):
                raise ValueError(f"mix: weight of {name!r} must be a finite number > 0, got {w!r}")
        object.__setattr__(self, "mix", dict(self.mix))  # a private copy: frozen means frozen
        if isinstance(self.rate, bool) or not isinstance(self.rate, (int, float)) \
                or not (math.isfinite(self.rate) and self.rate > 0):
            raise ValueError(f"rate: must be a finite number > 0 jobs/s, got {self.rate!r}")
        if isinstance(self.n, bool) or not isinstance(self.n, (int, np.integer)) or self.n < 1:
            raise ValueError(f"n: must be an integer >= 1, got {self.n!r}")
        if self.demand not in DEMANDS:
            raise ValueError(f"demand: unknown kind {self.demand!r} ({', '.join(DEMANDS)})")
        for field in ("seed", "replication"):
            v = getattr(self, field)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
                raise ValueError(f"{field}: must be an integer >= 0, got {v!r}")

    @property
    def probabilities(self) -> dict[str, float]:
        """The mix normalised to sum to 1, in the mix's order."""
        total = math.fsum(self.mix.values())
        return {name: w / total for name, w in self.mix.items()}

    def jobs(self) -> list[SubmittedJob]:
        """Draw the stream (the same list for the same spec, on any machine)."""
        classes, demands, unit = _draws(self.probabilities, self.n, self.demand, self.seed, self.replication)
        arrivals = unit / float(self.rate)  # one rounding: arrival * rate == unit to the last bit or so
        return [SubmittedJob(id=i, cls=classes[i], arrival_s=float(arrivals[i]), demand=float(demands[i]))
                for i in range(self.n)]


def stream(mix: Mapping[str, float], rate: float, n: int, *, demand: str = "constant",
           seed: int, replication: int = 0) -> list[SubmittedJob]:
    """`n` jobs of `mix` arriving at `rate` jobs/s; see the module docstring for the conventions."""
    return StreamSpec(mix=mix, rate=rate, n=n, demand=demand, seed=seed, replication=replication).jobs()


def _draws(probs: Mapping[str, float], n: int, demand: str, seed: int,
           replication: int) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Classes, demands and the unit-rate arrival times U_i (cumulative Exp(1) gaps).

    Each quantity has its own child stream, so none depends on the rate, on
    the demand kind or (for gaps and demands) on the mix.
    """
    cls_seq, demand_seq, gap_seq = np.random.SeedSequence([int(seed), int(replication)]).spawn(3)
    names = list(probs)
    edges = np.cumsum([probs[c] for c in names])
    edges[-1] = 1.0  # so a uniform just below 1 never falls past the last class by rounding
    u = np.random.default_rng(cls_seq).random(n)
    classes = [names[k] for k in np.searchsorted(edges, u, side="right")]
    if demand == "constant":
        demands = np.ones(n)
    else:
        demands = np.random.default_rng(demand_seq).standard_exponential(n)
        demands = np.maximum(demands, np.nextafter(0.0, 1.0))
    unit = np.cumsum(np.random.default_rng(gap_seq).standard_exponential(n))
    return classes, demands, unit


def _mean_cov(x: np.ndarray, what: str) -> tuple[float, float]:
    if len(x) < 2:
        raise ValueError(f"{what}: need at least 2 values, got {len(x)}")
    mean = float(np.mean(x))
    if mean <= 0:
        raise ValueError(f"{what}: mean must be > 0, got {mean}")
    return mean, float(np.std(x, ddof=1)) / mean


def interarrival_stats(jobs: Sequence[SubmittedJob]) -> tuple[float, float]:
    """(mean, CoV) of the gaps, the first measured from time 0 (an Exp(λ) stream gives ≈ (1/λ, 1))."""
    arrivals = np.sort(np.array([j.arrival_s for j in jobs], dtype=float))
    return _mean_cov(np.diff(arrivals, prepend=0.0), "interarrival_stats")


def demand_stats(jobs: Sequence[SubmittedJob]) -> tuple[float, float]:
    """(mean, CoV) of the demands (constant: (1, 0); exponential: ≈ (1, 1))."""
    return _mean_cov(np.array([j.demand for j in jobs], dtype=float), "demand_stats")
