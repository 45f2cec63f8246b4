"""The one verdict rule (experiments/reporting/claims.py) on hand-made checks."""
from __future__ import annotations

import math

from experiments.reporting.claims import (Check, Claim, Method, Verdict, combine, count_words, exact, interval_words,
                                         peak, tally, tally_text)


def test_an_interval_wholly_above_zero_holds_and_wholly_below_fails():
    assert Check("1/s", 0.10, 0.04).verdict is Verdict.HOLDS
    assert Check("1/s", -0.10, 0.04).verdict is Verdict.FAILS


def test_a_reversed_sign_fails():
    """The paper says the gap narrows; measured, it widens: the margin's sign is reversed, and the claim fails."""
    narrows = Check("Fig. 9 vs Fig. 8", margin=-0.29, half_width=0.08)
    assert narrows.verdict is Verdict.FAILS
    assert combine([Check("0.02/s", 0.2, 0.05), narrows]) is Verdict.FAILS


def test_an_interval_spanning_zero_is_unresolved():
    assert Check("1/s", 0.03, 0.05).verdict is Verdict.UNRESOLVED
    assert Check("1/s", -0.03, 0.05).verdict is Verdict.UNRESOLVED
    assert combine([Check("a", 0.2, 0.05), Check("b", 0.03, 0.05)]) is Verdict.UNRESOLVED


def test_without_an_interval_or_with_an_infinite_one_a_check_is_unresolved_whatever_its_point():
    up, down, one_rep = Check("1/s", 0.01), Check("2/s", -0.01, math.nan), Check("3/s", 5.0, math.inf, n=1)
    assert {up.verdict, down.verdict, one_rep.verdict} == {Verdict.UNRESOLVED}
    assert "no interval" in up.text() and "unresolved" in up.text()
    assert interval_words([up, Check("3/s", 0.2, 0.1)]) == "no 95% interval at 1/s: unresolved there"
    assert combine([Check("a", 1.0, 0.1), one_rep]) is Verdict.UNRESOLVED
    # a figure without sampling noise says so, and then its point decides
    assert exact("model", 0.01).verdict is Verdict.HOLDS and exact("model", -0.01).verdict is Verdict.FAILS
    assert Check("x", 1.0, 0.0, test=Method.NONE).verdict is Verdict.UNRESOLVED


def _steps(*values: float, hw: float = 0.1) -> list[Check]:
    """A series' steps (value[j+1] - value[j]), each with the same half-width."""
    return [Check(f"{j}", b - a, hw) for j, (a, b) in enumerate(zip(values, values[1:]))]


def test_a_peak_needs_an_interior_point_resolvably_above_both_neighbours():
    assert peak(_steps(0.6, 1.3, 0.9))[0] is Verdict.HOLDS
    assert peak(_steps(0.6, 1.3, 1.25))[0] is Verdict.UNRESOLVED  # the fall out of it is within its interval
    assert peak(_steps(0.1, 0.2, 1.0, 0.5, 0.4))[0] is Verdict.HOLDS  # at the third of five points


def test_a_monotone_series_is_not_a_peak():
    verdict, why = peak(_steps(0.09, 0.66, 1.31))  # Fig. 6's rising preemptions, resolved
    assert verdict is Verdict.FAILS and "monotone" in why
    assert peak(_steps(1.3, 0.9, 0.6))[0] is Verdict.FAILS
    # rising on the point estimates but within the intervals: unresolved, never a peak
    assert peak(_steps(0.09, 0.66, 1.31, hw=0.9))[0] is Verdict.UNRESOLVED
    assert peak(_steps(0.5, 0.6))[0] is Verdict.NO_DATA


def test_one_failing_check_fails_the_claim_every_holding_check_holds_it():
    holds, fails, open_ = Check("a", 1.0, 0.1), Check("b", -1.0, 0.1), Check("c", 0.0, 0.1)
    assert combine([holds, holds]) is Verdict.HOLDS
    assert combine([holds, open_, fails]) is Verdict.FAILS
    assert combine([holds, open_]) is Verdict.UNRESOLVED


def test_no_checks_or_no_figures_is_no_data_and_a_missing_figure_never_holds():
    assert combine([]) is Verdict.NO_DATA
    assert combine([Check("a", math.nan)]) is Verdict.NO_DATA
    assert combine([Check("a", 1.0, 0.1), Check("b", math.nan)]) is Verdict.UNRESOLVED


def test_the_words_keep_the_k_of_n_count():
    checks = [Check("1/s", 0.2, 0.05), Check("2/s", 0.3, 0.05), Check("3/s", -0.1, 0.05)]
    assert count_words(checks, "rates") == "holds at 2 of 3 rates"
    assert Claim("lower below", tuple(checks)).verdict is Verdict.FAILS


def test_by_construction_is_labelled_whatever_its_checks_say_and_tally_counts_every_kind():
    claims = [Claim("a", (Check("x", 1.0, 0.1),)), Claim("b", (Check("x", -1.0, 0.1),)),
              Claim("c", (Check("x", -1.0, 0.1),), by_construction=True), Claim("d")]
    assert claims[2].verdict is Verdict.BY_CONSTRUCTION
    assert tally(claims) == {Verdict.HOLDS: 1, Verdict.FAILS: 1, Verdict.UNRESOLVED: 0, Verdict.NO_DATA: 1,
                             Verdict.BY_CONSTRUCTION: 1}
    assert tally_text(tally(claims)) == "1 holds, 1 fails, 0 unresolved, 1 by construction, 1 no data"
    assert tally_text(tally(claims[:3])) == "1 holds, 1 fails, 0 unresolved, 1 by construction"
    assert str(Verdict.NO_DATA) == "no data"
