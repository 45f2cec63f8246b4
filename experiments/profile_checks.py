"""Profile runs taken between a run's cells, so that the profile covers the run's span.

A profile is taken once, before the first cell, two to six runs a size over a few minutes.
This host's speed wanders by more than the meter explains, and the jobs that kept one
partition in the committed runs sat at a steady 0.94x to 1.20x their profile from the first
cell to the last (experiments/results/padhye-dowdy/summary.md): an offset fixed when the
profile was taken, which every cell's prediction then carries. With `[profile]
between_cells = [...]` the runner runs one more job of a class alone after each cell, on one
of those sizes in turn, and stores it among the profile's samples, marked. The predictions
(experiments/replay.py) fit the class from all of them, so the profile is spread over the
hour it predicts, as a side-by-side comparison asks. The live policy is told the fit of the
profile taken at the start only (`at_start`), so every cell's policy sees the same model.

These checks are dedicated runs, not the cells' jobs: a prediction still takes nothing from
the jobs it predicts. Pure: the runner runs the jobs (experiments/profiles.py, `run_check`).
"""
from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from experiments.models.loop import normalised_samples

MARK = "between_cells"  # a sample's key, True on the checks


def is_check(sample: Mapping[str, Any]) -> bool:
    return bool(sample.get(MARK))


def at_start(profile: Mapping[str, Any]) -> dict[str, Any]:
    """The profile as taken before the first cell (its checks left out)."""
    samples = profile.get("samples") or []
    return {**profile, "samples": [s for s in samples if not is_check(s)]}


def checks(profile: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [dict(s) for s in profile.get("samples") or [] if is_check(s)]


def done(profiles: Mapping[str, Mapping[str, Any]]) -> int:
    """How many checks the stored profiles hold, over every class (a resumed run goes on from there)."""
    return sum(len(checks(p)) for p in profiles.values())


def next_check(classes: Sequence[str], sizes: Sequence[int], done_so_far: int) -> tuple[str, int] | None:
    """The (class, size) of the next check: the classes in turn, each through `sizes` in turn
    (None when there are no sizes). E.g. classes a, b and sizes 8, 4 give a 8, b 8, a 4, b 4, a 8."""
    if not sizes or not classes:
        return None
    if done_so_far < 0:
        raise ValueError(f"done_so_far must be >= 0, got {done_so_far}")
    k = done_so_far
    return classes[k % len(classes)], sizes[(k // len(classes)) % len(sizes)]


def with_check(profile: Mapping[str, Any], sample: Mapping[str, Any]) -> dict[str, Any]:
    """The profile with one more check among its samples."""
    for key in ("p", "time_s", "done_s", "wall_s"):
        if key not in sample:
            raise ValueError(f"a check needs {key}")
    return {**profile, "samples": [*(profile.get("samples") or []), {**sample, MARK: True}]}


@dataclass(frozen=True)
class Drift:
    """The checks on p workstations against the profile's runs before the first cell, their loop
    times each brought to the profile's reference speed by the meter."""

    cls: str
    p: int
    checks: int
    ratio: float        # median check over the median start run
    first_half: float   # the same over the first half of the checks in the run's order
    second_half: float

    def text(self) -> str:
        halves = f" ({self.first_half:.2f} -> {self.second_half:.2f})" if self.checks >= 2 else ""
        return f"{self.cls} on {self.p}: {self.ratio:.2f}{halves}, n {self.checks}"


def drift(cls: str, profile: Mapping[str, Any]) -> list[Drift]:
    """Per size with both kinds of run, how the checks' loop times compare with the start's."""
    reference = profile.get("ref_speed")
    norm = normalised_samples(profile.get("samples") or [], reference)
    out = []
    for p in sorted({int(s["p"]) for s in norm if is_check(s)}):
        start = [float(s["time_s"]) for s in norm if int(s["p"]) == p and not is_check(s)]
        later = [float(s["time_s"]) for s in norm if int(s["p"]) == p and is_check(s)]
        if not start or not later:
            continue
        base = statistics.median(start)
        if base <= 0:
            continue
        half = max(1, len(later) // 2)
        out.append(Drift(cls, p, len(later), statistics.median(later) / base,
                         statistics.median(later[:half]) / base,
                         statistics.median(later[half:] or later[:half]) / base))
    return out


def drift_text(profiles: Mapping[str, Mapping[str, Any]]) -> str:
    """'cg500 on 8: 1.07 (1.05 -> 1.09), n 12; ...', or '' when no check was taken."""
    return "; ".join(d.text() for cls in sorted(profiles) for d in drift(cls, profiles[cls]))


__all__ = ["Drift", "MARK", "at_start", "checks", "done", "drift", "drift_text", "is_check", "next_check",
           "with_check"]
