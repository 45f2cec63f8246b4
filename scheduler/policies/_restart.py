"""Turn target sizes into Resize/Start actions that respect the subset restriction."""
from __future__ import annotations

from typing import Iterable

from scheduler.actions import Action, Resize, Start
from scheduler.alloc import grow, shrink, take
from scheduler.jobs import JobStatus
from scheduler.snapshot import JobView


def restart(targets: Iterable[tuple[JobView, int]], free: set[int]) -> list[Action]:
    """Actions giving each job its target size.

    Preempted jobs are resized, queued jobs started (a target of 0 leaves a
    queued job waiting). Shrinking jobs go first so the processors they give
    up are free for the growing and new ones; that order always fits when the
    targets sum to at most P.
    """
    losers: list[Action] = []
    winners: list[Action] = []
    starts: list[Action] = []
    later: list[tuple[JobView, int]] = []
    for job, n in targets:
        if job.status is JobStatus.PREEMPTED:
            old = job.procs
            if n <= len(old):
                kept = shrink(old, n)
                free.update(set(old) - set(kept))
                losers.append(Resize(job.id, kept))
            else:
                later.append((job, n))
        elif n > 0:
            later.append((job, n))
    for job, n in later:
        if job.status is JobStatus.PREEMPTED:
            winners.append(Resize(job.id, grow(job.procs, free, n - len(job.procs))))
        else:
            starts.append(Start(job.id, take(free, n)))
    return losers + winners + starts
