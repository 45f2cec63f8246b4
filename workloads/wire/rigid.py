"""What a rigid job's program says on stdout so the host can measure its launch: one line.

Rank 0 prints `nowlab-started <seconds since the epoch>` as soon as its communicator is
ready (after MPI_Init, or the pool's sub-communicator): the host subtracts the time it
launched the job. The workstations share the host's clock (containers) or are the host
(local backend), so the two clocks are one. A program that prints no such line (a user's
binary) has its launch cost measured as unknown, never guessed.
Standard library only: the node side (workloads/rigid.py, containers/kernels/ring.c) and the
host side (scheduler/live) both read it.
"""
from __future__ import annotations

import math

STARTED = "nowlab-started"


def started_line(epoch_s: float) -> str:
    return f"{STARTED} {epoch_s:.6f}"


def started_at(stdout: str) -> float:
    """The epoch seconds of the first `nowlab-started` line in `stdout`; NaN if there is none."""
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == STARTED:
            try:
                value = float(parts[1])
            except ValueError:
                continue
            if math.isfinite(value):
                return value
    return math.nan
