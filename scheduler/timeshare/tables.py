"""The global job manager's scheduling tables (Zhou & Brent §5, Figs. 3 and 4).

Each job holds one slot per round on each of its workstations, at the same offset on all of
them (that is what makes it coscheduled). A workstation's table lists its slots in order: a
job's parallel part Δt_p = βΔT, the sequential part that follows it, and dummy slots
(process None) for gaps and the tail, which go to sequential work only.

Choices the paper leaves open (Fig. 3 shows shapes, not a rule):
- Offsets are packed first-fit in the order the jobs are given: a job takes the earliest
  offset at which its whole slot is free on all its workstations (it may fill a gap left
  earlier). A job with no such offset inside the round is an error.
- ΔT_s is spread per job, not per workstation, so that a job's slot stays aligned across its
  workstations: with L the largest Σβ on any workstation, proportional gives job j
  β_j ΔT (1-L)/L after its slot (eq. 11, and eq. 14 on the busiest workstation), uniform
  gives (1-L)ΔT / n_max, n_max the most jobs on one workstation (eq. 10 where n = n_max).
  Time left on a less loaded workstation is a dummy slot.
"""
from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

from scheduler.timeshare.slots import (Distribution, SlotError, check_beta, check_round, check_widths,
                                       sequential_ratio)
from workloads.wire.timeshare_table import round_tolerance_s


@dataclass(frozen=True, slots=True)
class JobShare:
    """A job's time/space allocation: its workstations and its utilisation ratio β on each."""

    job: str
    workstations: tuple[str, ...]
    beta: float

    def __post_init__(self) -> None:
        check_beta(self.beta, f"job {self.job}: beta")
        if not self.workstations:
            raise SlotError(f"job {self.job}: workstations: needs at least one")
        if len(set(self.workstations)) != len(self.workstations):
            raise SlotError(f"job {self.job}: workstations: one process per workstation, got {list(self.workstations)}")


@dataclass(frozen=True, slots=True)
class TableSlot:
    """One node of a table: `process` (None: a dummy) runs Δt_p, then Δt_s is sequential work's."""

    process: str | None
    offset_s: float
    parallel_s: float
    sequential_s: float

    @property
    def width_s(self) -> float:
        return self.parallel_s + self.sequential_s


@dataclass(frozen=True, slots=True)
class WorkstationTable:
    """What the local job manager of one workstation follows, round after round."""

    workstation: str
    round_s: float
    slots: tuple[TableSlot, ...]

    def __post_init__(self) -> None:
        check_round(self.round_s)
        check_widths([w for s in self.slots for w in (s.parallel_s, s.sequential_s)], self.round_s)
        at_s = 0.0
        for s in self.slots:
            if abs(s.offset_s - at_s) > round_tolerance_s(self.round_s):
                raise SlotError(f"{self.workstation}: slot of {s.process} starts at {s.offset_s:g} s, "
                                f"where the slot before it ends at {at_s:g} s")
            at_s += s.width_s
        named = [s.process for s in self.slots if s.process is not None]
        if len(set(named)) != len(named):
            raise SlotError(f"{self.workstation}: a process has more than one slot in {named}")

    @property
    def processes(self) -> tuple[str, ...]:
        return tuple(s.process for s in self.slots if s.process is not None)


class Resync(str, Enum):
    """How often the global manager realigns the workstations' slot boundaries (§5)."""

    STRICT = "strict"          # a broadcast at every slot boundary: conventional gang scheduling
    LOOSE = "loose"            # once every k rounds: loose gang scheduling
    NONE = "none"              # never: uncoordinated local scheduling


@dataclass(frozen=True, slots=True)
class ResyncPlan:
    kind: Resync
    every_rounds: int = 1

    def __post_init__(self) -> None:
        if self.every_rounds < 1:
            raise SlotError(f"every_rounds: must be >= 1, got {self.every_rounds}")

    def sync_times_s(self, tables: Mapping[str, WorkstationTable], horizon_s: float) -> tuple[float, ...]:
        """The times (on the global manager's clock) of the broadcasts up to horizon_s, after t = 0."""
        return tuple(self.iter_sync_times_s(tables, horizon_s))

    def iter_sync_times_s(self, tables: Mapping[str, WorkstationTable], horizon_s: float) -> Iterator[float]:
        """sync_times_s one at a time (a long horizon with strict gang is millions of them)."""
        round_s = _common_round_s(tables)
        if self.kind is Resync.NONE:
            return
        if self.kind is Resync.LOOSE:
            step_s = self.every_rounds * round_s
            yield from (k * step_s for k in range(1, int(horizon_s // step_s) + 1))
            return
        bounds = sorted({b for t in tables.values() for s in t.slots
                         for b in (s.offset_s, s.offset_s + s.parallel_s) if b < round_s})
        for n in range(int(horizon_s // round_s) + 1):
            yield from (n * round_s + b for b in bounds if 0 < n * round_s + b <= horizon_s)


def _common_round_s(tables: Mapping[str, WorkstationTable]) -> float:
    rounds = {t.round_s for t in tables.values()}
    if len(rounds) != 1:
        raise SlotError(f"tables: all workstations share one round, got {sorted(rounds)}")
    return rounds.pop()


def build_tables(jobs: Sequence[JobShare], workstations: Sequence[str], round_s: float,
                 distribution: Distribution = Distribution.PROPORTIONAL,
                 max_round_s: float | None = None) -> dict[str, WorkstationTable]:
    """Every workstation's table for these allocations (see the module docstring for the rules)."""
    check_round(round_s, max_round_s)
    known = set(workstations)
    seen: set[str] = set()
    for j in jobs:
        if j.job in seen:
            raise SlotError(f"job {j.job}: listed twice")
        seen.add(j.job)
        unknown = [w for w in j.workstations if w not in known]
        if unknown:
            raise SlotError(f"job {j.job}: workstations: unknown {unknown} (known: {', '.join(workstations)})")
    on = {w: [j for j in jobs if w in j.workstations] for w in workstations}
    for w, js in on.items():
        try:
            sequential_ratio([j.beta for j in js])
        except SlotError:
            raise SlotError(f"{w}: jobs {[j.job for j in js]} ask for β summing to "
                            f"{math.fsum(j.beta for j in js):g} > 1") from None
    busiest = max((math.fsum(j.beta for j in js) for js in on.values()), default=0.0)
    n_max = max((len(js) for js in on.values()), default=0)
    seq_s = {j.job: _sequential_after_s(j.beta, busiest, n_max, round_s, distribution) for j in jobs}

    busy: dict[str, list[tuple[float, float, JobShare]]] = {w: [] for w in workstations}
    for j in jobs:
        block_s = j.beta * round_s + seq_s[j.job]
        offset_s = _first_fit_s(block_s, [busy[w] for w in j.workstations], round_s)
        if offset_s is None:
            raise SlotError(f"job {j.job}: does not fit in the round: no {block_s:g} s free at one offset on all of "
                            f"{', '.join(j.workstations)} in round_s = {round_s:g} s (order the jobs differently or lower β)")
        for w in j.workstations:
            busy[w].append((offset_s, offset_s + block_s, j))
    tolerance_s = round_tolerance_s(round_s)
    tables = {}
    for w in workstations:
        slots: list[TableSlot] = []
        at_s = 0.0
        for start_s, end_s, j in sorted(busy[w], key=lambda b: b[0]):
            if start_s > at_s + tolerance_s:
                slots.append(TableSlot(None, at_s, 0.0, start_s - at_s))
            slots.append(TableSlot(j.job, start_s, j.beta * round_s, seq_s[j.job]))
            at_s = end_s
        tail_s = round_s - at_s
        if tail_s > tolerance_s:
            slots.append(TableSlot(None, at_s, 0.0, tail_s))
        elif slots and tail_s != 0.0:  # rounding: the last slot ends exactly at the round
            last = slots[-1]
            slots[-1] = TableSlot(last.process, last.offset_s, last.parallel_s, max(0.0, last.sequential_s + tail_s))
        tables[w] = WorkstationTable(w, round_s, tuple(slots))
    return tables


def _first_fit_s(block_s: float, busy: Sequence[Sequence[tuple[float, float, JobShare]]],
                 round_s: float) -> float | None:
    """The earliest offset where block_s is free on every one of the workstations (busy intervals given)."""
    tolerance_s = round_tolerance_s(round_s)
    candidates = sorted({0.0} | {end for intervals in busy for _, end, _ in intervals})
    for offset_s in candidates:
        end_s = offset_s + block_s
        if end_s > round_s + tolerance_s:
            return None
        if all(end_s <= a + tolerance_s or offset_s >= b - tolerance_s
               for intervals in busy for a, b, _ in intervals):
            return offset_s
    return None


def _sequential_after_s(beta: float, busiest: float, n_max: int, round_s: float,
                        distribution: Distribution) -> float:
    spare_s = max(0.0, 1.0 - busiest) * round_s
    if distribution is Distribution.UNIFORM:
        return spare_s / n_max
    return spare_s * beta / busiest
