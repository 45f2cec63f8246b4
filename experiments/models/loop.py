"""A class's compute-loop fit T(p) = W/p + alpha + beta·p, on times as at one speed.

A profile runs each p a few times, minutes apart, and this host's speed wanders by
5-22% between them (docs/speed.md): identical CG runs at p = 4 in one profile took
9.62 s and 7.40 s, delivered 0.362 and 0.405 reference cores. Each run's delivered
speed is stored with it (`ref_speed`, from the meter), so its times are brought to the
profile's reference speed before the fit (t · speed / reference): the run at 0.362
becomes 9.09 s, the one at 0.405 7.83 s. The live jobs are normalised against the same
reference, so prediction and measurement use one speed. Runs without a speed (no
meter) are fitted as measured.
"""
from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from workloads.host import sevcik


def at_reference(sample: Mapping[str, Any], reference: float | None) -> float:
    """The factor that brings one run's times to the reference speed (1.0 when either is unknown)."""
    speed = sample.get("ref_speed")
    if speed is None or not reference or speed <= 0:
        return 1.0
    return float(speed) / float(reference)


def normalised_samples(samples: Sequence[Mapping[str, Any]], reference: float | None) -> list[dict[str, Any]]:
    """The samples with time_s, done_s, wall_s and hello_s as at `reference` (each run's own factor)."""
    out = []
    for s in samples:
        k = at_reference(s, reference)
        out.append({**s, **{f: float(s[f]) * k for f in ("time_s", "done_s", "wall_s", "hello_s") if s.get(f) is not None}})
    return out


def fit(samples: Sequence[Mapping[str, Any]], reference: float | None) -> sevcik.SevcikFit:
    """The Sevcik fit of the loop times, each brought to `reference` first."""
    norm = normalised_samples(samples, reference)
    return sevcik.fit([int(s["p"]) for s in norm], [s["time_s"] for s in norm])


def stored(profile: Mapping[str, Any]) -> tuple[float, float, float]:
    """(W, alpha, beta) per unit of demand of a stored profile: refitted from its samples
    when it has them (so one stored before this normalisation is read as today's), else as
    stored."""
    samples = profile.get("samples")
    if samples and len(samples) >= 3:
        f = fit(samples, profile.get("ref_speed"))
        demand = float(profile.get("demand", 1.0))
        return f.work_s / demand, f.alpha_s / demand, f.beta_s / demand
    return float(profile["W"]), float(profile["alpha"]), float(profile["beta"])


def run_sigma(samples: Sequence[Mapping[str, Any]], reference: float | None) -> float:
    """How far identical runs differ: the pooled within-p standard deviation of the log of
    their loop times at the reference speed (0.0 when no p was run twice). What the meter
    does not explain (dedicated CG runs at p = 4 still differed by 15% after it) is
    the noise a prediction has to allow for."""
    by_p: dict[int, list[float]] = {}
    for s in normalised_samples(samples, reference):
        if s["time_s"] > 0:
            by_p.setdefault(int(s["p"]), []).append(math.log(s["time_s"]))
    squares, dof = 0.0, 0
    for logs in by_p.values():
        if len(logs) > 1:
            mean = sum(logs) / len(logs)
            squares += sum((x - mean) ** 2 for x in logs)
            dof += len(logs) - 1
    return math.sqrt(squares / dof) if dof else 0.0


def hellos(samples: Sequence[Mapping[str, Any]], reference: float | None) -> tuple[tuple[int, float], ...]:
    """(p, median seconds from start to hello at the reference speed) for each profiled p;
    empty when the samples carry no hello (profiled before hellos were recorded)."""
    by_p: dict[int, list[float]] = {}
    for s in normalised_samples(samples, reference):
        h = s.get("hello_s")
        if h is None or not math.isfinite(h) or h < 0:
            return ()
        by_p.setdefault(int(s["p"]), []).append(float(h))
    return tuple((p, statistics.median(v)) for p, v in sorted(by_p.items()))
