"""FCFS, EASY and conservative backfilling on random rigid and mixed streams (hypothesis).

Checked from the timeline (scheduler.invariants): no processor held by two jobs, at most P
held, a rigid job on exactly its size and never preempted or resized, no job past its
walltime, every job finished. From the records: a rigid job runs its run time, or is killed
at its walltime exactly when it asks less. FCFS starts jobs in arrival order. EASY never
starts the head of its queue later than any reservation it gave it (the plan uses requested
walltimes, which the kill makes upper bounds, and exact run times for jobs that ask none).
"""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler.engine import simulate
from scheduler.invariants import check_timeline
from scheduler.jobs import FinalState
from scheduler.model import Job, RuntimeModel, SevcikModel
from scheduler.policies.easy import EASY
from scheduler.registry import get_policy

POLICIES = ["FCFS", "EASY", "EASY-CONSERVATIVE"]


@st.composite
def streams(draw, mixed: bool):
    P = draw(st.integers(1, 8))
    n = draw(st.integers(1, 16))
    t = 0.0
    jobs = []
    for i in range(n):
        t += draw(st.sampled_from([0.0, 0.0, 0.5, 1.0, 3.0, 7.5]))
        walltime = draw(st.none() | st.sampled_from([0.5, 2.0, 5.0, 10.0, 20.0]))
        if mixed and draw(st.booleans()):
            model = SevcikModel(draw(st.floats(0.5, 20)), draw(st.floats(0, 2)), 0.0, draw(st.none() | st.integers(1, 8)))
            jobs.append(Job(i, t, model, phases=draw(st.integers(1, 3)), walltime=walltime))
        else:
            run = draw(st.sampled_from([0.0, 1.0, 2.0, 4.5, 5.0, 12.0]))
            jobs.append(Job(i, t, RuntimeModel(run), size=draw(st.integers(1, P)), walltime=walltime))
    return P, jobs


def check_run(result, jobs, P):
    pmax = {j.id: j.size or (P if j.model.pmax is None else min(P, j.model.pmax)) for j in jobs}
    sizes = {j.id: j.size for j in jobs if j.size is not None}
    walltimes = {j.id: j.walltime for j in jobs if j.walltime is not None}
    assert check_timeline(result.timeline, P, pmax, [j.id for j in jobs], sizes, walltimes) == []
    spec = {j.id: j for j in jobs}
    for r in result.jobs:
        job = spec[r.id]
        assert r.submission <= r.start <= r.finish
        assert len(r.allocations) == 1  # started once, never resized
        if job.size is not None:
            run = job.model.runtime_s
            killed = job.walltime is not None and run > job.walltime
            assert r.final_state == (FinalState.COMPLETED_WALLTIME_REACHED if killed
                                     else FinalState.COMPLETED_SUCCESSFULLY)
            assert r.execution == pytest.approx(job.walltime if killed else run, abs=1e-9)


class RecordingEASY(EASY):
    """EASY itself, keeping every reservation it gives a head: (head id, shadow time)."""

    def __init__(self) -> None:
        super().__init__()
        self.reservations: list[tuple[object, float]] = []

    def reserve(self, snap, head, free, started):
        shadow, extra = super().reserve(snap, head, free, started)
        self.reservations.append((head.id, shadow))
        return shadow, extra


@pytest.mark.parametrize("name", POLICIES)
@pytest.mark.parametrize("mixed", [False, True], ids=["rigid", "mixed"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_invariants_on_random_streams(name, mixed, data):
    P, jobs = data.draw(streams(mixed))
    result = simulate(jobs, name, P)
    check_run(result, jobs, P)
    again = simulate(jobs, get_policy(name), P)
    assert again.timeline == result.timeline


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stream=streams(mixed=False))
def test_fcfs_starts_jobs_in_arrival_order(stream):
    P, jobs = stream
    result = simulate(jobs, "FCFS", P)
    by_arrival = sorted(result.jobs, key=lambda r: (r.submission, r.id))
    assert [r.start for r in by_arrival] == sorted(r.start for r in by_arrival)


@pytest.mark.parametrize("mixed", [False, True], ids=["rigid", "mixed"])
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_easy_never_starts_its_head_after_a_reservation_it_gave_it(mixed, data):
    P, jobs = data.draw(streams(mixed))
    policy = RecordingEASY()
    result = simulate(jobs, policy, P)
    start = {r.id: r.start for r in result.jobs}
    for head, shadow in policy.reservations:
        assert start[head] <= shadow + 1e-9, (head, shadow, start[head])

