"""Invariants under every registered policy, on random finite job streams (hypothesis).

Checked from the timeline alone (scheduler.invariants, the same check the
live audit runs), independently of the state machine's own guards: at most P
processors in use and none shared, no job above its pmax, the subset
restriction on every resize, every job finishes; and identical input gives an
identical run.
"""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler.engine import simulate
from scheduler.invariants import check_timeline
from scheduler.model import Job, SevcikModel, TableModel
from scheduler.registry import get_policy, policy_names


@st.composite
def streams(draw):
    P = draw(st.integers(1, 6))
    n = draw(st.integers(1, 14))
    t = 0.0
    jobs = []
    for i in range(n):
        t += draw(st.sampled_from([0.0, 0.0, 0.25, 0.5, 1.0, 2.5]))
        if draw(st.booleans()):
            model = SevcikModel(draw(st.floats(0.5, 20)), draw(st.floats(0, 2)), draw(st.floats(0, 0.5)),
                                draw(st.none() | st.integers(1, 8)))
        else:
            times = sorted(draw(st.lists(st.floats(0.5, 20), min_size=1, max_size=6)), reverse=True)
            model = TableModel(tuple(times))
        jobs.append(Job(i, t, model, phases=draw(st.integers(1, 4)),
                        reconfig_cost=draw(st.sampled_from([0.0, 0.0, 0.1, 0.7]))))
    return P, jobs


def check_run(result, jobs, P):
    pmax = {j.id: P if j.model.pmax is None else min(P, j.model.pmax) for j in jobs}
    assert check_timeline(result.timeline, P, pmax, [j.id for j in jobs]) == []
    for r in result.jobs:
        assert r.submission <= r.start <= r.finish
        assert 1 - 1e-9 <= r.mean_partition <= pmax[r.id] + 1e-9


@pytest.mark.parametrize("name", policy_names())
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stream=streams())
def test_invariants(name, stream):
    P, jobs = stream
    result = simulate(jobs, name, P)
    check_run(result, jobs, P)
    again = simulate(jobs, get_policy(name), P)
    assert again.timeline == result.timeline
    assert [(r.id, r.start, r.finish) for r in again.jobs] == [(r.id, r.start, r.finish) for r in result.jobs]
