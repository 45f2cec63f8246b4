"""The planner of `nowlab run --until-resolved` (experiments/until_resolved.py), driven with scripted
replication results: which round runs next, that a half-done round is completed, and each stop.
The claims are judged by the real rule (reporting.effects, reporting.claims) on scripted figures."""
from __future__ import annotations

import math

import pandas as pd
import pytest
from hypothesis import given, settings, strategies as hs
from scipy import stats as st

from experiments import until_resolved as ur
from experiments.reporting import effects
from experiments.reporting.claims import Claim, Verdict
from experiments.reporting.power import from_differences

POLICIES = ["RA", "FOLDING"]
RATES = [0.05, 0.1]
#: FOLDING's response minus RA's, per replication (scripted): noisy, positive on average.
DIFFS = [1.0, 3.0, 0.5, 1.2, 0.9, 1.4, 1.1, 0.8]


def claim_on(diffs: list[float]) -> Claim:
    """'RA below FOLDING' judged paired by replication on the replications so far (the one rule)."""
    ra = pd.Series([10.0 + 0.1 * r for r in range(len(diffs))])
    folding = ra + pd.Series(diffs)
    return Claim("RA's response below Folding's", (effects.difference(folding, ra, paired=True).check("0.1/s"),))


def drive(limits: ur.Limits, diffs: list[float], round_s: float = 10.0):
    """Run the planner to its stop, every round it asks for 'done' at once; returns the rounds and the stop."""
    status: dict[ur.CellKey, str] = {}
    rounds = []
    for elapsed in range(0, 10_000):
        have = ur.complete(POLICIES, RATES, status)
        verdicts = [claim_on(diffs[:len(have)]).verdict]
        d = ur.decide(POLICIES, RATES, status, verdicts, limits, elapsed_s=len(rounds) * round_s, round_s=round_s)
        if d.stop is not None:
            return rounds, d, have
        rounds.append(d.cells)
        status.update({k: "done" for k in d.cells})
    raise AssertionError("the planner never stopped")


def first_resolving(diffs: list[float]) -> int:
    """The first n at which a two-sided paired t-test at 5% rejects 'no difference' (scipy, not our code)."""
    for n in range(2, len(diffs) + 1):
        if st.ttest_1samp(diffs[:n], 0.0).pvalue < 0.05:
            return n
    raise AssertionError("the script never resolves")


def test_it_stops_at_the_first_round_that_resolves_the_scripted_claim():
    rounds, stop, have = drive(ur.Limits(budget_s=3600, max_replications=30), DIFFS)
    n = first_resolving(DIFFS)
    assert stop.stop is ur.Stop.RESOLVED and len(have) == n and len(rounds) == n, stop.why
    for rep, cells in enumerate(rounds):  # whole rounds, policies interleaved at each rate, one stream a round
        assert list(cells) == [(p, r, rep) for r in RATES for p in POLICIES]


def test_a_claim_that_never_resolves_stops_at_the_cap_and_a_short_budget_before_it():
    flat = [1.0, -1.0] * 20  # mean 0: never resolves
    rounds, stop, _ = drive(ur.Limits(budget_s=10_000, max_replications=6), flat)
    assert stop.stop is ur.Stop.CAP and len(rounds) == 6
    rounds, stop, _ = drive(ur.Limits(budget_s=35, max_replications=30), flat, round_s=10.0)
    assert stop.stop is ur.Stop.BUDGET and len(rounds) == 3, stop.why  # a fourth would end at 40 s > 35 s
    assert "10 s more against 5 s left" in stop.why


def test_the_configs_own_replications_come_first_even_when_resolved():
    limits = ur.Limits(budget_s=3600, min_replications=3)
    d = ur.decide(POLICIES, RATES, {}, [Verdict.BY_CONSTRUCTION], limits, elapsed_s=0, round_s=math.nan)
    assert d.stop is None and d.cells[0][2] == 0
    status = {k: "done" for rep in range(3) for k in ur.round_cells(POLICIES, RATES, rep)}
    d = ur.decide(POLICIES, RATES, status, [Verdict.HOLDS], limits, elapsed_s=0, round_s=math.nan)
    assert d.stop is ur.Stop.RESOLVED


def test_a_half_done_round_is_completed_not_restarted_and_counts_only_when_whole():
    status = {k: "done" for rep in range(2) for k in ur.round_cells(POLICIES, RATES, rep)}
    status |= {("RA", 0.05, 2): "done", ("FOLDING", 0.05, 2): "interrupted", ("RA", 0.1, 2): "running"}
    assert ur.complete(POLICIES, RATES, status) == [0, 1]
    d = ur.decide(POLICIES, RATES, status, [Verdict.HOLDS], ur.Limits(budget_s=3600), elapsed_s=0, round_s=40.0)
    assert d.cells == (("FOLDING", 0.05, 2), ("RA", 0.1, 2), ("FOLDING", 0.1, 2)), d  # resolved or not: finish it
    assert "completing replication 2 (3 cells left)" == d.why
    tight = ur.decide(POLICIES, RATES, status, [Verdict.HOLDS], ur.Limits(budget_s=100), elapsed_s=75, round_s=40.0)
    assert tight.stop is ur.Stop.BUDGET  # 3 of the round's 4 cells: about 30 s, 25 s left
    fits = ur.decide(POLICIES, RATES, status, [Verdict.HOLDS], ur.Limits(budget_s=100), elapsed_s=65, round_s=40.0)
    assert fits.cells == d.cells  # 30 s in the 35 s left


def test_a_failed_cell_stops_the_rounds_naming_it():
    status = {("RA", 0.05, 0): "done", ("FOLDING", 0.05, 0): "failed"}
    d = ur.decide(POLICIES, RATES, status, [Verdict.UNRESOLVED], ur.Limits(budget_s=60), elapsed_s=0, round_s=1.0)
    assert d.stop is ur.Stop.FAILED and "FOLDING at 0.05/s, replication 0" in d.why


@pytest.mark.parametrize("text, seconds", [("3h", 10800), ("90m", 5400), ("45s", 45), ("1h30m", 5400),
                                           ("1.5h", 5400), ("600", 600), (" 2m ", 120)])
def test_a_budget_reads_hours_minutes_and_seconds(text, seconds):
    assert ur.parse_budget(text) == seconds


@pytest.mark.parametrize("text", ["", "3x", "h", "0s", "-1h", "3 hours", "1m2h"])
def test_a_bad_budget_is_one_line_naming_the_option(text):
    with pytest.raises(ValueError, match=r"^--budget: ") as caught:
        ur.parse_budget(text)
    assert "\n" not in str(caught.value)


def test_the_power_analysis_says_what_each_claim_needs_and_whether_the_budget_covers_it():
    limits = ur.Limits(budget_s=3600, max_replications=30)
    lines = ur.plan_lines([claim_on(DIFFS[:1])], 1, math.nan, limits)
    assert "cannot tell yet: fewer than 2 complete replications" in lines[1]
    have = 3
    expected = from_differences(DIFFS[:have]).needed  # the same plan from the differences themselves
    need = ur.need(claim_on(DIFFS[:have]), have)
    assert need.needed == expected and expected > have
    roomy = ur.plan_lines([claim_on(DIFFS[:have])], have, 60.0, limits)
    assert f"needs {expected} replications ({expected - have} more" in roomy[1] and "the budget covers it" in roomy[1]
    short = ur.plan_lines([claim_on(DIFFS[:have])], have, 60.0, ur.Limits(budget_s=60, max_replications=30))
    assert "the budget does not (room for about 1 more)" in short[1]
    done = ur.plan_lines([claim_on(DIFFS)], len(DIFFS), 60.0, limits)
    assert done[1].endswith("holds already")


@settings(max_examples=60, deadline=None)
@given(kills=hs.lists(hs.integers(min_value=0, max_value=7), min_size=0, max_size=6))
def test_kills_mid_round_neither_lose_nor_repeat_a_replication(kills):
    """Each sitting runs cells in the planner's order until killed after k cells (the k+1-th left `running`,
    as SIGKILL leaves it); the next sitting resumes. Every cell is done once, the replications are 0..n-1."""
    flat = [1.0, -1.0] * 20
    limits = ur.Limits(budget_s=1e9, max_replications=5)
    status: dict[ur.CellKey, str] = {}
    runs: list[ur.CellKey] = []
    for k in [*kills, None]:  # None: the last sitting runs to its stop
        for key, s in status.items():
            if s == "running":  # the next sitting's runner marks it interrupted (store.interrupt_running)
                status[key] = "interrupted"
        ran = 0
        while True:
            have = ur.complete(POLICIES, RATES, status)
            d = ur.decide(POLICIES, RATES, status, [claim_on(flat[:len(have)]).verdict], limits,
                          elapsed_s=0, round_s=1.0)
            if d.stop is not None:
                break
            for key in d.cells:
                if k is not None and ran == k:
                    status[key] = "running"
                    break
                status[key] = "done"
                runs.append(key)
                ran += 1
            else:
                continue
            break
        if k is None:
            assert d.stop is ur.Stop.CAP
    assert len(runs) == len(set(runs)), "a cell ran twice"
    assert ur.complete(POLICIES, RATES, status) == list(range(5))
    assert sorted(runs) == sorted(k for rep in range(5) for k in ur.round_cells(POLICIES, RATES, rep))
