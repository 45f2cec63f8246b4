"""The time-sharing simulator against Zhou & Brent's relations: T_e = T_d/β, S_e = β S_d, skew, local policies."""
from __future__ import annotations

import math

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from scheduler.jobs import Outcome
from scheduler.model import DemandModel, Job, SevcikModel
from scheduler.timeshare.simulate import (SEQUENTIAL, Clock, LocalPolicy, TimeshareSetup, effective_speedup,
                                          dedicated_s, simulate_timeshare)
from scheduler.timeshare.slots import Distribution, SlotError
from scheduler.timeshare.tables import JobShare, Resync, ResyncPlan, build_tables

WS = ("ws1", "ws2", "ws3", "ws4", "ws5")


def fig3_jobs() -> list[JobShare]:
    """Fig. 3's shapes with the β of tests/unit/scheduler/test_scheduler_timeshare_tables.py (the figure gives none)."""
    return [JobShare("J1", ("ws1", "ws2"), 0.3), JobShare("J2", ("ws1", "ws2"), 0.2),
            JobShare("J3", ("ws3", "ws4", "ws5"), 0.25), JobShare("J4", ("ws3", "ws4"), 0.25),
            JobShare("J5", ("ws5",), 0.5), JobShare("J6", ("ws1", "ws2", "ws3", "ws4"), 0.3)]


PERFECT_STRICT = TimeshareSetup(policy=LocalPolicy.DEDICATED, resync=ResyncPlan(Resync.STRICT))


def stretched_finish_s(work_s: float, offset_s: float, parallel_s: float, round_s: float) -> float:
    """The dedicated run stretched by the slots: work goes on only in [offset, offset + Δt_p) of each round."""
    full = math.ceil(work_s / parallel_s - 1e-12) - 1
    return full * round_s + offset_s + (work_s - full * parallel_s)


@pytest.mark.parametrize("beta", [0.25, 0.5, 0.75])
def test_effective_speedup_is_beta_times_dedicated(beta):
    model = SevcikModel(W=400.0, alpha=2.0, beta=0.5)   # S_d(4) = 402.5 / 104 by hand-checkable T(p)
    p, round_s = 4, 1.0
    ws = tuple(f"ws{i}" for i in range(1, p + 1))
    tables = build_tables([JobShare("J", ws, beta)], ws, round_s, Distribution.PROPORTIONAL)
    result = simulate_timeshare(tables, [Job("J", 0.0, model)], PERFECT_STRICT)
    (record,) = result.jobs
    s_d = model.T(1) / model.T(p)
    s_e = effective_speedup(record, model.T(1))
    # T_e = T_d/β up to the last round's unused part, at most (1-β) ΔT here: within 1 % for a 100 s job.
    assert s_e == pytest.approx(beta * s_d, rel=0.01)
    assert model.T(p) / beta - (1 - beta) * round_s - 1e-9 <= record.response_s <= model.T(p) / beta + 1e-9


def test_strict_gang_with_perfect_clocks_is_the_dedicated_run_stretched():
    tables = build_tables(fig3_jobs(), WS, 10.0, Distribution.PROPORTIONAL)
    jobs = [Job(j.job, 0.0, DemandModel(t1=37.0 * len(j.workstations))) for j in fig3_jobs()]
    result = simulate_timeshare(tables, jobs, PERFECT_STRICT)
    for share, record in zip(fig3_jobs(), result.jobs):
        slot = next(s for s in tables[share.workstations[0]].slots if s.process == share.job)
        assert record.finish_s == pytest.approx(stretched_finish_s(37.0, slot.offset_s, slot.parallel_s, 10.0))
        assert record.start_s == pytest.approx(slot.offset_s)
    # and the same with no resync at all: perfect clocks need none
    loose = simulate_timeshare(tables, jobs, TimeshareSetup(resync=ResyncPlan(Resync.NONE)))
    assert [r.finish_s for r in loose.jobs] == pytest.approx([r.finish_s for r in result.jobs])


def test_fig3_timelines_follow_the_tables():
    tables = build_tables(fig3_jobs(), WS, 10.0, Distribution.PROPORTIONAL)
    jobs = [Job(j.job, 0.0, DemandModel(t1=100.0 * len(j.workstations))) for j in fig3_jobs()]
    result = simulate_timeshare(tables, jobs, TimeshareSetup(horizon_s=20.0))
    first_round = [(s.process, s.t0_s, s.t1_s) for s in result.timelines["ws5"] if s.t0_s < 10.0]
    assert first_round == [("J3", 0.0, pytest.approx(2.5)), (SEQUENTIAL, pytest.approx(2.5), pytest.approx(3.125)),
                           ("J5", pytest.approx(3.125), pytest.approx(8.125)),
                           (SEQUENTIAL, pytest.approx(8.125), pytest.approx(10.0))]
    for w in WS:  # every round the same, until the horizon
        second = [(s.process, s.t0_s - 10.0, s.t1_s - 10.0) for s in result.timelines[w] if s.t0_s >= 10.0 - 1e-9]
        first = [(s.process, s.t0_s, s.t1_s) for s in result.timelines[w] if s.t0_s < 10.0 - 1e-9]
        assert [x[0] for x in second] == [x[0] for x in first]
        assert [x[1] for x in second] == pytest.approx([x[1] for x in first])


def _two_drifting(resync: ResyncPlan, policy=LocalPolicy.DEDICATED, horizon_s=400.0):
    ws = ("ws1", "ws2")
    tables = build_tables([JobShare("J", ws, 0.5)], ws, 1.0, Distribution.PROPORTIONAL)
    setup = TimeshareSetup(policy=policy, resync=resync, horizon_s=horizon_s,
                           clocks={"ws1": Clock(drift=+1e-3), "ws2": Clock(drift=-1e-3)})
    return simulate_timeshare(tables, [Job("J", 0.0, DemandModel(t1=200.0))], setup)


def test_skew_grows_without_resync_and_stays_bounded_with_it():
    none = _two_drifting(ResyncPlan(Resync.NONE))
    late = [s.skew_s for s in none.skew if s.t_s >= 150.0]
    assert late and late[-1] > 0.29  # 2e-3 * t: 0.3 s at 150 s
    skews = [s.skew_s for s in none.skew]
    assert all(b >= a - 1e-12 for a, b in zip(skews, skews[1:]))  # grows, never corrected
    every_round = _two_drifting(ResyncPlan(Resync.LOOSE, 1))
    assert max(s.skew_s for s in every_round.skew) <= 2e-3 * 1.0 + 1e-9
    every_5 = _two_drifting(ResyncPlan(Resync.LOOSE, 5))
    assert 2e-3 * 4 - 1e-9 <= max(s.skew_s for s in every_5.skew) <= 2e-3 * 5 + 1e-9
    # the skew costs the job: its processes overlap less and less, and spin the rest
    assert every_round.jobs[0].finish_s < every_5.jobs[0].finish_s < (none.jobs[0].finish_s if none.jobs[0].status == Outcome.DONE else math.inf)
    assert sum(none.spin_s.values()) > sum(every_round.spin_s.values())


def test_implicit_shares_the_slot_with_owners_and_proper_share_makes_it_up():
    # one job, β = 0.25 on one workstation with one CPU-bound owner; ΔT = 10 s, proportional:
    # the integrated slot is the whole round (eq. 14 with Σβ = 0.25).
    tables = build_tables([JobShare("J", ("ws1",), 0.25)], ("ws1",), 10.0, Distribution.PROPORTIONAL)
    jobs = [Job("J", 0.0, DemandModel(t1=25.0))]
    owners = {"ws1": 1}
    dedicated = simulate_timeshare(tables, jobs, TimeshareSetup(policy=LocalPolicy.DEDICATED, owners=owners))
    implicit = simulate_timeshare(tables, jobs, TimeshareSetup(policy=LocalPolicy.IMPLICIT, owners=owners))
    proper = simulate_timeshare(tables, jobs, TimeshareSetup(policy=LocalPolicy.PROPER_SHARE, owners=owners))
    # dedicated: 2.5 s a round, 10 rounds -> 92.5 s; implicit: half of 2.5 s a round -> 20 rounds -> 192.5 s;
    # proper share: half the CPU until 2.5 s are had, at 5 s into each round -> 90 + 5 = 95 s.
    assert dedicated.jobs[0].finish_s == pytest.approx(92.5)
    assert implicit.jobs[0].finish_s == pytest.approx(192.5)
    assert proper.jobs[0].finish_s == pytest.approx(95.0)
    # the owners get the rest of the CPU: 10 s a round less the job's 2.5 s under proper share
    assert proper.owner_cpu_s["ws1"] == pytest.approx(95.0 - 25.0)
    assert dedicated.owner_cpu_s["ws1"] == pytest.approx(92.5 - 25.0)


def test_proper_share_waits_politely_under_skew():
    # with no resync, the dedicated job spins while its partner is out of step; proper share does not
    dedicated = _two_drifting(ResyncPlan(Resync.NONE), LocalPolicy.DEDICATED, horizon_s=300.0)
    proper = _two_drifting(ResyncPlan(Resync.NONE), LocalPolicy.PROPER_SHARE, horizon_s=300.0)
    assert sum(proper.spin_s.values()) == 0.0 < sum(dedicated.spin_s.values())
    assert proper.jobs[0].finish_s < (dedicated.jobs[0].finish_s if dedicated.jobs[0].status == Outcome.DONE else math.inf)


def test_a_job_arriving_late_runs_in_its_slots_from_then_on():
    # ΔT = 4 s, Δt_p = 2 s at the start of each round; arriving at 5 s it runs 5-6 s, then 8-9 s.
    tables = build_tables([JobShare("J", ("ws1",), 0.5)], ("ws1",), 4.0, Distribution.PROPORTIONAL)
    result = simulate_timeshare(tables, [Job("J", 5.0, DemandModel(t1=2.0))], PERFECT_STRICT)
    assert result.jobs[0].start_s == pytest.approx(5.0) and result.jobs[0].finish_s == pytest.approx(9.0)
    assert result.jobs[0].response_s == pytest.approx(4.0)
    assert [(s.process, s.t0_s, s.t1_s) for s in result.timelines["ws1"]] == [
        (SEQUENTIAL, 0.0, 5.0), ("J", 5.0, 6.0), (SEQUENTIAL, 6.0, 8.0), ("J", 8.0, pytest.approx(9.0))]


def test_a_table_naming_an_unknown_job_is_one_line():
    tables = build_tables([JobShare("J", ("ws1",), 0.5)], ("ws1",), 4.0)
    with pytest.raises(SlotError, match=r"^ws1: table names unknown process J \(jobs: K\)$"):
        simulate_timeshare(tables, [Job("K", 0.0, DemandModel(t1=2.0))], TimeshareSetup())
    with pytest.raises(SlotError, match="drift: must be"):
        Clock(drift=-2.0)


@example(shapes=[({"ws1"}, 0.25, 1.0, 0.0), ({"ws3"}, 0.05078125, 5.0, 0.0)], policy=LocalPolicy.DEDICATED,
         resync=ResyncPlan(Resync.LOOSE, 3), drifts=[0.0, 0.0, 0.001953125])  # a fast clock set back
@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sets(st.sampled_from(("ws1", "ws2", "ws3")), min_size=1),
                          st.floats(0.05, 0.3), st.floats(1.0, 20.0), st.floats(0.0, 30.0)), min_size=1, max_size=4),
       st.sampled_from(list(LocalPolicy)), st.sampled_from([ResyncPlan(Resync.NONE), ResyncPlan(Resync.LOOSE, 3),
                                                            ResyncPlan(Resync.STRICT)]),
       st.lists(st.floats(-2e-3, 2e-3), min_size=3, max_size=3))
def test_timelines_tile_time_and_jobs_get_their_work_and_no_more_than_their_share(shapes, policy, resync, drifts):
    ws = ("ws1", "ws2", "ws3")
    shares = [JobShare(f"J{i}", tuple(sorted(hosts)), beta) for i, (hosts, beta, _, _) in enumerate(shapes)]
    try:
        tables = build_tables(shares, ws, 2.0, Distribution.PROPORTIONAL)
    except SlotError:
        assume(False)  # overfull, or no aligned offset: the table tests cover those errors
    jobs = [Job(f"J{i}", arrival, DemandModel(t1=work * len(hosts))) for i, (hosts, _, work, arrival) in enumerate(shapes)]
    setup = TimeshareSetup(policy=policy, resync=resync, horizon_s=600.0,
                           clocks={w: Clock(drift=d) for w, d in zip(ws, drifts)})
    result = simulate_timeshare(tables, jobs, setup)
    for w, segments in result.timelines.items():
        assert segments[0].t0_s == 0.0 and segments[-1].t1_s == pytest.approx(result.end_s)
        assert all(a.t1_s == pytest.approx(b.t0_s) and a.t0_s < a.t1_s for a, b in zip(segments, segments[1:]))
    for share, record in zip(shares, result.jobs):
        if record.status != Outcome.DONE:
            continue
        assert record.start_s >= record.arrival_s - 1e-9
        for w in share.workstations:
            held_s = sum(min(s.t1_s, record.finish_s) - max(s.t0_s, record.arrival_s)
                         for s in result.timelines[w] if s.process == share.job and s.t1_s > record.arrival_s)
            assert held_s >= dedicated_s(record) - 1e-6  # no owners: it ran the whole of its work
        # it cannot go faster than its share of the rounds. Clocks up to 0.2% fast give a little
        # more: more rounds fit, and a resync that sets a fast clock back makes its workstation
        # live again what it had run ahead, up to 0.2% of the time, all of it in the job's slot
        # when the slot straddles the resync (hypothesis found a slot of 0.1016 s getting 0.1131)
        elapsed = record.finish_s - record.arrival_s
        rounds = math.ceil(elapsed * 1.002 / 2.0) + 1
        assert dedicated_s(record) <= rounds * share.beta * 2.0 + 0.002 * elapsed + 1e-6


def test_an_owner_ready_part_of_the_time_takes_its_mean_share():
    from scheduler.timeshare.simulate import expected_share

    assert expected_share(1, 1.0) == 0.5 and expected_share(3, 1.0) == 0.25  # CPU-bound: 1/(1+n)
    assert expected_share(1, 0.25) == pytest.approx(0.75 + 0.25 / 2)
    assert expected_share(2, 0.5) == pytest.approx(0.25 + 0.5 / 2 + 0.25 / 3)
    assert expected_share(0, 0.3) == 1.0
