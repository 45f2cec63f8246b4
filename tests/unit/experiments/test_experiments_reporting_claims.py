"""The one verdict rule (experiments/reporting/claims.py) on hand-made checks."""
from __future__ import annotations

import math

from experiments.reporting.claims import Check, Claim, Verdict, combine, count_words, interval_words, tally


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


def test_without_an_interval_the_point_estimate_decides_and_says_so():
    up, down = Check("1/s", 0.01), Check("2/s", -0.01, math.nan)
    assert (up.verdict, down.verdict) == (Verdict.HOLDS, Verdict.FAILS)
    assert "no interval: point estimate" in up.text()
    assert interval_words([up, Check("3/s", 0.2, 0.1)]) == "no 95% interval at 1/s: the point estimate decides there"


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
    assert str(Verdict.NO_DATA) == "no data"
