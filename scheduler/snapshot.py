"""What a policy sees when it is called: a snapshot of the scheduler state.

Nothing here reads a clock. The discrete-event engine fills these in from
simulated time; a live executor can fill them in from real events, so the
same Policy objects drive both.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from typing import Mapping, Sequence

from scheduler.availability import Availability
from scheduler.jobs import JobStatus
from scheduler.model import Model


class Reason(str, Enum):
    """Why the policy is being called."""

    ARRIVAL = "arrival"
    COMPLETION = "completion"
    ACK = "ack"  # a job reached a safe point after a preemption request
    RECONFIGURED = "reconfigured"  # a resized job finished paying its reconfiguration cost


class JobView:
    """A job as a policy sees it. Read-only for policies.

    `seq` is the arrival order (0, 1, ...): FIFO and "earliest arrived" mean
    lowest seq. `pmax` is already capped at the machine size. `t1` is T(1)
    in seconds, cached because queue orders use it often. `model` gives
    T(p); a policy may only use what its `needs` declares. `procs` is the
    sorted set held now (empty while queued).
    `size`: a rigid job's processors (it may only be started on exactly that many, and never
    preempted or resized); None for a malleable job. A rigid job's `pmax` is its size.
    `walltime`: the time it asked for, in seconds from its start (it is killed then); None if
    it asked for none. `start`: when it started (NaN while queued; a live job's first launch,
    so NaN also for a moment after the policy started it).
    """

    __slots__ = ("id", "seq", "arrival", "model", "pmax", "t1", "status", "procs", "size", "walltime", "start")

    def __init__(self, id: int | str, seq: int, arrival: float, model: Model, P: int,
                 size: int | None = None, walltime: float | None = None) -> None:
        self.id = id
        self.seq = seq
        self.arrival = arrival
        self.model = model
        self.size = size
        self.walltime = walltime
        if size is not None:
            self.pmax = size
        else:
            self.pmax = P if model.pmax is None else min(model.pmax, P)
        self.t1 = model.T(1)
        self.status = JobStatus.QUEUED
        self.procs: tuple[int, ...] = ()
        self.start = math.nan

    def __repr__(self) -> str:
        return f"JobView(id={self.id!r}, status={self.status.value}, procs={self.procs})"


@dataclass(slots=True)
class Snapshot:
    """The state at one event. Valid only during the policy call.

    `running` holds jobs making progress with no request outstanding,
    `preempting` those asked to preempt and not yet at a safe point, and
    `preempted` those that acknowledged and wait to be resized. Each maps
    seq to job. `queue` is in the policy's own queue order (its queue_key).
    `free_mask` has bit i set iff workstation i is held by no job (ints are
    cheap to copy and to search for blocks); `free` and `n_free` derive from it.
    `availability` is what owners and traffic leave to guests now (CPU per workstation,
    bandwidth per link), None when the driver does not know it; only a policy that
    places by it (`scheduler.selection.placement`) reads it.
    """

    time: float
    P: int
    reason: Reason
    subject: JobView | None  # the job the event is about
    free_mask: int
    running: Mapping[int, JobView]
    preempting: Mapping[int, JobView]
    preempted: Mapping[int, JobView]
    queue: Sequence[JobView]
    availability: Availability | None = None

    @property
    def n_free(self) -> int:
        return self.free_mask.bit_count()

    @property
    def free(self) -> frozenset[int]:
        return frozenset(ids(self.free_mask))


def ids(mask: int) -> list[int]:
    """The ids whose bits are set, lowest first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def mask_of(procs) -> int:
    m = 0
    for p in procs:
        m |= 1 << p
    return m
