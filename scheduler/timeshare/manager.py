"""The global job manager of Zhou & Brent §5 as a pure planner: who is admitted, where, with what β.

Asked at a round boundary after a job arrives or ends (see simulate.Replan), it allocates the
jobs present by the allocation rule, keeping running jobs on their workstations, and builds
the tables. Jobs are admitted in arrival order; one that does not fit (no sustained β left
for a short job, no share left for a large one, no aligned offset in the round) waits, and
later ones are still tried: a short job is not held up behind a large one that cannot start.
A running job is never dropped; if it no longer fits the plan is an error (it cannot happen
with the rule here: admitting a job only ever lowers the large jobs' β, and a job that
would leave a large one no share is not admitted).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scheduler.timeshare.allocation import Allocation, AllocationRule, Demand, allocate
from scheduler.timeshare.slots import Distribution, SlotError, check_round
from scheduler.timeshare.tables import WorkstationTable, build_tables


@dataclass(frozen=True, slots=True)
class GlobalManager:
    workstations: tuple[str, ...]
    demands: Mapping[str, Demand]
    rule: AllocationRule
    round_s: float
    distribution: Distribution = Distribution.PROPORTIONAL
    max_round_s: float | None = None

    def __post_init__(self) -> None:
        check_round(self.round_s, self.max_round_s)

    def admit(self, present: Sequence[str], running: Mapping[str, tuple[str, ...]]) -> tuple[Allocation, ...]:
        """The allocations of the running jobs and of every waiting job that fits, in arrival order."""
        unknown = [j for j in present if j not in self.demands]
        if unknown:
            raise SlotError(f"job {unknown[0]}: the manager has no demand for it")
        admitted = [j for j in present if j in running]
        plan = self._try(admitted, running)
        if plan is None:
            raise SlotError(f"jobs {admitted}: the running jobs no longer fit their workstations")
        for j in present:
            if j in running:
                continue
            candidate = self._try([*admitted, j], running)
            if candidate is not None:
                admitted.append(j)
                plan = candidate
        return plan[0]

    def plan(self, present: Sequence[str], running: Mapping[str, tuple[str, ...]]) -> dict[str, WorkstationTable]:
        """The tables for the jobs present (simulate.Replan)."""
        admitted = {a.share.job for a in self.admit(present, running)}
        result = self._try([j for j in present if j in admitted], running)
        assert result is not None  # admit() just built it
        return result[1]

    def _try(self, jobs: Sequence[str], running: Mapping[str, tuple[str, ...]]
             ) -> tuple[tuple[Allocation, ...], dict[str, WorkstationTable]] | None:
        try:
            allocations = allocate([self.demands[j] for j in jobs], self.workstations, self.rule,
                                   fixed_hosts=running) if jobs else ()
            tables = build_tables([a.share for a in allocations], self.workstations, self.round_s,
                                  self.distribution, self.max_round_s)
        except SlotError:
            return None
        return allocations, tables
