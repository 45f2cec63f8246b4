"""Slot widths of one scheduling round (Zhou & Brent, eqs. 7-14).

A round of ΔT seconds holds one slot Δt_p = β_p ΔT per parallel process (eq. 8) and
ΔT_s = β_s ΔT for sequential work (eq. 9), with β_s = 1 - Σβ_p (eq. 13). ΔT_s is spread
uniformly (eq. 10) or in proportion to the β_p (eq. 11); under the proper-share policy each
Δt_s is merged into its parallel slot, Δt = Δt_p + Δt_s (eq. 12), which for the proportional
spread is β_p/Σβ ΔT (eq. 14).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from workloads.wire.timeshare_table import WIDTH_TOLERANCE_S, beta_ok, widths_fill_round


class SlotError(ValueError):
    """A slot, β or round that cannot be: the message is one line naming it."""


class Distribution(str, Enum):
    """How ΔT_s is spread over the round."""

    UNIFORM = "uniform"            # eq. 10: ΔT_s / n after each parallel slot
    PROPORTIONAL = "proportional"  # eq. 11: ΔT_s β_p^(i) / Σβ_p after slot i


@dataclass(frozen=True, slots=True)
class Share:
    """A parallel process and its utilisation ratio β on this workstation."""

    process: str
    beta: float

    def __post_init__(self) -> None:
        check_beta(self.beta, f"β of {self.process}")


@dataclass(frozen=True, slots=True)
class IntegratedSlot:
    """Slot i of a round: the parallel part Δt_p, then the sequential part Δt_s that follows it."""

    process: str
    parallel_s: float
    sequential_s: float

    @property
    def width_s(self) -> float:
        """Δt^(i) = Δt_p^(i) + Δt_s^(i) (eq. 12)."""
        return self.parallel_s + self.sequential_s


def check_beta(beta: float, name: str = "β") -> float:
    """β must lie in (0, 1]: a zero share is no slot, and no process gets more than the CPU."""
    if not beta_ok(beta):
        raise SlotError(f"{name}: must be in (0, 1], got {beta}")
    return float(beta)


def check_round(round_s: float, max_round_s: float | None = None) -> float:
    """A round is a positive finite time, no longer than its bound (§2: an unbounded round starves short jobs)."""
    if not (math.isfinite(round_s) and round_s > 0):
        raise SlotError(f"round_s: must be a positive time, got {round_s}")
    if max_round_s is not None and round_s > max_round_s + WIDTH_TOLERANCE_S:
        raise SlotError(f"round_s: {round_s:g} s is longer than the bound max_round_s = {max_round_s:g} s")
    return float(round_s)


def sequential_ratio(betas: Sequence[float]) -> float:
    """β_s = 1 - Σβ_p (eq. 13); the parallel shares may not overfill the round."""
    total = math.fsum(check_beta(b) for b in betas)
    if total > 1.0 + WIDTH_TOLERANCE_S:
        raise SlotError(f"β: the parallel shares add up to {total:g} > 1, more than the round")
    return max(0.0, 1.0 - total)


def parallel_width_s(beta: float, round_s: float) -> float:
    """Δt_p = β_p ΔT (eq. 8)."""
    return check_beta(beta) * check_round(round_s)


def sequential_time_s(betas: Sequence[float], round_s: float) -> float:
    """ΔT_s = β_s ΔT (eq. 9 with eq. 13)."""
    return sequential_ratio(betas) * check_round(round_s)


def sequential_widths_s(betas: Sequence[float], round_s: float, distribution: Distribution) -> tuple[float, ...]:
    """Δt_s^(i) after each parallel slot: ΔT_s/n (eq. 10) or ΔT_s β_i/Σβ (eq. 11)."""
    if not betas:
        return ()
    total_s = sequential_time_s(betas, round_s)
    if distribution is Distribution.UNIFORM:
        return tuple(total_s / len(betas) for _ in betas)
    beta_sum = math.fsum(betas)
    return tuple(total_s * b / beta_sum for b in betas)


def integrated_widths_s(betas: Sequence[float], round_s: float) -> tuple[float, ...]:
    """Δt^(i) = β_i / Σβ ΔT (eq. 14): the proportional spread, with no need for the Δt_s."""
    sequential_ratio(betas)  # checks every β and the sum
    beta_sum = math.fsum(betas)
    return tuple(b / beta_sum * check_round(round_s) for b in betas)


def layout_round(shares: Sequence[Share], round_s: float, distribution: Distribution,
                 max_round_s: float | None = None) -> tuple[IntegratedSlot, ...]:
    """One workstation's round: each parallel slot followed by its share of ΔT_s (eqs. 7-11).

    The result adds up to the round (eq. 7); check_widths says so again for anything built by hand.
    """
    check_round(round_s, max_round_s)
    names = [s.process for s in shares]
    if len(set(names)) != len(names):
        raise SlotError(f"processes: one slot each, but {sorted({n for n in names if names.count(n) > 1})} repeat")
    betas = [s.beta for s in shares]
    seq = sequential_widths_s(betas, round_s, distribution)
    slots = tuple(IntegratedSlot(s.process, s.beta * round_s, q) for s, q in zip(shares, seq))
    check_widths([w for sl in slots for w in (sl.parallel_s, sl.sequential_s)], round_s)
    return slots


def check_widths(widths_s: Sequence[float], round_s: float) -> None:
    """Slot widths are non-negative and add up to the round (eq. 7)."""
    for i, w in enumerate(widths_s):
        if not (math.isfinite(w) and w >= 0):
            raise SlotError(f"slot {i}: width must be a time >= 0, got {w}")
    if not widths_fill_round(widths_s, round_s):
        raise SlotError(f"slots: widths add up to {math.fsum(widths_s):g} s, not the round of {round_s:g} s")


def shortest_round_s(betas: Sequence[float], min_slot_s: float, max_round_s: float) -> float:
    """The shortest round whose every parallel slot is at least min_slot_s (switches stay cheap),
    within the bound max_round_s (short jobs are not held up by a long round, §2)."""
    if not betas:
        raise SlotError("betas: no parallel process, so no round to size")
    if not (math.isfinite(min_slot_s) and min_slot_s > 0):
        raise SlotError(f"min_slot_s: must be a positive time, got {min_slot_s}")
    sequential_ratio(betas)
    round_s = min_slot_s / min(betas)
    return check_round(round_s, max_round_s)
