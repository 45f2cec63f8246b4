"""The slot arithmetic of a scheduling table in force (Zhou & Brent §4), once for both sides.

The registration office the simulator keeps (scheduler/timeshare/office.py, with the slot
widths of scheduler/timeshare/slots.py) and the local job manager in each workstation
(containers/agents/timeshare_manager.py) follow a table by this arithmetic: what counts as
rounding, when a β and a round are valid, and which slot holds a given time. Standard library
only: it runs inside the workstations too.

A table is its slots in order, each (job or None, parallel_s, sequential_s): the job's part
Δt_p, then the sequential work Δt_s that follows it; a job None is a dummy slot, for
sequential work only. The widths add up to the round ΔT (eq. 7).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

WIDTH_TOLERANCE_S = 1e-9  # widths are sums of floats: this much off the round is rounding, not an error

Slot = tuple[str | None, float, float]  # (job or None, parallel_s, sequential_s)


class SlotAt(NamedTuple):
    """The slot that holds a time: its index in the table, its job (None: a dummy slot), whether the
    time is past its parallel part (only sequential work runs), when it began and when that part ends."""

    index: int
    job: str | None
    sequential: bool
    slot_start_s: float
    until_s: float


def is_time(value: object) -> bool:
    """A finite number of seconds (a bool is not one)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def beta_ok(beta: object, tolerance: float = 0.0) -> bool:
    """β in (0, 1]: a zero share is no slot, and no process gets more than the CPU.

    `tolerance` lets a β computed as parallel_s / round_s be a rounding above 1.
    """
    return isinstance(beta, (int, float)) and math.isfinite(beta) and 0.0 < beta <= 1.0 + tolerance


def round_tolerance_s(round_s: float) -> float:
    """How far widths may add up off a round of round_s and still be that round."""
    return WIDTH_TOLERANCE_S * max(1.0, round_s)


def widths_fill_round(widths_s: Sequence[float], round_s: float) -> bool:
    """The widths add up to the round (eq. 7), up to rounding."""
    return abs(math.fsum(widths_s) - round_s) <= round_tolerance_s(round_s)


def dispatch_at(slots: Sequence[Slot], round_s: float, anchor_s: float, now_s: float) -> SlotAt:
    """Which slot holds now_s, for a table whose round 0 begins at anchor_s.

    round_s is the sum of the widths. A slot of width 0 holds no time. ValueError if no slot has a width.
    """
    laps = (now_s - anchor_s) // round_s  # never a lap too many, as floor(a / b) can be when a / b rounds up
    start_s = anchor_s + laps * round_s
    for _ in range(2):  # rounding can leave now_s a hair past the last slot of a lap
        for i, (job, parallel_s, sequential_s) in enumerate(slots):
            width_s = parallel_s + sequential_s
            if width_s > 0 and now_s < start_s + width_s:
                if now_s < start_s + parallel_s:
                    return SlotAt(i, job, False, start_s, start_s + parallel_s)
                return SlotAt(i, job, True, start_s, start_s + width_s)
            start_s += width_s
    raise ValueError("slots: no slot has a width")
