"""Hand-worked event sequences: exact processor sets and times from the rules.

Models are linear unless noted: SevcikModel(W, 0, 0, pmax) gives T(p) = W/min(p, pmax),
so each time below can be checked with pencil and paper.
"""
from __future__ import annotations

import pytest

from scheduler.engine import simulate
from scheduler.model import Job, SevcikModel


def job(id, arrival, W, pmax, phases=1, alpha=0.0, cost=0.0):
    return Job(id, arrival, SevcikModel(W, alpha, 0.0, pmax), phases=phases, reconfig_cost=cost)


def events(result, kinds=("start", "resize", "finish")):
    return [(e.time, e.job, e.event, e.procs) for e in result.timeline if e.event in kinds]


def assert_events(result, expected, kinds=("start", "resize", "finish")):
    got = events(result, kinds)
    assert len(got) == len(expected), got
    for g, x in zip(got, expected):
        assert g[1:] == x[1:], (got, expected)
        assert g[0] == pytest.approx(x[0], abs=1e-9), (g, x)


def test_ra_waits_for_target_then_starts_fifo_without_recomputing():
    # P=4. A takes all 4 (target 4/1). B, C queue; at A's finish Q=2 -> target 2
    # for both. D (target 4/1=4) waits at C's finish with only 2 free, starts at B's.
    jobs = [job("A", 0, 8, 4), job("B", 1, 4, 4), job("C", 1.5, 2, 4), job("D", 2.5, 3, 4)]
    r = simulate(jobs, "RA", 4)
    assert_events(r, [
        (0, "A", "start", (0, 1, 2, 3)),
        (2, "A", "finish", (0, 1, 2, 3)),
        (2, "B", "start", (0, 1)),
        (2, "C", "start", (2, 3)),
        (3, "C", "finish", (2, 3)),
        (4, "B", "finish", (0, 1)),
        (4, "D", "start", (0, 1, 2, 3)),
        (4.75, "D", "finish", (0, 1, 2, 3)),
    ])


def test_folding_folds_on_arrival_and_unfolds_on_completion():
    # A (4 phases) runs on all 4. B arrives at 0.6: A is asked, acks at its next
    # safe point (progress 0.5 at t=1), keeps the lower half, B gets the upper.
    # B finishes at 2 with an empty queue: A (smallest) is asked again, is exactly
    # at a safe point (0.75), and unfolds onto all 4.
    jobs = [job("A", 0, 8, 4, phases=4), job("B", 0.6, 2, 4)]
    r = simulate(jobs, "FOLDING", 4)
    assert_events(r, [
        (0, "A", "start", (0, 1, 2, 3)),
        (0.6, "A", "preempt_request", (0, 1, 2, 3)),
        (1.0, "A", "ack", (0, 1, 2, 3)),
        (1.0, "A", "resize", (0, 1)),
        (1.0, "B", "start", (2, 3)),
        (2.0, "B", "finish", (2, 3)),
        (2.0, "A", "preempt_request", (0, 1)),
        (2.0, "A", "ack", (0, 1)),
        (2.0, "A", "resize", (0, 1, 2, 3)),
        (2.5, "A", "finish", (0, 1, 2, 3)),
    ], kinds=("start", "preempt_request", "ack", "resize", "finish"))
    assert [j.preemptions for j in r.jobs] == [2, 0]


def test_folding_ties_go_to_most_recent_and_size_one_cannot_fold():
    # P=4, all at t=0. A just started is at a safe point, so each fold acks at once.
    # B folds A; C finds A and B tied at 2 and folds B (most recent); D folds A;
    # E finds only partitions of 1 and waits for the first completion (A's, at 8).
    # Unfolding ties also go to the most recent: D at 9, then C at 9.5; with one
    # phase each they can only finish.
    jobs = [job("A", 0, 8, 4, phases=4), job("B", 0, 9.5, 4), job("C", 0, 10, 4),
            job("D", 0, 11, 4), job("E", 0, 1, 4)]
    r = simulate(jobs, "FOLDING", 4)
    assert_events(r, [
        (0, "A", "start", (0, 1, 2, 3)),
        (0, "A", "preempt_request", (0, 1, 2, 3)),
        (0, "A", "resize", (0, 1)),
        (0, "B", "start", (2, 3)),
        (0, "B", "preempt_request", (2, 3)),
        (0, "B", "resize", (2,)),
        (0, "C", "start", (3,)),
        (0, "A", "preempt_request", (0, 1)),
        (0, "A", "resize", (0,)),
        (0, "D", "start", (1,)),
        (8, "A", "finish", (0,)),
        (8, "E", "start", (0,)),
        (9, "E", "finish", (0,)),
        (9, "D", "preempt_request", (1,)),
        (9.5, "B", "finish", (2,)),
        (9.5, "C", "preempt_request", (3,)),
        (10, "C", "finish", (3,)),
        (11, "D", "finish", (1,)),
    ], kinds=("start", "resize", "finish", "preempt_request"))


def test_folding_unfold_request_that_cannot_ack_lets_job_finish():
    # P=2: A folds for B at once (A at a safe point). C waits (partitions of 1),
    # starts at A's finish; at C's finish the queue is empty, so B (smallest, most
    # recent) is asked to unfold, but with one phase it can only finish.
    jobs = [job("A", 0, 1, 4), job("B", 0, 3, 4), job("C", 0.5, 1, 4)]
    r = simulate(jobs, "FOLDING", 2)
    assert_events(r, [
        (0, "A", "start", (0, 1)),
        (0, "A", "preempt_request", (0, 1)),
        (0, "A", "resize", (0,)),
        (0, "B", "start", (1,)),
        (1, "A", "finish", (0,)),
        (1, "C", "start", (0,)),
        (2, "C", "finish", (0,)),
        (2, "B", "preempt_request", (1,)),
        (3, "B", "finish", (1,)),
    ], kinds=("start", "resize", "preempt_request", "finish"))


def test_folding_reconfiguration_cost_delays_restart():
    jobs = [job("A", 0, 8, 4, phases=4, cost=0.1), job("B", 0.6, 2, 4)]
    r = simulate(jobs, "FOLDING", 4)
    assert_events(r, [
        (0, "A", "start", (0, 1, 2, 3)),
        (1.0, "A", "ack", (0, 1, 2, 3)),
        (1.0, "A", "resize", (0, 1)),  # pays 0.1 s: runs from 1.1, 0.5 left at 1/4 per s
        (1.0, "B", "start", (2, 3)),
        (2.0, "B", "finish", (2, 3)),
        (2.1, "A", "ack", (0, 1)),  # asked at 2.0 at progress 0.725, safe point 0.75
        (2.1, "A", "resize", (0, 1, 2, 3)),
        (2.7, "A", "finish", (0, 1, 2, 3)),  # runs from 2.2, 0.25 left at 1/2 per s
    ], kinds=("start", "ack", "resize", "finish"))


def test_equipartition_synchronisation_delay():
    # A alone gets 4. B at 0.6: A acks at 1.0 (progress 0.5); A, B get 2 each.
    # C (pmax 1) at 1.2: A and B asked. A acks at 2.0 (safe point 0.75); B has one
    # phase so it can only finish (2.5). Only then is anything reallocated:
    # A keeps (0, 1), C gets 1 of the 2 free. C done at 3.0: A asked, finishes at 3.5.
    jobs = [job("A", 0, 8, 4, phases=4), job("B", 0.6, 3, 4), job("C", 1.2, 0.5, 1)]
    r = simulate(jobs, "EQUI", 4)
    assert_events(r, [
        (0, "A", "start", (0, 1, 2, 3)),
        (0.6, "A", "preempt_request", (0, 1, 2, 3)),
        (1.0, "A", "ack", (0, 1, 2, 3)),
        (1.0, "A", "resize", (0, 1)),
        (1.0, "B", "start", (2, 3)),
        (1.2, "A", "preempt_request", (0, 1)),
        (1.2, "B", "preempt_request", (2, 3)),
        (2.0, "A", "ack", (0, 1)),
        (2.5, "B", "finish", (2, 3)),
        (2.5, "A", "resize", (0, 1)),
        (2.5, "C", "start", (2,)),
        (3.0, "C", "finish", (2,)),
        (3.0, "A", "preempt_request", (0, 1)),
        (3.5, "A", "finish", (0, 1)),
    ], kinds=("start", "preempt_request", "ack", "resize", "finish"))
    assert {j.id: j.preemptions for j in r.jobs} == {"A": 3, "B": 1, "C": 0}


def test_equipartition_larger_shares_to_earliest():
    # P=5, three jobs at t=0. Each arrival asks everyone; a job at progress 0 is at a
    # safe point and acks at once. After C: sizes 2, 2, 1 by arrival order, every
    # move within the old sets (subset restriction). A done at 5 asks B and C;
    # with one phase neither can ack, so nothing is reallocated again.
    jobs = [job("A", 0, 10, 5), job("B", 0, 10, 5), job("C", 0, 10, 5)]
    assert_events(simulate(jobs, "EQUI", 5), [
        (0, "A", "start", (0, 1, 2, 3, 4)),
        (0, "A", "resize", (0, 1, 2)),
        (0, "B", "start", (3, 4)),
        (0, "A", "resize", (0, 1)),
        (0, "B", "resize", (3, 4)),
        (0, "C", "start", (2,)),
        (5, "A", "finish", (0, 1)),
        (5, "B", "finish", (3, 4)),
        (10, "C", "finish", (2,)),
    ])


# One stream, three adaptive rules (P=4, linear models):
#   A t=0 W=4 pmax 1; B t=1 W=3 pmax 4; C t=1 W=6 pmax 4; D t=1.5 W=1 pmax 4.
ADAPTIVE_STREAM = [job("A", 0, 4, 1), job("B", 1, 3, 4), job("C", 1, 6, 4), job("D", 1.5, 1, 4)]


def test_asp():
    # B: 3 free / 1 waiting -> 3. At B's finish: 3 free / 2 waiting -> target 1,
    # C gets 1, D (the queue's last) takes the 2 left.
    assert_events(simulate(ADAPTIVE_STREAM, "ASP", 4), [
        (0, "A", "start", (0,)),
        (1, "B", "start", (1, 2, 3)),
        (2, "B", "finish", (1, 2, 3)),
        (2, "C", "start", (1,)),
        (2, "D", "start", (2, 3)),
        (2.5, "D", "finish", (2, 3)),
        (4, "A", "finish", (0,)),
        (8, "C", "finish", (1,)),
    ])


def test_ap1():
    # B: target 4/1 = 4 but 3 free -> 3. At 2: target 4/2 = 2: C gets 2, D the last 1.
    assert_events(simulate(ADAPTIVE_STREAM, "AP1", 4), [
        (0, "A", "start", (0,)),
        (1, "B", "start", (1, 2, 3)),
        (2, "B", "finish", (1, 2, 3)),
        (2, "C", "start", (1, 2)),
        (2, "D", "start", (3,)),
        (3, "D", "finish", (3,)),
        (4, "A", "finish", (0,)),
        (5, "C", "finish", (1, 2)),
    ])


def test_aep():
    # B: 4/(1 waiting + 1 running) = 2. C: 4/(1+2) = 1, on the last free one.
    # D at 1.5: nothing free; at B's finish 4/(1+2) = 1.
    assert_events(simulate(ADAPTIVE_STREAM, "AEP", 4), [
        (0, "A", "start", (0,)),
        (1, "B", "start", (1, 2)),
        (1, "C", "start", (3,)),
        (2.5, "B", "finish", (1, 2)),
        (2.5, "D", "start", (1,)),
        (3.5, "D", "finish", (1,)),
        (4, "A", "finish", (0,)),
        (7, "C", "finish", (3,)),
    ])


def test_aep2_orders_by_demand_and_distributes_by_gain():
    # A fills P=4 until 2. B (T1=12) and C (T1 = 2+1 = 3, alpha=1) queue; SDF order
    # C, B. At 2: target 4/(2 waiting + 0 running) = 2, so AEP would give 2 + 2 = 4.
    # DIF gives one each, then the other two by the largest T(p)-T(p+1):
    # B 12-6=6 > C 3-2=1 -> B; then B 6-4=2 > C 1 -> B. So C 1, B 3.
    jobs = [job("A", 0, 8, 4), job("B", 0.5, 12, 4), job("C", 0.5, 2, 4, alpha=1.0)]
    assert_events(simulate(jobs, "AEP(2)", 4), [
        (0, "A", "start", (0, 1, 2, 3)),
        (2, "A", "finish", (0, 1, 2, 3)),
        (2, "C", "start", (0,)),
        (2, "B", "start", (1, 2, 3)),
        (5, "C", "finish", (0,)),
        (6, "B", "finish", (1, 2, 3)),
    ])
    # Plain AEP on the same stream: FIFO order, the target 2 each.
    assert_events(simulate(jobs, "AEP", 4), [
        (0, "A", "start", (0, 1, 2, 3)),
        (2, "A", "finish", (0, 1, 2, 3)),
        (2, "B", "start", (0, 1)),
        (2, "C", "start", (2, 3)),
        (4, "C", "finish", (2, 3)),
        (8, "B", "finish", (0, 1)),
    ])


def test_dyn_equi_water_fills_instantly():
    # A alone: 4. B (pmax 1) at 1: caps [4, 1] -> A 3, B 1, re-partitioned at once.
    # C at 1.5: A 2, B 1, C 1. A done at 2.75: B 1, C 3 (grows next to its set).
    # B done at 3: C 4.
    jobs = [job("A", 0, 8, 4), job("B", 1, 2, 1), job("C", 1.5, 4, 4)]
    r = simulate(jobs, "DYN-EQUI", 4)
    assert_events(r, [
        (0, "A", "start", (0, 1, 2, 3)),
        (1, "A", "resize", (0, 1, 2)),
        (1, "B", "start", (3,)),
        (1.5, "A", "resize", (0, 1)),
        (1.5, "C", "start", (2,)),
        (2.75, "A", "finish", (0, 1)),
        (2.75, "C", "resize", (0, 1, 2)),
        (3.0, "B", "finish", (3,)),
        (3.0, "C", "resize", (0, 1, 2, 3)),
        (3.5, "C", "finish", (0, 1, 2, 3)),
    ])
