"""Engine mechanics: safe points, reconfiguration calls, zero overhead, timeline switch."""
from __future__ import annotations

import pytest

from scheduler.actions import Preempt, Resize, Start
from scheduler.engine import simulate
from scheduler.model import Job, SevcikModel
from scheduler.policy import Policy
from scheduler.snapshot import Reason


class Scripted(Policy):
    """Start the head on everything; on its first arrival after that, preempt it;
    on the ack, shrink it to one processor. Records why it was called."""

    name = "SCRIPTED"

    def __init__(self, zero: bool = False) -> None:
        self.zero_overhead = zero
        self.calls: list[tuple[float, Reason]] = []

    def decide(self, snap):
        self.calls.append((snap.time, snap.reason))
        if snap.reason is Reason.ARRIVAL and snap.running and snap.queue:
            return [Preempt(job.id) for job in snap.running.values()]
        if snap.reason is Reason.ACK:
            job = snap.subject
            return [Resize(job.id, job.procs[:1])]
        if snap.queue and snap.free_mask and not snap.running and not snap.preempting:
            head = snap.queue[0]
            return [Start(head.id, tuple(sorted(snap.free))[: head.pmax])]
        return []


def two_jobs(cost=0.0):
    return [Job("A", 0.0, SevcikModel(8, 0, 0, 4), phases=4, reconfig_cost=cost),
            Job("B", 1.5, SevcikModel(1, 0, 0, 4))]


def test_ack_at_next_safe_point_and_reconfigured_call():
    policy = Scripted()
    r = simulate(two_jobs(cost=0.25), policy, 4)
    # A runs 4 procs at 1/2 progress/s: at 1.5 it is at 0.75, a safe point -> acks at once,
    # shrinks to 1 proc (pays 0.25 s), 0.25 left at 1/8 per s -> finishes 1.75 + 2 = 3.75.
    assert (1.5, Reason.ACK) in policy.calls
    assert (1.75, Reason.RECONFIGURED) in policy.calls
    assert r.jobs[0].finish == pytest.approx(3.75)
    assert r.jobs[0].allocations == ((0, 1, 2, 3), (0,))
    # time-weighted: 4 procs for 1.5 s, 1 proc for 2.25 s, over 3.75 s
    assert r.jobs[0].mean_partition == pytest.approx((4 * 1.5 + 1 * 2.25) / 3.75)


def test_zero_overhead_acks_mid_phase_and_resizes_free():
    policy = Scripted(zero=True)
    jobs = [Job("A", 0.0, SevcikModel(8, 0, 0, 4), phases=4, reconfig_cost=5.0),
            Job("B", 1.2, SevcikModel(1, 0, 0, 4))]
    r = simulate(jobs, policy, 4)
    # at 1.2 progress is 0.6 (mid-phase); no wait, no cost: 0.4 left at 1/8 per s
    assert r.jobs[0].finish == pytest.approx(1.2 + 0.4 * 8)
    assert [c for c in policy.calls if c[0] == 1.2] == [(1.2, Reason.ARRIVAL), (1.2, Reason.ACK)]


@pytest.mark.parametrize("name", ["FOLDING", "EQUI", "AEP(2)", "DYN-EQUI"])
def test_timeline_switch_does_not_change_results(name):
    jobs = [Job(i, 0.3 * i, SevcikModel(1 + i % 5, 0.1, 0.05, None), phases=3) for i in range(40)]
    a = simulate(jobs, name, 8)
    b = simulate(jobs, name, 8, timeline=False)
    assert a.jobs == b.jobs and b.timeline == [] and a.timeline
