"""The registration office as a pure data structure: check in and out, dummies, the servant, the timer."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.timeshare.office import OfficeError, RegistrationOffice
from scheduler.timeshare.tables import TableSlot, WorkstationTable
from workloads.wire.timeshare_table import dispatch_at


def _table(slots, round_s=10.0, ws="ws1") -> WorkstationTable:
    out, at = [], 0.0
    for process, par, seq in slots:
        out.append(TableSlot(process, at, par, seq))
        at += par + seq
    return WorkstationTable(ws, round_s, tuple(out))


def _office(*processes: str) -> RegistrationOffice:
    office = RegistrationOffice("ws1")
    for p in processes:
        office.check_in(p)
    return office


def test_check_in_and_out_keep_the_list_in_order():
    office = _office("J1", "J2", "J6")
    assert office.registered == ("J1", "J2", "J6")
    office.check_out("J2")
    assert office.registered == ("J1", "J6")
    office.check_in("J7")
    assert office.registered == ("J1", "J6", "J7")
    for p in ("J1", "J6", "J7"):
        office.check_out(p)
    assert office.registered == ()


def test_double_check_in_and_unknown_check_out_are_one_line():
    office = _office("J1")
    with pytest.raises(OfficeError, match="ws1: check in: J1 is already registered"):
        office.check_in("J1")
    with pytest.raises(OfficeError, match=r"ws1: check out: J9 is not registered \(registered: J1\)"):
        office.check_out("J9")


def test_a_table_naming_an_unknown_process_is_one_line():
    office = _office("J1", "J2")
    with pytest.raises(OfficeError, match=r"^ws1: table names unknown process J6 \(registered: J1, J2\)$"):
        office.follow(_table([("J1", 3.0, 0.0), ("J2", 2.0, 0.0), ("J6", 3.0, 2.0)]))


def test_dummy_nodes_point_at_nothing_and_hold_sequential_time():
    office = _office("J1")
    office.add_dummy(2.0)
    order = office.dispatch_order()
    assert [(n.process, n.parallel_s, n.sequential_s) for n in order] == [("J1", 0.0, 0.0), (None, 0.0, 2.0)]


def test_the_servant_follows_the_table_round_after_round():
    office = _office("J1", "J2", "J6")
    office.follow(_table([("J1", 3.0, 0.0), ("J2", 2.0, 0.0), ("J6", 3.0, 0.0), (None, 0.0, 2.0)]))
    assert [n.process for n in office.dispatch_order()] == ["J1", "J2", "J6", None]
    seen = []
    for t in (0.0, 2.9, 3.0, 5.5, 7.9, 8.0, 9.99, 10.0, 13.0, 38.5):
        d = office.advance(t)
        seen.append((d.process, d.until_s))
    assert seen == [("J1", 3.0), ("J1", 3.0), ("J2", 5.0), ("J6", 8.0), ("J6", 8.0), (None, 10.0),
                    (None, 10.0), ("J1", 13.0), ("J2", 15.0), (None, 40.0)]


def test_only_one_process_is_marked_out():
    office = _office("J1", "J2", "J3")
    office.follow(_table([("J1", 4.0, 1.0), ("J2", 4.0, 1.0)]))
    office.advance(1.0)
    assert office.marks() == {"J1": "out", "J2": "in", "J3": "in"}  # J3 is in no table: never out
    d = office.advance(4.5)  # J1's sequential part: only sequential work runs
    assert (d.process, d.slot_process, d.sequential) == (None, "J1", True)
    assert office.marks() == {"J1": "in", "J2": "in", "J3": "in"}
    office.advance(6.0)
    assert office.marks() == {"J1": "in", "J2": "out", "J3": "in"}


def test_check_out_of_the_dispatched_process_moves_the_servant_on():
    office = _office("J1", "J2")
    office.follow(_table([("J1", 5.0, 0.0), ("J2", 5.0, 0.0)]))
    office.advance(1.0)
    office.check_out("J1")
    assert office.marks() == {"J2": "in"}
    assert [n.process for n in office.dispatch_order()] == ["J2"]
    assert office.advance(2.0).process == "J2"
    assert office.advance(9.9).until_s == 10.0  # J2's slot counted from J1's start (0 s)
    shifted = _office("J1", "J2")
    shifted.follow(_table([("J1", 5.0, 0.0), ("J2", 5.0, 0.0)]))
    shifted.advance(1.0)
    shifted.check_out("J1", now_s=1.0)
    assert shifted.advance(1.0) == shifted.advance(5.9) and shifted.advance(5.9).until_s == 6.0  # from 1 s on


def test_the_timer_does_not_go_back_and_an_empty_office_runs_sequential_work():
    office = _office("J1")
    office.follow(_table([("J1", 10.0, 0.0)]))
    office.advance(5.0)
    with pytest.raises(OfficeError, match="cannot go back"):
        office.advance(4.0)
    empty = RegistrationOffice("ws2")
    d = empty.advance(3.0)
    assert d.process is None and d.sequential


def test_a_table_for_another_workstation_is_refused():
    office = _office("J1")
    with pytest.raises(OfficeError, match="ws1: given the table of ws9"):
        office.follow(_table([("J1", 10.0, 0.0)], ws="ws9"))


# --- the servant, stepping, agrees with the table arithmetic from the table's start ---------------
# (the local job manager in each workstation dispatches by that arithmetic directly)

@st.composite
def tables(draw):
    n = draw(st.integers(1, 4))
    slots, offset = [], 0.0
    for i in range(n):
        dummy = draw(st.booleans()) and i > 0
        parallel = 0.0 if dummy else draw(st.floats(0.05, 2.0))
        sequential = draw(st.sampled_from([0.0, 0.1, 0.35]))
        if dummy and sequential == 0.0:
            sequential = 0.2
        slots.append(TableSlot(None if dummy else f"J{i}", offset, parallel, sequential))
        offset += parallel + sequential
    return WorkstationTable("ws1", offset, tuple(slots))


@settings(max_examples=60, deadline=None)
@given(table=tables(), anchor=st.floats(-5.0, 5.0), steps=st.lists(st.floats(0.0, 1.3), min_size=1, max_size=25))
def test_the_servant_stepping_agrees_with_dispatch_from_the_tables_start(table, anchor, steps):
    office = RegistrationOffice("ws1")
    for p in table.processes:
        office.check_in(p)
    office.follow(table, now_s=anchor)
    wire = [(s.process, s.parallel_s, s.sequential_s) for s in table.slots]
    offsets = [s.offset_s + d for s in table.slots for d in (0.0, s.parallel_s)] + [table.round_s]
    now = anchor
    for step in steps:
        now += step
        if min(abs((now - anchor) % table.round_s - b) for b in offsets) < 1e-6:
            continue  # at a boundary the two sum the widths in a different order: either answer is right
        d = office.advance(now)
        _, job, sequential, start_s, until_s = dispatch_at(wire, table.round_s, anchor, now)
        assert (job, sequential) == (d.slot_process, d.sequential)
        assert until_s == pytest.approx(d.until_s, abs=1e-6)
        assert start_s == pytest.approx(d.slot_start_s, abs=1e-6)
