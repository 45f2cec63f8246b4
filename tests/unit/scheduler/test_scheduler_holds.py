"""Processors held after a job leaves them (teardown, release): hand-computed starts."""
from __future__ import annotations

import pytest

from scheduler.engine import simulate
from scheduler.model import Job, SevcikModel


def by_id(result):
    return {r.id: r for r in result.jobs}


def test_teardown_delays_the_next_start_on_those_processors():
    # RA, P = 2. A (W=2, pmax 2) runs on both: T(2) = 1, finishes at 1 and holds them until 1 + 0.5.
    # B arrives at 0.5, is started by the policy at 1, runs from 1.5 for T(2) = 1: finish 2.5.
    jobs = [Job("A", 0.0, SevcikModel(W=2.0, pmax=2), teardown=0.5),
            Job("B", 0.5, SevcikModel(W=2.0, pmax=2), teardown=0.5)]
    r = by_id(simulate(jobs, "RA", 2))
    assert (r["A"].start, r["A"].finish) == (0.0, 1.0)
    assert r["B"].start == pytest.approx(1.5) and r["B"].finish == pytest.approx(2.5)


def test_release_delays_the_job_that_gets_the_processors_a_shrink_gave_up():
    # FOLDING, P = 2. A (W=4, 4 phases) runs on both from 0 at 1/T(2) = 1/2 per s.
    # B arrives at 0.5: A is preempted, at progress 0.25 = a phase boundary, so it acks at once,
    # folds to one processor and gives the other up; B gets it, but only once A's old processes
    # are gone, `release` later.
    def run(release: float):
        jobs = [Job("A", 0.0, SevcikModel(W=4.0, pmax=2), phases=4, release=release),
                Job("B", 0.5, SevcikModel(W=1.0, pmax=2))]
        return by_id(simulate(jobs, "FOLDING", 2))

    without, held = run(0.0), run(0.75)
    assert without["B"].start == pytest.approx(0.5)
    assert held["B"].start == pytest.approx(0.5 + 0.75)
    assert held["B"].finish - held["B"].start == pytest.approx(without["B"].finish - without["B"].start)


def test_growing_onto_held_processors_waits_for_them():
    # FOLDING, P = 2: A folds to one processor when B arrives and unfolds onto B's when B
    # finishes. With B's teardown that regrow pauses A until the processor is usable, so A
    # ends later, by at most the teardown.
    def run(teardown: float):
        jobs = [Job("A", 0.0, SevcikModel(W=4.0, pmax=2), phases=4),
                Job("B", 0.5, SevcikModel(W=1.0, pmax=1), teardown=teardown)]
        return by_id(simulate(jobs, "FOLDING", 2))

    without, held = run(0.0), run(0.4)
    assert held["A"].finish > without["A"].finish
    assert held["A"].finish <= without["A"].finish + 0.4 + 1e-9


def test_negative_or_infinite_holds_are_refused():
    with pytest.raises(ValueError, match="teardown must be a finite time >= 0"):
        Job("A", 0.0, SevcikModel(W=1.0), teardown=-1.0)
    with pytest.raises(ValueError, match="release must be a finite time >= 0"):
        Job("A", 0.0, SevcikModel(W=1.0), release=float("inf"))


def test_a_shrink_holds_what_it_gives_up_until_its_data_has_left():
    # As above, with a resize that costs 2 s: A's leaving member sends its data meanwhile,
    # so B starts when the resize ends, not after the (shorter) release alone.
    jobs = [Job("A", 0.0, SevcikModel(W=4.0, pmax=2), phases=4, release=0.75, reconfig_cost=2.0),
            Job("B", 0.5, SevcikModel(W=1.0, pmax=2))]
    r = by_id(simulate(jobs, "FOLDING", 2))
    assert r["B"].start == pytest.approx(0.5 + 2.0)


def test_set_up_work_is_split_among_the_members_before_any_progress():
    # RA, P = 4, alone: a job pauses startup + setup_work/n, then runs T(n) = W/n.
    def finish(pmax: int) -> float:
        job = Job("A", 0.0, SevcikModel(W=8.0, pmax=pmax), startup=0.25, setup_work=2.0)
        return simulate([job], "RA", 4).jobs[0].finish

    assert finish(1) == pytest.approx(0.25 + 2.0 + 8.0)
    assert finish(4) == pytest.approx(0.25 + 0.5 + 2.0)
    with pytest.raises(ValueError, match="setup_work must be a finite time >= 0"):
        Job("A", 0.0, SevcikModel(W=1.0), setup_work=-1.0)
