"""Rigid jobs and requested walltimes: the state machine's rules, the kill at the walltime, the
records and Batsim columns they give, and a mixed stream under one policy.

Times are worked by hand in the comments (RuntimeModel: a job runs exactly its run time).
"""
from __future__ import annotations

import pytest

from scheduler.actions import Preempt, Start
from scheduler.engine import simulate
from scheduler.invariants import check_timeline
from scheduler.jobs import FinalState
from scheduler.model import Job, RuntimeModel, SevcikModel
from scheduler.policy import Policy
from scheduler.state_machine import PolicyError, SchedulerState, TrackedJob


def rigid(id, arrival, size, runtime, walltime=None):
    return Job(id, arrival, RuntimeModel(runtime), size=size, walltime=walltime)


class StartOnOne(Policy):
    """Starts every queued job on one processor: wrong for a rigid job of size > 1."""

    name = "ONE"

    def decide(self, snap):
        free = [p for p in range(snap.P) if snap.free_mask >> p & 1]
        return [Start(j.id, (p,)) for j, p in zip(snap.queue, free)]


class PreemptAll(Policy):
    """Starts the head on its size, then asks every running job to preempt at the next arrival."""

    name = "GRABBY"

    def decide(self, snap):
        if snap.running:
            return [Preempt(j.id) for j in snap.running.values()]
        return [Start(snap.queue[0].id, tuple(range(snap.queue[0].pmax)))]


def test_a_rigid_job_started_on_the_wrong_count_is_one_line_naming_rule_job_and_time():
    jobs = [rigid(1, 0.0, 1, 5.0), rigid(17, 2.0, 2, 5.0)]
    with pytest.raises(PolicyError) as err:
        simulate(jobs, StartOnOne(), 4)
    assert str(err.value) == ("rule 'rigid size': policy ONE started job 17 on 1 processors at t=2.0 s; "
                              "it asks for exactly 2")


def test_a_rigid_job_is_never_preempted():
    jobs = [rigid("a", 0.0, 2, 5.0), rigid("b", 1.5, 1, 1.0)]
    with pytest.raises(PolicyError, match=r"^rule 'rigid: no preemption': policy GRABBY asked job a to preempt "
                                          r"at t=1\.5 s; job a is rigid"):
        simulate(jobs, PreemptAll(), 4)


def test_the_state_machine_refuses_a_resize_of_a_rigid_job_whatever_its_status():
    state = SchedulerState(StartOnOne(), 4)
    job = TrackedJob("r", 0, 0.0, RuntimeModel(3.0), 4, size=2)
    state.admit(job)
    state.now = 4.25
    state.start(job, (0, 1))
    with pytest.raises(PolicyError, match=r"rule 'rigid: no resize': policy ONE resized job r to 4 processors "
                                          r"at t=4\.25 s"):
        state.resize(job, (0, 1, 2, 3), 4.25)


def test_a_policy_that_knows_no_rigid_jobs_breaks_the_rule_loudly():
    # RA, P=4: M (malleable, W=1) runs on all 4 from 0 to 0.25; R1 and R2 (rigid, 3 each) queue.
    # At 0.25 the queue holds 2, so RA's target is 4 // 2 = 2, and it gives R1 min(2, 3) = 2.
    jobs = [Job("M", 0.0, SevcikModel(1.0, 0.0, 0.0, 4)), rigid("R1", 0.1, 3, 1.0), rigid("R2", 0.1, 3, 1.0)]
    with pytest.raises(PolicyError, match=r"^rule 'rigid size': policy RA started job R1 on 2 processors "
                                          r"at t=0\.25 s; it asks for exactly 3$"):
        simulate(jobs, "RA", 4)


def test_a_rigid_job_wider_than_the_machine_is_refused_before_the_run():
    with pytest.raises(ValueError, match="job 9 asks for exactly 8 processors; the machine has P=4"):
        simulate([rigid(9, 0.0, 8, 1.0)], "FCFS", 4)


@pytest.mark.parametrize("field, value, words", [("size", 0, "size must be an integer >= 1"),
                                                 ("size", 2.0, "size must be an integer >= 1"),
                                                 ("walltime", 0.0, "walltime must be a finite time > 0"),
                                                 ("walltime", float("inf"), "walltime must be a finite time > 0")])
def test_bad_size_or_walltime_is_one_line_naming_the_field(field, value, words):
    with pytest.raises(ValueError, match=f"job 3: {words}"):
        Job(3, 0.0, RuntimeModel(1.0), **{field: value})


def test_a_job_that_outlives_its_walltime_is_killed_there():
    # P=2. A (2 procs, runs 10 s, asked 6 s) starts at 0 and is killed at 0 + 6 = 6.
    # B (1 proc, 3 s, asked 3 s) waits for A, starts at 6 and ends at 9 exactly at its walltime:
    # it completes (only running past the walltime kills). C (1 proc, 0 s) starts with B at 6, ends at 6.
    jobs = [rigid("A", 0.0, 2, 10.0, 6.0), rigid("B", 1.0, 1, 3.0, 3.0), rigid("C", 2.0, 1, 0.0)]
    result = simulate(jobs, "FCFS", 2)
    got = {r.id: (r.start, r.finish, r.final_state) for r in result.jobs}
    assert got == {"A": (0.0, 6.0, FinalState.COMPLETED_WALLTIME_REACHED),
                   "B": (6.0, 9.0, FinalState.COMPLETED_SUCCESSFULLY),
                   "C": (6.0, 6.0, FinalState.COMPLETED_SUCCESSFULLY)}
    assert check_timeline(result.timeline, 2, jobs=["A", "B", "C"], sizes={"A": 2, "B": 1, "C": 1},
                          walltimes={"A": 6.0, "B": 3.0}) == []
    columns = result.job_columns()
    assert columns["final_state"] == ["COMPLETED_WALLTIME_REACHED", "COMPLETED_SUCCESSFULLY", "COMPLETED_SUCCESSFULLY"]
    assert columns["success"] == [0, 1, 1]
    assert columns["requested_time"] == [6.0, 3.0, -1.0]
    assert columns["requested_number_of_resources"] == [2, 1, 1]


def test_the_walltime_kills_a_malleable_job_too_even_while_preempted():
    # Folding, P=2. M (W=20, pmax 2, 2 phases, asked 6 s) starts on both at 0: T(2) = 10 s.
    # N (W=1, pmax 1) arrives at 1: M is asked to fold, acks at its safe point x = 0.5 at t=5,
    # keeps 1 processor (T(1) = 20 s, 10 s of work left). The walltime kills it at 0 + 6 = 6.
    jobs = [Job("M", 0.0, SevcikModel(20.0, 0.0, 0.0, 2), phases=2, walltime=6.0),
            Job("N", 1.0, SevcikModel(1.0, 0.0, 0.0, 1))]
    result = simulate(jobs, "FOLDING", 2)
    m = next(r for r in result.jobs if r.id == "M")
    assert (m.start, m.finish, m.final_state) == (0.0, 6.0, FinalState.COMPLETED_WALLTIME_REACHED)
    assert check_timeline(result.timeline, 2, jobs=["M", "N"], walltimes={"M": 6.0}) == []


def test_the_invariants_catch_a_rigid_job_on_the_wrong_count_or_resized():
    from scheduler.jobs import EventKind
    from scheduler.results import TimelineEvent
    log = [TimelineEvent(0.0, 1, EventKind.START, (0, 1, 2)), TimelineEvent(1.0, 1, EventKind.RESIZE, (0, 1)),
           TimelineEvent(2.0, 1, EventKind.FINISH, (0, 1))]
    problems = check_timeline(log, 4, sizes={1: 2}, walltimes={1: 1.5})
    assert problems == ["t=0.000 job 1 rigid job started on 3 processors; it asks for exactly 2",
                        "t=1.000 job 1 resize of a rigid job",
                        "t=2.000 job 1 finished 2.000 s after its start, past its walltime 1.500 s"]


@pytest.mark.parametrize("policy", ["FCFS", "EASY", "EASY-CONSERVATIVE"])
def test_a_mixed_stream_runs_under_one_policy(policy):
    # P=4. M (malleable, W=8, pmax 4) gets its pmax, 4 processors: T(4) = 2 s, runs 0-2.
    # R (rigid 2, 3 s) arrives at 0.5 and waits; M2 (malleable, W=4, pmax 2: T(2) = 2 s) at 1 waits behind it.
    # At 2 both fit: R runs 2-5, M2 2-4. Same under all three (nothing to backfill).
    jobs = [Job("M", 0.0, SevcikModel(8.0, 0.0, 0.0, 4)), rigid("R", 0.5, 2, 3.0),
            Job("M2", 1.0, SevcikModel(4.0, 0.0, 0.0, 2))]
    result = simulate(jobs, policy, 4)
    assert {r.id: (r.start, r.finish, len(r.allocations[0])) for r in result.jobs} == {
        "M": (0.0, 2.0, 4), "R": (2.0, 5.0, 2), "M2": (2.0, 4.0, 2)}
    assert check_timeline(result.timeline, 4, {"M": 4, "R": 2, "M2": 2}, ["M", "R", "M2"], sizes={"R": 2}) == []


def test_progress_is_reported_while_a_long_stream_runs_and_at_its_end():
    calls = []
    jobs = [rigid(i, float(i), 1, 0.5) for i in range(9000)]
    simulate(jobs, "FCFS", 2, timeline=False, progress=lambda done, total: calls.append((done, total)))
    assert calls == [(4096, 9000), (8192, 9000), (9000, 9000)]
