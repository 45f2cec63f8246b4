"""The global manager's tables: Figs. 3 and 4 of Zhou & Brent, the spread of ΔT_s, the resync plans."""
from __future__ import annotations

import pytest

from scheduler.timeshare.slots import Distribution, SlotError
from scheduler.timeshare.tables import (JobShare, Resync, ResyncPlan, TableSlot, WorkstationTable,
                                        build_tables)

WS = ("ws1", "ws2", "ws3", "ws4", "ws5")


def fig3_jobs() -> list[JobShare]:
    """Fig. 3's shapes: J1, J2 on processors 1-2; J3 on 3-5; J4 on 3-4; J5 on 5; J6 on 1-4.

    The figure gives no numbers; these β make every workstation but ws5 as busy (0.8).
    """
    return [JobShare("J1", ("ws1", "ws2"), 0.3), JobShare("J2", ("ws1", "ws2"), 0.2),
            JobShare("J3", ("ws3", "ws4", "ws5"), 0.25), JobShare("J4", ("ws3", "ws4"), 0.25),
            JobShare("J5", ("ws5",), 0.5), JobShare("J6", ("ws1", "ws2", "ws3", "ws4"), 0.3)]


def test_fig3_gives_fig4s_three_tables():
    tables = build_tables(fig3_jobs(), WS, 10.0, Distribution.PROPORTIONAL)
    assert tables["ws1"].processes == tables["ws2"].processes == ("J1", "J2", "J6")
    assert tables["ws3"].processes == tables["ws4"].processes == ("J3", "J4", "J6")
    assert tables["ws5"].processes == ("J3", "J5")
    assert tables["ws1"].slots == tables["ws2"].slots and tables["ws3"].slots == tables["ws4"].slots
    assert len({tables[w].slots for w in WS}) == 3


def test_fig3_coschedules_each_job_at_one_offset():
    tables = build_tables(fig3_jobs(), WS, 10.0, Distribution.PROPORTIONAL)
    for job in fig3_jobs():
        slots = [s for w in job.workstations for s in tables[w].slots if s.process == job.job]
        assert len(slots) == len(job.workstations)
        assert len({s.offset_s for s in slots}) == 1, job.job
        assert all(s.parallel_s == pytest.approx(job.beta * 10.0) for s in slots)


def test_proportional_spread_is_eq_14_on_the_busiest_workstation():
    # ws1: Σβ = 0.8, so Δt = β/0.8 * 10 s: 3.75, 2.5, 3.75 (by hand), nothing left over.
    tables = build_tables(fig3_jobs(), WS, 10.0, Distribution.PROPORTIONAL)
    assert [s.width_s for s in tables["ws1"].slots] == pytest.approx([3.75, 2.5, 3.75])
    assert [s.offset_s for s in tables["ws1"].slots] == pytest.approx([0.0, 3.75, 6.25])
    # ws5 (Σβ = 0.75) keeps the busiest one's spread and ends on a dummy: J3 3.125, J5 6.25, dummy 0.625.
    assert [(s.process, s.width_s) for s in tables["ws5"].slots] == [
        ("J3", pytest.approx(3.125)), ("J5", pytest.approx(6.25)), (None, pytest.approx(0.625))]


def test_uniform_spread_is_eq_10():
    # ΔT_s = (1 - 0.8) * 10 = 2 s over n_max = 3 slots: 2/3 s after each parallel slot.
    tables = build_tables(fig3_jobs(), WS, 10.0, Distribution.UNIFORM)
    assert [s.sequential_s for s in tables["ws1"].slots] == pytest.approx([2 / 3] * 3)
    assert sum(s.width_s for s in tables["ws5"].slots) == pytest.approx(10.0)


def test_a_gap_before_a_job_is_a_dummy_slot():
    jobs = [JobShare("A", ("ws1",), 0.5), JobShare("B", ("ws1", "ws2"), 0.25)]
    tables = build_tables(jobs, ("ws1", "ws2"), 8.0, Distribution.UNIFORM)
    # busiest Σβ = 0.75, n_max = 2: 1 s of sequential time after each slot; B starts at 5 s on both.
    assert [(s.process, s.offset_s, s.parallel_s, s.sequential_s) for s in tables["ws2"].slots] == [
        (None, 0.0, 0.0, 5.0), ("B", 5.0, 2.0, 1.0)]


def test_overfull_workstations_and_unknown_names_are_one_line():
    with pytest.raises(SlotError, match=r"^ws1: jobs \['A', 'B'\] ask for β summing to 1.2 > 1$"):
        build_tables([JobShare("A", ("ws1",), 0.6), JobShare("B", ("ws1",), 0.6)], ("ws1",), 10.0)
    with pytest.raises(SlotError, match=r"job A: workstations: unknown \['ws9'\]"):
        build_tables([JobShare("A", ("ws9",), 0.5)], ("ws1",), 10.0)
    with pytest.raises(SlotError, match="job A: beta: must be in"):
        JobShare("A", ("ws1",), 1.5)
    with pytest.raises(SlotError, match="longer than the bound"):
        build_tables([JobShare("A", ("ws1",), 0.5)], ("ws1",), 30.0, max_round_s=20.0)


def test_a_job_fills_an_earlier_gap_or_else_is_an_error():
    # H fills ws4, so no sequential time is spread: slots are β ΔT. A: ws1 0-4; F: ws3 0-5; G: ws2+ws3 5-7.
    ws = ("ws1", "ws2", "ws3", "ws4")
    base = [JobShare("H", ("ws4",), 1.0), JobShare("A", ("ws1",), 0.4), JobShare("F", ("ws3",), 0.5),
            JobShare("G", ("ws2", "ws3"), 0.2)]
    # E (ws2, 0.3) fits the gap before G at 0-3
    tables = build_tables([*base, JobShare("E", ("ws2",), 0.3)], ws, 10.0)
    assert [(s.process, s.offset_s) for s in tables["ws2"].slots] == [("E", 0.0), (None, 3.0), ("G", 5.0),
                                                                      (None, 7.0)]
    # D (ws1+ws2, 0.35) would need 3.5 s free on both at once: [4, 5) and [7, 10) are too short
    with pytest.raises(SlotError, match="job D: does not fit in the round: no 3.5 s free at one offset on all of ws1, ws2"):
        build_tables([*base, JobShare("D", ("ws1", "ws2"), 0.35)], ws, 10.0)


def test_a_hand_made_table_must_fill_its_round():
    with pytest.raises(SlotError, match="widths add up to 9 s, not the round of 10 s"):
        WorkstationTable("ws1", 10.0, (TableSlot("A", 0.0, 4.0, 5.0),))


def test_resync_plans_as_data():
    tables = build_tables([JobShare("A", ("ws1",), 0.5)], ("ws1",), 2.0, Distribution.PROPORTIONAL)
    assert ResyncPlan(Resync.NONE).sync_times_s(tables, 10.0) == ()
    assert ResyncPlan(Resync.LOOSE, 2).sync_times_s(tables, 10.0) == (4.0, 8.0)
    assert ResyncPlan(Resync.LOOSE, 1).sync_times_s(tables, 5.0) == (2.0, 4.0)
    # strict: every slot boundary (A's one slot of 1 s, then its Δt_s of 1 s)
    assert ResyncPlan(Resync.STRICT).sync_times_s(tables, 4.0) == (1.0, 2.0, 3.0, 4.0)
    with pytest.raises(SlotError, match="every_rounds: must be >= 1"):
        ResyncPlan(Resync.LOOSE, 0)
