"""The global manager replans at round boundaries: short jobs get a sustained β at once, large ones what is left."""
from __future__ import annotations

import pytest

from scheduler.model import Job, SevcikModel
from scheduler.timeshare.allocation import AllocationRule, Demand
from scheduler.timeshare.manager import GlobalManager
from scheduler.timeshare.simulate import TimeshareSetup, simulate_timeshare
from scheduler.timeshare.slots import SlotError
from scheduler.timeshare.tables import Resync, ResyncPlan

RULE = AllocationRule(gamma=1.0, short_beta=0.5, short_t1_s=50.0)


def _run(manager: GlobalManager, jobs: list[Job]):
    tables = manager.plan(tuple(str(j.id) for j in jobs if j.arrival == 0.0), {})
    return simulate_timeshare(tables, jobs, TimeshareSetup(resync=ResyncPlan(Resync.LOOSE, 1), horizon_s=5000.0),
                              replan=manager.plan)


def test_a_short_job_gets_its_sustained_share_beside_a_large_one():
    # L: T(p) = 1000/p on both; S: T(p) = 20/p, S_d(2) = 2 >= γ/β = 2, so both at β = 0.5.
    # 0-10 s L alone (β = 1); S arrives at 5 s and is planned in at 10 s: L [0, 5), S [5, 10) of each round;
    # S needs 10 s at 5 s a round: 15-20 and 25-30 s. From 30 s L alone again: 500 - 10 - 10 = 480 s more.
    demands = {"L": Demand("L", SevcikModel(W=1000.0)), "S": Demand("S", SevcikModel(W=20.0))}
    manager = GlobalManager(("a", "b"), demands, RULE, round_s=10.0)
    result = _run(manager, [Job("L", 0.0, demands["L"].model), Job("S", 5.0, demands["S"].model)])
    by_job = {r.id: r for r in result.jobs}
    assert by_job["S"].start_s == pytest.approx(15.0) and by_job["S"].finish_s == pytest.approx(30.0)
    assert by_job["L"].finish_s == pytest.approx(510.0)
    assert by_job["L"].max_procs == by_job["S"].max_procs == 2


def test_a_job_that_does_not_fit_waits_for_the_next_plan():
    # one workstation, sustained β = 0.6: S1 and S2 do not fit together; S2 waits for S1's end (6 s) and the
    # next round boundary (10 s), where the manager replans.
    rule = AllocationRule(gamma=0.5, short_beta=0.6, short_t1_s=50.0)
    demands = {k: Demand(k, SevcikModel(W=6.0)) for k in ("S1", "S2")}
    manager = GlobalManager(("a",), demands, rule, round_s=10.0)
    result = _run(manager, [Job(k, 0.0, d.model) for k, d in demands.items()])
    by_job = {r.id: r for r in result.jobs}
    assert by_job["S1"].finish_s == pytest.approx(6.0)
    assert by_job["S2"].start_s == pytest.approx(10.0) and by_job["S2"].finish_s == pytest.approx(16.0)
    assert [a.share.job for a in manager.admit(("S1", "S2"), {})] == ["S1"]


def test_running_jobs_keep_their_workstations_and_unknown_jobs_are_refused():
    demands = {"S": Demand("S", SevcikModel(W=20.0)), "T": Demand("T", SevcikModel(W=20.0))}
    manager = GlobalManager(("a", "b", "c"), demands, RULE, round_s=10.0)
    (s,) = manager.admit(("S",), {})
    assert s.share.workstations == ("a", "b")
    both = {a.share.job: a.share.workstations for a in manager.admit(("S", "T"), {"S": ("b", "c")})}
    assert both["S"] == ("b", "c") and both["T"] == ("a", "b")
    with pytest.raises(SlotError, match="job X: the manager has no demand for it"):
        manager.admit(("X",), {})
