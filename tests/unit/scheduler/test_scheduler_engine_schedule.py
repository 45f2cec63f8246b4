"""The engine's owner schedule: availability steps that re-pace the jobs computing there."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from scheduler.engine import simulate
from scheduler.model import Job, SevcikModel

LINEAR = SevcikModel(W=10.0, alpha=0.0, beta=0.0, pmax=2)


def one_job(phases: int = 10) -> list[Job]:
    return [Job(0, 0.0, LINEAR, phases, 0.0)]


def test_a_burst_delays_a_job_by_what_it_took():
    # 10 s of work on 2: 5 s; from 1 s to 3 s one member runs at half pace: 1 s lost
    (r,) = simulate(one_job(), "RA", 2, schedule=[[(1.0, 0.5), (3.0, 1.0)], []]).jobs
    assert r.finish == pytest.approx(6.0)


def test_a_coupled_job_pays_the_product_over_its_members():
    # 1-2 s: 0.5 (0.5 s lost); 2-2.5 s: 0.5 x 0.25 (0.4375 s lost); 2.5-3 s: 0.5 (0.25 s lost)
    sched = [[(1.0, 0.5), (3.0, 1.0)], [(2.0, 0.25), (2.5, 1.0)]]
    (r,) = simulate(one_job(), "RA", 2, schedule=sched).jobs
    assert r.finish == pytest.approx(6.1875)


def test_a_burst_on_a_workstation_the_job_does_not_use_changes_nothing():
    jobs = [Job(0, 0.0, SevcikModel(W=10.0, alpha=0.0, beta=0.0, pmax=1), 10, 0.0)]
    (r,) = simulate(jobs, "RA", 2, schedule=[[], [(0.5, 0.01), (4.0, 1.0)]]).jobs
    assert r.finish == pytest.approx(10.0)


def test_an_acknowledgment_is_retimed_by_a_burst():
    # Equipartition: job 0 alone on 2 (rate 0.2/s, 10 phases); job 1 arrives at 1.2 s, the
    # next safe point is x = 0.3 at 1.5 s, but workstation 0 runs at a quarter from 1.3 s:
    # x(1.3) = 0.26, then 0.05/s, so the ack comes at 1.3 + 0.04/0.05 = 2.1 s
    jobs = [Job(0, 0.0, LINEAR, 10, 0.0), Job(1, 1.2, LINEAR, 10, 0.0)]
    sim = simulate(jobs, "EQUI", 2, schedule=[[(1.3, 0.25), (9.0, 1.0)], []])
    acks = [e.time for e in sim.timeline if e.job == 0 and e.event == "ack"]
    assert acks[0] == pytest.approx(2.1)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(0.1, 50.0), min_size=1, max_size=6), st.sampled_from(["RA", "FOLDING", "EQUI"]))
def test_a_constant_schedule_is_the_mean_availability(times, policy):
    # steps that (almost) keep the level re-pace every job there; the outcome must not move
    jobs = [Job(i, 3.0 * i, LINEAR, 10, 0.5) for i in range(4)]
    level = [(0.0, 0.5)] + [(t, 0.5 * (1 + 1e-12 * (k % 2 + 1))) for k, t in enumerate(sorted(set(times)))]
    mean = simulate(jobs, policy, 3, availability=[0.5, 1.0, 0.5]).jobs
    scheduled = simulate(jobs, policy, 3, schedule=[level, [], level]).jobs
    for a, b in zip(scheduled, mean):
        assert (a.start, a.finish, a.preemptions, a.allocations) == (
            pytest.approx(b.start), pytest.approx(b.finish), b.preemptions, b.allocations)


@pytest.mark.parametrize("sched, message", [
    ([[(1.0, 0.0)], []], r"schedule\[0\]: fraction must be in \(0, 1\]"),
    ([[(2.0, 0.5), (1.0, 1.0)], []], r"schedule\[0\]: times must be .* rising"),
    ([[]], "one per workstation: 1 for P=2"),
])
def test_bad_schedules_are_refused_in_one_line(sched, message):
    with pytest.raises(ValueError, match=message):
        simulate(one_job(), "RA", 2, schedule=sched)


def test_availability_and_schedule_are_not_both_taken():
    with pytest.raises(ValueError, match="not both"):
        simulate(one_job(), "RA", 2, availability=[0.5, 1.0], schedule=[[], []])


def test_a_burst_at_a_jobs_start_does_not_stretch_its_launch_pause():
    # the launch pause (1 s) is not paced by a burst under way at the start: the job loses only
    # what the burst takes of its work, 0.5 s of the burst after the pause at 1/100 pace
    jobs = [Job(0, 0.0, LINEAR, 10, 0.0, startup=1.0)]
    (r,) = simulate(jobs, "RA", 2, schedule=[[(0.0, 0.01), (1.5, 1.0)], []]).jobs
    assert r.finish == pytest.approx(1.0 + 0.5 + (5.0 - 0.5 * 0.01))
