"""A scheduling table as the local job manager takes it: scheduler.timeshare's TableSlots as WireSlots.

The scheduler and the testbed do not import each other, so the one conversion between the
planner's tables and the manager's wire lives here, above both. Pure.
"""
from __future__ import annotations

from scheduler.timeshare.tables import WorkstationTable
from experiments.studies.zhou_brent.manager_client import WireSlot


def wire_slots(table: WorkstationTable) -> tuple[WireSlot, ...]:
    """The table's slots in order; a dummy (process None) stays a dummy, offsets follow from the order.

    A slot with no width at all (possible only in a table built by hand) is left out: the
    manager would have nothing to time by it.
    """
    return tuple(WireSlot(s.process, s.parallel_s, s.sequential_s) for s in table.slots if s.width_s > 0)
