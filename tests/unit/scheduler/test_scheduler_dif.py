"""DIF's readings (scheduler/policies/dif.py) on one hand-worked round.

P = 8, linear models T(p) = W/min(p, pmax). A (W 14, pmax 7) arrives alone and
takes 7; E (W 100, pmax 1) takes the last one. B (W 12, pmax 4) and C (W 3,
pmax 4) arrive at 0.5 to a full machine; SDF orders them C, B. A finishes at
2: 7 free, 2 waiting, 1 running, so AEP's share is 8/3 and its target 2:
greedy AEP(1) gives C 2 and B 2 (4 in all, 3 idle).

DIF gives C and B one each, then one at a time by the largest T(p) - T(p+1):
B 12-6 = 6, then B 6-4 = 2 (C's first gain is 3-1.5 = 1.5), then C 1.5,
then B 4-3 = 1 (C 1.5-1 = 0.5), then C 0.5 (B is at pmax). So the pool decides:

- greedy total 4:           C 1, B 3  -> C ends 2 + 3 = 5,   B 2 + 4 = 6
- share floor(2 x 8/3) = 5: C 2, B 3  -> C ends 2 + 1.5,     B 6
- all free 7:               C 3, B 4  -> C ends 2 + 1,       B 2 + 3 = 5
"""
from __future__ import annotations

import pytest

from scheduler.engine import simulate
from scheduler.model import Job, Knowledge, SevcikModel
from scheduler.policies.dif import DifReading, distribute, pool
from scheduler.registry import get_policy
from scheduler.snapshot import JobView


def assert_events(result, expected):
    got = [(e.time, e.job, e.event, e.procs) for e in result.timeline if e.event in ("start", "finish")]
    assert [g[1:] for g in got] == [x[1:] for x in expected], got
    assert [g[0] for g in got] == pytest.approx([x[0] for x in expected], abs=1e-9), got


def job(id, arrival, W, pmax):
    return Job(id, arrival, SevcikModel(W, 0.0, 0.0, pmax))


JOBS = [job("A", 0, 14, 7), job("E", 0.1, 100, 1), job("B", 0.5, 12, 4), job("C", 0.5, 3, 4)]
HEAD = [(0, "A", "start", (0, 1, 2, 3, 4, 5, 6)), (0.1, "E", "start", (7,)),
        (2, "A", "finish", (0, 1, 2, 3, 4, 5, 6))]
TAIL = [(100.1, "E", "finish", (7,))]


def test_aep1_greedy_round():
    assert_events(simulate(JOBS, "AEP(1)", 8), HEAD + [
        (2, "C", "start", (0, 1)), (2, "B", "start", (2, 3)),
        (3.5, "C", "finish", (0, 1)), (8, "B", "finish", (2, 3))] + TAIL)


def test_greedy_total_reading_is_the_default_aep2():
    assert_events(simulate(JOBS, "AEP(2)", 8), HEAD + [
        (2, "C", "start", (0,)), (2, "B", "start", (1, 2, 3)),
        (5, "C", "finish", (0,)), (6, "B", "finish", (1, 2, 3))] + TAIL)


def test_share_reading_hands_out_the_rounded_down_fractions():
    assert_events(simulate(JOBS, "AEP(2)-SHARE", 8), HEAD + [
        (2, "C", "start", (0, 1)), (2, "B", "start", (2, 3, 4)),
        (3.5, "C", "finish", (0, 1)), (6, "B", "finish", (2, 3, 4))] + TAIL)


def test_all_free_reading_hands_out_every_free_processor():
    assert_events(simulate(JOBS, "AEP(2)-FREE", 8), HEAD + [
        (2, "C", "start", (0, 1, 2)), (2, "B", "start", (3, 4, 5, 6)),
        (3, "C", "finish", (0, 1, 2)), (5, "B", "finish", (3, 4, 5, 6))] + TAIL)


def _view(id, W, pmax, seq):
    return JobView(id, seq, 0.0, SevcikModel(W, 0.0, 0.0, pmax), 32)


def test_pool_of_each_reading():
    # AP1 with 3 waiting on P = 32: share 32/3 (target 10). Two jobs started with
    # 10 and 4 (pmax 4) by greedy, 20 free: the share pool is floor(64/3) = 21 -> 20 free.
    chosen = [(_view("x", 50, 16, 0), 10), (_view("y", 50, 4, 1), 4)]
    assert pool(DifReading.GREEDY_TOTAL, chosen, 20, (32, 3)) == 14
    assert pool(DifReading.SHARE, chosen, 20, (32, 3)) == 20
    assert pool(DifReading.SHARE, chosen, 30, (32, 3)) == 21
    assert pool(DifReading.ALL_FREE, chosen, 20, (32, 3)) == 20
    # The share never takes back what greedy gave (ASP's last job takes the rest).
    assert pool(DifReading.SHARE, chosen, 20, (5, 1)) == 14


def test_distribute_stops_at_pmax_and_breaks_ties_in_queue_order():
    a, b = _view("a", 8, 2, 0), _view("b", 8, 2, 1)  # identical gains
    assert [n for _, n in distribute([(a, 1), (b, 1)], 3)] == [2, 1]
    assert [n for _, n in distribute([(a, 1), (b, 1)], 10)] == [2, 2]  # both at pmax: the rest stays free


@pytest.mark.parametrize("reading", list(DifReading))
def test_each_reading_is_a_named_policy_for_all_three_bases(reading):
    for base in ("ASP", "AP1", "AEP"):
        p = get_policy(f"{base}(2){reading.suffix}")
        assert p.name == f"{base}(2){reading.suffix}"
        assert p.needs == {Knowledge.PMAX, Knowledge.T1, Knowledge.TP}


def _stream(n: int, seed: int) -> list[Job]:
    """A busy random stream: exponential gaps, hyperexponential-ish work, Sevcik models with alpha and beta."""
    import random

    rng = random.Random(seed)
    t, jobs = 0.0, []
    for i in range(n):
        t += rng.expovariate(1.0)
        W = rng.expovariate(1 / 40) if rng.random() < 0.2 else rng.expovariate(1 / 3)
        pmax = rng.choice((4, 16, 64))
        jobs.append(Job(i, t, SevcikModel(W, W * rng.choice((0.0, 0.01, 0.05)), W / pmax**2, pmax)))
    return jobs


@pytest.mark.parametrize("base", ["ASP", "AP1"])
def test_share_reading_repeats_all_free_for_asp_and_ap1(base):
    """dif.same_as: under the share reading ASP and AP1 hand out every free processor, round for round."""
    jobs = _stream(400, seed=7)
    share, free = simulate(jobs, f"{base}(2)-SHARE", 32), simulate(jobs, f"{base}(2)-FREE", 32)
    assert [(r.id, r.start, r.finish, r.mean_partition) for r in share.jobs] == \
           [(r.id, r.start, r.finish, r.mean_partition) for r in free.jobs]
    # ... while AEP's share reading is its own policy on the same stream.
    aep = [(r.start, r.finish) for r in simulate(jobs, "AEP(2)-SHARE", 32).jobs]
    assert aep != [(r.start, r.finish) for r in simulate(jobs, "AEP(2)-FREE", 32).jobs]
