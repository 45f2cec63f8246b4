"""The paper's Equipartition (EQUI-FLOOR): max(1, ⌊P/n⌋) each, the remainder left idle.

Hand-worked on P=5 with linear models (T(p) = W/p), beside EQUI on the same
stream, which hands the remainder out.
"""
from __future__ import annotations

import pytest

from scheduler.engine import simulate
from scheduler.model import Job, SevcikModel
from scheduler.registry import get_policy

# A and B: W=12, 4 safe points (at progress 1/4, 1/2, 3/4); C: W=2, one phase. All arrive at t=0.
STREAM = [Job("A", 0, SevcikModel(12, 0, 0, 5), phases=4), Job("B", 0, SevcikModel(12, 0, 0, 5), phases=4),
          Job("C", 0, SevcikModel(2, 0, 0, 5), phases=1)]


def events(result):
    return [(round(e.time, 9), e.job, e.event, e.procs) for e in result.timeline
            if e.event in ("start", "ack", "resize", "finish")]


def test_floor_leaves_the_remainder_idle():
    # A alone: 5. B arrives: A acks at once (progress 0); n=2, ⌊5/2⌋=2 each, processor 4 idle.
    # C arrives: n=3, ⌊5/3⌋=1 each; A and B keep their lowest id, C takes the lowest free (1).
    # C done at 2 (W=2 on 1): A and B asked; at 1/12 per s they are at 1/6, next safe point 1/4 at t=3.
    # At 3: n=2, 2 each (A grows onto 1, B onto 3), processor 4 idle again; 3/4 left at 2/12 per s: done at 7.5.
    r = simulate(STREAM, "EQUI-FLOOR", 5)
    assert events(r) == [
        (0, "A", "start", (0, 1, 2, 3, 4)),
        (0, "A", "ack", (0, 1, 2, 3, 4)),
        (0, "A", "resize", (0, 1)),
        (0, "B", "start", (2, 3)),
        (0, "A", "ack", (0, 1)),
        (0, "B", "ack", (2, 3)),
        (0, "A", "resize", (0,)),
        (0, "B", "resize", (2,)),
        (0, "C", "start", (1,)),
        (2, "C", "finish", (1,)),
        (3, "A", "ack", (0,)),
        (3, "B", "ack", (2,)),
        (3, "A", "resize", (0, 1)),
        (3, "B", "resize", (2, 3)),
        (7.5, "A", "finish", (0, 1)),
        (7.5, "B", "finish", (2, 3)),
    ]
    held = {p for e in r.timeline if e.time >= 3 and e.event == "resize" for p in e.procs}
    assert 4 not in held
    # Requests: A at B's and C's arrivals and C's finish; B at C's arrival, C's finish and A's finish
    # (A's finish at 7.5 is handled first and asks B, which finishes at that same instant).
    assert {j.id: j.preemptions for j in r.jobs} == {"A": 3, "B": 3, "C": 0}


def test_equi_hands_the_remainder_out_on_the_same_stream():
    # Same stream under EQUI: 3+2 after B, 2+2+1 after C (no processor idle). A and B run at 2/12
    # per s: at C's finish (2) they are at 1/3, next safe point 1/2 at t=3. Then A gets 3 (grows onto
    # 2, the remainder), B 2: A's 1/2 at 3/12 per s -> done at 5; B is asked then, at 5/6, and its
    # next safe point is its end: done at 6. Under EQUI-FLOOR both end at 7.5.
    r = simulate(STREAM, "EQUI", 5)
    assert events(r) == [
        (0, "A", "start", (0, 1, 2, 3, 4)),
        (0, "A", "ack", (0, 1, 2, 3, 4)),
        (0, "A", "resize", (0, 1, 2)),
        (0, "B", "start", (3, 4)),
        (0, "A", "ack", (0, 1, 2)),
        (0, "B", "ack", (3, 4)),
        (0, "A", "resize", (0, 1)),
        (0, "B", "resize", (3, 4)),
        (0, "C", "start", (2,)),
        (2, "C", "finish", (2,)),
        (3, "A", "ack", (0, 1)),
        (3, "B", "ack", (3, 4)),
        (3, "B", "resize", (3, 4)),
        (3, "A", "resize", (0, 1, 2)),
        (5, "A", "finish", (0, 1, 2)),
        (6, "B", "finish", (3, 4)),
    ]
    floor = {j.id: j.finish for j in simulate(STREAM, "EQUI-FLOOR", 5).jobs}
    assert floor == {"A": pytest.approx(7.5), "B": pytest.approx(7.5), "C": pytest.approx(2.0)}


def test_floor_is_registered_and_quotes_the_paper():
    policy = get_policy("equi-floor")
    assert policy.name == "EQUI-FLOOR"
    assert "Number of ready jobs" in type(policy).__doc__
    assert policy.shares(3, 3, 8) == [2, 2, 2]  # 8 mod 3 = 2 idle
    assert policy.shares(9, 8, 8) == [1] * 8  # more ready jobs than processors: one each, P of them
