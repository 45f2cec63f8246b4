"""The state machine the engine and the live executor share: each rule is checked once, here."""
from __future__ import annotations

import pytest

from scheduler.invariants import check_timeline
from scheduler.model import Job, SevcikModel
from scheduler.registry import get_policy
from scheduler.results import TimelineEvent
from scheduler.jobs import JobStatus
from scheduler.state_machine import PolicyError, SchedulerState, TrackedJob, check_jobs


def _state(P: int = 4, n: int = 3, pmax: int = 2) -> tuple[SchedulerState, list[TrackedJob]]:
    state = SchedulerState(get_policy("FOLDING"), P)
    jobs = [TrackedJob(i, i, float(i), SevcikModel(4, 0, 0, pmax), P) for i in range(n)]
    for job in jobs:
        state.admit(job)
    return state, jobs


def test_a_job_goes_through_every_status_and_its_area_is_counted():
    state, (a, b, _) = _state()
    assert state.start(a, (1, 0)) == (0, 1)  # sorted: hosts go to mpiexec lowest first
    a.start = a.t_area = 0.0
    assert state.free == 0b1100 and state.queue == [b, state.queue[1]] and a.status is JobStatus.RUNNING
    state.preempt(a)
    state.ack(a)
    assert a.status is JobStatus.PREEMPTED and a.npre == 1 and list(state.preempted) == [a.seq]
    assert state.resize(a, (0,), 2.0) == (0,)
    assert state.free == 0b1110 and a.area == 4.0  # two processors for two seconds
    assert state.finish(a, 5.0) == (0,) and state.free == 0b1111
    record = state.job_record(a, "toy")
    assert record.allocations == ((0, 1), (0,)) and record.mean_partition == pytest.approx(7 / 5)
    assert record.preemptions == 1 and record.requested == 2 and record.profile == "toy"


@pytest.mark.parametrize("act, message", [
    (lambda s, a, b: s.start(a, (0, 1, 2)), r"given processors .* \(allowed 1..2"),
    (lambda s, a, b: s.start(a, (0, 0)), "given processors"),
    (lambda s, a, b: s.start(a, (-1,)), "given processors"),
    (lambda s, a, b: s.start(a, (4,)), "distinct ids below 4"),
    (lambda s, a, b: (s.start(a, (0,)), s.start(b, (0,))), "busy processors"),
    (lambda s, a, b: s.preempt(a), "preempt of job 0 which is queued"),
    (lambda s, a, b: (s.start(a, (0,)), s.resize(a, (1,), 0.0)), "resize of job 0 which is running"),
    (lambda s, a, b: (s.start(a, (0, 1)), s.preempt(a), s.ack(a), s.resize(a, (1, 2), 0.0)), "subset restriction"),
    (lambda s, a, b: (s.start(a, (0,)), s.start(b, (1,)), s.preempt(a), s.ack(a), s.resize(a, (0, 1), 0.0)),
     "resized onto busy"),
    (lambda s, a, b: s.job_of(type("A", (), {"job": 99})()), "unknown job 99"),
])
def test_a_policy_that_breaks_a_rule_is_named(act, message):
    state, (a, b, _) = _state()
    with pytest.raises(PolicyError, match=message):
        act(state, a, b)


def test_the_queue_keeps_the_policys_order_and_arrival_ties():
    state = SchedulerState(get_policy("SDF"), 4)  # shortest demand first
    jobs = [TrackedJob(i, i, 0.0, SevcikModel(w, 0, 0, 1), 4) for i, w in enumerate((5, 1, 5, 3))]
    for job in jobs:
        state.admit(job)
    assert [j.id for j in state.queue] == [1, 3, 0, 2]
    state.start(jobs[3], (0,))
    assert [j.id for j in state.queue] == [1, 0, 2] and [k[1] for k in state.qkeys] == [1, 0, 2]


def test_check_jobs_names_a_duplicate_and_sorts_by_arrival():
    model = SevcikModel(4, 0, 0, 2)
    assert [j.id for j in check_jobs([Job("b", 2.0, model), Job("a", 1.0, model)], get_policy("RA"))] == ["a", "b"]
    with pytest.raises(ValueError, match="duplicate job id 'a'"):
        check_jobs([Job("a", 0.0, model), Job("a", 1.0, model)], get_policy("RA"))


def test_the_timeline_check_catches_what_the_state_machine_forbids():
    ev = TimelineEvent
    fine = [ev(0, 0, "start", (0, 1)), ev(1, 0, "finish", (0, 1))]
    assert check_timeline(fine, 2, {0: 2}, [0]) == []
    assert "allowed 1..1" in check_timeline(fine, 2, {0: 1})[0]
    assert "started again" in check_timeline(fine[:1] + [ev(0.5, 0, "start", (0, 1))], 2)[0]
    assert "went backwards" in check_timeline([ev(1, 0, "start", (0,)), ev(0, 0, "finish", (0,))], 2)[0]
    assert any("never finished" in p for p in check_timeline(fine[:1], 2, jobs=[0]))
