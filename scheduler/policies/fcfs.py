"""FCFS: first come, first served, the baseline every batch-scheduling paper compares against."""
from __future__ import annotations

import math

from scheduler.actions import Action, Start
from scheduler.alloc import take_mask
from scheduler.model import Knowledge
from scheduler.policy import Policy
from scheduler.snapshot import JobView, Snapshot


def width(job: JobView) -> int:
    """Processors a batch policy gives a job: a rigid job's size; a malleable job's pmax (the
    most it can use, capped at the machine), so in a mixed stream it runs as if rigid there."""
    return job.size if job.size is not None else job.pmax


def estimate_s(job: JobView) -> float:
    """How long the job may run, as a batch policy plans with it: its requested walltime; else,
    when its model tells T(p), its time on `width(job)` processors (a trace job's own run time:
    what Batsim and AccaSim do for a job without a requested time); else +inf (unknown)."""
    if job.walltime is not None:
        return job.walltime
    if Knowledge.TP in job.model.knows:
        return job.model.T(width(job))
    return math.inf


def expected_end(job: JobView, now: float) -> float:
    """When a started job is planned to give its processors back: start + estimate, never
    before now (a live job not yet launched has no start: now stands for it)."""
    start = job.start
    end = (now if start != start else start) + estimate_s(job)  # start != start: NaN
    return end if end > now else now


class FCFS(Policy):
    """Queued jobs start in arrival order, each on `width(job)` processors (lowest contiguous
    block first), while they fit; the first that does not fit blocks every job behind it.

    Never preempts, never resizes: rigid and malleable jobs alike run to their end.
    """

    name = "FCFS"
    run_to_completion = True

    def decide(self, snap: Snapshot) -> list[Action]:
        mask = snap.free_mask
        free = mask.bit_count()
        actions: list[Action] = []
        for job in snap.queue:
            n = job.size if job.size is not None else job.pmax
            if n > free:
                break
            procs, mask = take_mask(mask, n)
            free -= n
            actions.append(Start(job.id, procs))
        return actions
