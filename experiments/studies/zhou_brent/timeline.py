"""Who ran when on a workstation, from its local job manager's timeline; and each job's measured share.

A manager's timeline is a list of (time_s, job) switches, on its own clock: from time_s on,
`job` is the parallel job marked out (None: no parallel job runs; sequential work only).
Pure: the live global manager (experiments/studies/zhou_brent/global_manager.py) collects the timelines, and a
report draws them and checks each job's share against its β (Zhou & Brent §2: S_e = β S_d).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

Timeline = Sequence[tuple[float, str | None]]


@dataclass(frozen=True, slots=True)
class RunInterval:
    """`job` (None: sequential work only) held the workstation from start_s to end_s (its manager's clock)."""

    job: str | None
    start_s: float
    end_s: float


def intervals(timeline: Timeline, end_s: float) -> tuple[RunInterval, ...]:
    """The timeline as back-to-back intervals up to end_s (a switch after end_s is left out)."""
    out: list[RunInterval] = []
    ordered = sorted(timeline, key=lambda e: e[0])
    for i, (t_s, job) in enumerate(ordered):
        if t_s >= end_s:
            break
        next_s = ordered[i + 1][0] if i + 1 < len(ordered) else end_s
        out.append(RunInterval(job, t_s, min(next_s, end_s)))
    return tuple(out)


def job_time_s(timeline: Timeline, start_s: float, end_s: float) -> dict[str | None, float]:
    """Seconds each job held the workstation in [start_s, end_s); before the first switch counts as None."""
    if not (math.isfinite(start_s) and math.isfinite(end_s) and end_s > start_s):
        raise ValueError(f"window: needs start_s < end_s, got [{start_s}, {end_s})")
    out: dict[str | None, float] = {}
    ordered = sorted(timeline, key=lambda e: e[0])
    if not ordered or ordered[0][0] > start_s:
        ordered = [(start_s, None), *ordered]
    for iv in intervals(ordered, end_s):
        overlap_s = min(iv.end_s, end_s) - max(iv.start_s, start_s)
        if overlap_s > 0:
            out[iv.job] = out.get(iv.job, 0.0) + overlap_s
    return out


def shares(timeline: Timeline, start_s: float, end_s: float) -> dict[str, float]:
    """Each parallel job's measured share of [start_s, end_s): its time there over the window's length."""
    window_s = end_s - start_s
    return {job: t / window_s for job, t in job_time_s(timeline, start_s, end_s).items() if job is not None}


def whole_rounds(anchor_s: float, round_s: float, start_s: float, end_s: float) -> tuple[float, float]:
    """The largest window of whole rounds (round 0 at anchor_s) inside [start_s, end_s]: shares over it
    are not biased by a partial slot at either end."""
    first = math.ceil((start_s - anchor_s) / round_s - 1e-9)
    last = math.floor((end_s - anchor_s) / round_s + 1e-9)
    if last <= first:
        raise ValueError(f"window: [{start_s:.3f}, {end_s:.3f}] holds no whole round of {round_s:g} s")
    return anchor_s + first * round_s, anchor_s + last * round_s
