"""What a prediction takes the workstations' speed to be: `[profile] speed_basis`.

"reference" (the default): each profile run's times are brought by the meter to the
profile's reference speed, the median its runs were delivered (`loop.py`), and a cell is
predicted at that speed. Live jobs are brought to the same speed for the report's
speed-normalised errors.

"as-profiled": the profile's times as measured. A job on p workstations is predicted at the
speed the profile's own runs on p were delivered, whatever the meter made of it. Where the
governor runs short with every workstation busy, the reference is a speed the cells do not
get: Fig. 4's profile runs on 8 got 0.245 reference cores against 0.27-0.29 for its others,
and its cells ran a median 0.88-0.99 of the reference. Over the nine committed figures this
basis missed 14 response and 27 median-execution targets of 54, against 20 and 30
(experiments/results/padhye-dowdy/prediction-variants/). A live job's speed-normalised time
is then brought to the speed the profile's runs on its size were delivered (`job_factor`).
"""
from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from typing import Any, Literal

SpeedBasis = Literal["reference", "as-profiled"]
BASES: tuple[SpeedBasis, ...] = ("reference", "as-profiled")


def check(basis: str) -> SpeedBasis:
    if basis not in BASES:
        raise ValueError(f"profile.speed_basis: one of {', '.join(BASES)}, got {basis!r}")
    return basis  # type: ignore[return-value]


def profile_for(profile: Mapping[str, Any], basis: str) -> dict[str, Any]:
    """The profile as the class models read it under `basis`: without a reference speed its
    runs are fitted as measured (`loop.at_reference` gives 1 for every run)."""
    if check(basis) == "reference":
        return dict(profile)
    return {**profile, "ref_speed": None}


def speed_at(profile: Mapping[str, Any], p: int) -> float | None:
    """The median speed the profile's runs (those before the first cell) on p workstations
    were delivered, on the profiled size nearest p in log terms; None without a metered run."""
    by_p: dict[int, list[float]] = {}
    for s in profile.get("samples") or []:
        v = s.get("ref_speed")
        if v and v > 0 and not s.get("between_cells"):
            by_p.setdefault(int(s["p"]), []).append(float(v))
    if not by_p or p < 1:
        return None
    nearest = min(by_p, key=lambda q: (abs(math.log(q / p)), q))
    return statistics.median(by_p[nearest])


def job_factor(profile: Mapping[str, Any], p: int, basis: str) -> float:
    """What a live job's delivered speed (relative to the profile's reference) is multiplied
    by to be relative to the speed its prediction assumed: 1 under "reference"; reference /
    speed_at(p) under "as-profiled" (1 when either is unknown)."""
    if check(basis) == "reference":
        return 1.0
    reference, at_p = profile.get("ref_speed"), speed_at(profile, p)
    if not reference or not at_p:
        return 1.0
    return float(reference) / at_p


__all__ = ["BASES", "SpeedBasis", "check", "job_factor", "profile_for", "speed_at"]
