"""FCFS, EASY and conservative backfilling on hand-worked schedules: where backfilling must
happen, and where it must not.

Every job is rigid with RuntimeModel(run time): it runs exactly that long. (id, arrival, size,
run time, requested walltime) per job; the expected start times are worked in the comments.
"""
from __future__ import annotations

import pytest

from scheduler.engine import simulate
from scheduler.model import Job, RuntimeModel


def stream(*rows):
    return [Job(id, arrival, RuntimeModel(run), size=size, walltime=wall) for id, arrival, size, run, wall in rows]


def starts(jobs, policy, P):
    return {r.id: r.start for r in simulate(jobs, policy, P).jobs}


# P=4. A (3 procs, 10 s, asks 10) starts at 0 on 3; 1 left.
# B (4 procs, asks 5) at 1: the head, blocked. Its reservation: A ends at 0 + 10 = 10, then 1 + 3 = 4 >= 4
#   free: shadow 10, extra 4 - 4 = 0.
# C (1 proc, runs 8, asks `c_wall`) at 2: fits now (1 free).
AROUND_A_WIDE_HEAD = (("A", 0.0, 3, 10.0, 10.0), ("B", 1.0, 4, 5.0, 5.0))


def test_easy_backfills_a_job_that_is_back_before_the_head_needs_its_processor():
    # C asks 8: 2 + 8 = 10 <= shadow 10, so it starts at 2 (and ends at 10, as A does).
    # D (1 proc, asks 2) at 3: nothing free; B takes all 4 from 10 to 15, so D starts at 15.
    jobs = stream(*AROUND_A_WIDE_HEAD, ("C", 2.0, 1, 8.0, 8.0), ("D", 3.0, 1, 2.0, 2.0))
    assert starts(jobs, "EASY", 4) == {"A": 0.0, "B": 10.0, "C": 2.0, "D": 15.0}
    # FCFS: C and D wait behind B, both start when it ends at 15.
    assert starts(jobs, "FCFS", 4) == {"A": 0.0, "B": 10.0, "C": 15.0, "D": 15.0}


def test_easy_does_not_backfill_a_job_whose_requested_time_would_delay_the_head():
    # C asks 9 (and would really end at 10): 2 + 9 = 11 > 10 and extra is 0, so it waits.
    # The policy plans with the requested time, not the run time it cannot know.
    # B runs 10-15 on all 4; C then starts at 15.
    jobs = stream(*AROUND_A_WIDE_HEAD, ("C", 2.0, 1, 8.0, 9.0))
    assert starts(jobs, "EASY", 4) == {"A": 0.0, "B": 10.0, "C": 15.0}


def test_easy_backfills_a_long_job_onto_processors_the_head_does_not_need():
    # P=4. A (2 procs, asks 10) runs 0-10. B (3 procs) at 1 is blocked: 2 free; at A's end 4 >= 3:
    # shadow 10, extra 4 - 3 = 1.
    # C (1 proc, asks 100) at 2: 2 + 100 > 10, but 1 <= extra 1: backfilled at 2 (extra now 0).
    # D (1 proc, asks 100) at 3: 1 free; reservation again: 1 free + 2 at 10 = 3 >= 3, extra 0;
    #   3 + 100 > 10, so D waits. B starts at 10 (A's 2 + the last 1), ends at 15: D starts at 15.
    jobs = stream(("A", 0.0, 2, 10.0, 10.0), ("B", 1.0, 3, 5.0, 5.0), ("C", 2.0, 1, 100.0, 100.0),
                  ("D", 3.0, 1, 100.0, 100.0))
    assert starts(jobs, "EASY", 4) == {"A": 0.0, "B": 10.0, "C": 2.0, "D": 15.0}


def test_easy_keeps_the_head_reservation_when_a_later_job_fits_but_runs_past_it():
    # P=4. A (2 procs, asks 10) runs 0-10. B (4 procs) at 1: shadow 10, extra 0.
    # C (2 procs, asks 20) at 2 fits now but 2 + 20 > 10 and 2 > extra 0: not backfilled.
    # D (2 procs, asks 5) at 3: 3 + 5 = 8 <= 10: backfilled at 3 (ends 8).
    # B runs 10-14 (asks 4); C starts at 14.
    jobs = stream(("A", 0.0, 2, 10.0, 10.0), ("B", 1.0, 4, 4.0, 4.0), ("C", 2.0, 2, 20.0, 20.0),
                  ("D", 3.0, 2, 5.0, 5.0))
    assert starts(jobs, "EASY", 4) == {"A": 0.0, "B": 10.0, "C": 14.0, "D": 3.0}


def test_easy_moves_the_reservation_earlier_when_a_job_ends_before_its_walltime():
    # P=4. A (4 procs, runs 4, asks 20) runs 0-4. B (2 procs, asks 10) at 1 is the head: shadow 20.
    # A really ends at 4: B starts at 4 (FCFS part of the call), and C (2 procs, asks 30) at 2, which
    # could not have been backfilled before (nothing free), starts with it at 4.
    jobs = stream(("A", 0.0, 4, 4.0, 20.0), ("B", 1.0, 2, 10.0, 10.0), ("C", 2.0, 2, 30.0, 30.0))
    assert starts(jobs, "EASY", 4) == {"A": 0.0, "B": 4.0, "C": 4.0}


def test_a_job_without_requested_time_is_planned_at_its_run_time():
    # As test 1, but C asks nothing: its estimate is its run time 8 (Batsim's and AccaSim's rule),
    # 2 + 8 = 10 <= 10: backfilled at 2. With run time 9 it is not: 11 > 10, waits for B's end at 15.
    assert starts(stream(*AROUND_A_WIDE_HEAD, ("C", 2.0, 1, 8.0, None)), "EASY", 4)["C"] == 2.0
    assert starts(stream(*AROUND_A_WIDE_HEAD, ("C", 2.0, 1, 9.0, None)), "EASY", 4)["C"] == 15.0


def test_both_backfill_a_short_job_and_hold_back_one_that_runs_into_the_heads_reservation():
    # P=4. A (2 procs, asks 10) runs 0-10. B (4 procs, asks 10) at 1: blocked, shadow 10, extra 0.
    # C (2 procs, asks 10) at 2: reservation at B's end, 20 (B holds all 4 over 10-20).
    # D (2 procs, asks 15) at 3: 2 free now.
    # EASY only protects the head: 3 + 15 = 18 > 10 and extra 0: D waits. Then at 10 B starts, at 20
    #   C and D start together (2 + 2).
    # Conservative: D at 3 would run to 18 > 10, into B's reservation: no; at 20 with C: 2 + 2 <= 4: D
    #   is reserved at 20, the same as EASY here.
    # E (2 procs, asks 6) at 4: 4 + 6 = 10 <= 10: both backfill it at 4 (it ends at 10, as A).
    jobs = stream(("A", 0.0, 2, 10.0, 10.0), ("B", 1.0, 4, 10.0, 10.0), ("C", 2.0, 2, 10.0, 10.0),
                  ("D", 3.0, 2, 15.0, 15.0), ("E", 4.0, 2, 6.0, 6.0))
    expected = {"A": 0.0, "B": 10.0, "C": 20.0, "D": 20.0, "E": 4.0}
    assert starts(jobs, "EASY", 4) == expected
    assert starts(jobs, "EASY-CONSERVATIVE", 4) == expected


def test_easy_delays_the_second_queued_job_and_conservative_does_not():
    # P=4. A (3 procs, asks 10) runs 0-10: 1 free.
    # B (2 procs, asks 5) at 1: head, blocked: 1 free, +3 at 10 -> 4 >= 2: shadow 10, extra 2.
    # C (4 procs, asks 5) at 2: second in line.
    # D (1 proc, asks 100) at 3: 3 + 100 > 10, but 1 <= extra 2: EASY backfills it at 3. That delays C:
    #   B runs 10-15 on 2; C needs all 4 and D holds one until 103: C starts at 103.
    # Conservative: C is reserved at B's end, 15 (10-15: B holds 2 of 4; from 15: 4 free). D at 3 would
    #   hold 1 processor over 3-103, across C's 15-20: only 3 free then, C needs 4: no. D is reserved
    #   after C, at 20. So C starts at 15 and D at 20.
    jobs = stream(("A", 0.0, 3, 10.0, 10.0), ("B", 1.0, 2, 5.0, 5.0), ("C", 2.0, 4, 5.0, 5.0),
                  ("D", 3.0, 1, 100.0, 100.0))
    assert starts(jobs, "EASY", 4) == {"A": 0.0, "B": 10.0, "C": 103.0, "D": 3.0}
    assert starts(jobs, "EASY-CONSERVATIVE", 4) == {"A": 0.0, "B": 10.0, "C": 15.0, "D": 20.0}


def test_the_same_stream_as_pybatsims_easy_backfill():
    # The stream of tests/unit/experiments/test_experiments_batsim_pybatsim.py (whose fifth job, wider
    # than the machine, pybatsim rejects; left out here), where pybatsim's easyBackfill and
    # schedEasySjfBackfill start 1 at 1, 2 at 11, 3 at 3, 4 at 6, and schedFcfs 1, 11, 16, 16.
    # By hand: job 1 (2 procs, runs 10, asks 20) at 1. Job 2 (4 procs) at 2: shadow 1 + 20 = 21, extra 0.
    # Job 3 (1 proc, asks 5) at 3: 3 + 5 = 8 <= 21: starts at 3. Job 4 (2 procs, asks 6) at 3: 1 free, waits;
    # at 6 job 3 ends: 2 free, 6 + 6 = 12 <= 21: starts at 6. Job 1 ends at 11, job 4 at 10: job 2 at 11.
    jobs = stream((1, 1.0, 2, 10.0, 20.0), (2, 2.0, 4, 5.0, 10.0), (3, 3.0, 1, 3.0, 5.0), (4, 3.0, 2, 4.0, 6.0))
    assert starts(jobs, "EASY", 4) == {1: 1.0, 2: 11.0, 3: 3.0, 4: 6.0}
    assert starts(jobs, "FCFS", 4) == {1: 1.0, 2: 11.0, 3: 16.0, 4: 16.0}


@pytest.mark.parametrize("policy", ["FCFS", "EASY", "EASY-CONSERVATIVE"])
def test_jobs_that_all_fit_start_on_arrival_on_distinct_processors(policy):
    jobs = stream(("a", 0.0, 1, 5.0, None), ("b", 0.0, 2, 5.0, None), ("c", 1.0, 1, 5.0, None))
    result = simulate(jobs, policy, 4)
    assert {r.id: r.start for r in result.jobs} == {"a": 0.0, "b": 0.0, "c": 1.0}
    held = [set(r.allocations[0]) for r in result.jobs]
    assert set.union(*held) == {0, 1, 2, 3} and sum(map(len, held)) == 4
