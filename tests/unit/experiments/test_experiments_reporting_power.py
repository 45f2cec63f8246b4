"""The power analysis (experiments/reporting/power.py) against simulated experiments: the replication count it
recommends resolves a known effect in about the asked share of experiments."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as st

from experiments.reporting.claims import Check, Method
from experiments.reporting.power import from_check, from_differences, replications_for, resolve_chance


def _resolved_share(effect: float, sd: float, n: int, experiments: int, rng: np.random.Generator) -> float:
    """Share of simulated experiments of n paired replications whose 95% t interval excludes 0."""
    d = rng.normal(effect, sd, size=(experiments, n))
    hw = st.t.ppf(0.975, n - 1) * d.std(axis=1, ddof=1) / math.sqrt(n)
    return float(np.mean(np.abs(d.mean(axis=1)) > hw))


@pytest.mark.parametrize("effect, sd", [(0.5, 1.0), (0.1, 0.15), (-3.0, 4.0)])
def test_the_recommended_n_resolves_in_about_80_percent_of_simulated_experiments(effect, sd):
    n = replications_for(effect, sd, power=0.8)
    assert resolve_chance(effect, sd, n - 1) < 0.8 <= resolve_chance(effect, sd, n)  # the fewest that do
    experiments = 4000
    share = _resolved_share(effect, sd, n, experiments, np.random.default_rng(47))
    binomial = 3 * math.sqrt(0.8 * 0.2 / experiments)  # three standard errors of a share around 80%
    assert abs(share - resolve_chance(effect, sd, n)) < binomial
    assert share > 0.8 - binomial


def test_a_known_effect_is_recovered_from_a_pilot_run_of_its_own_replications():
    # d = 0.5 sd: the textbook paired t-test needs 34 at 80% (two-sided 5%).
    assert replications_for(0.5, 1.0) == 34
    pilot = np.random.default_rng(7).normal(0.5, 1.0, size=4000)
    plan = from_differences(pilot, seconds_per_replication=600.0)
    assert 34 * 0.75 <= plan.needed <= 34 * 1.25  # within the pilot's own error (effect ± 3 SE: about ± 20%)
    assert plan.have == 4000 and plan.more == 0 and plan.seconds == 0
    few = from_differences(pilot[:4], seconds_per_replication=600.0)
    assert few.seconds == few.more * 600.0 and "more" in few.text()


def test_a_checks_interval_gives_the_same_plan_as_its_differences():
    d = np.random.default_rng(3).normal(0.2, 0.5, size=6)
    hw = st.t.ppf(0.975, 5) * d.std(ddof=1) / math.sqrt(6)
    plan = from_check(Check("0.1/s", float(d.mean()), hw, n=6, test=Method.PAIRED))
    assert plan is not None and plan.needed == from_differences(d).needed
    assert from_check(Check("x", 0.2, 0.1, n=6, test=Method.WELCH)) is None


def test_no_effect_is_never_resolved_by_replications():
    assert replications_for(0.0, 1.0) == 100_000
    assert replications_for(1.0, 0.0) == 2
    with pytest.raises(ValueError, match="power"):
        replications_for(1.0, 1.0, power=1.0)


def test_an_unresolved_claim_says_how_many_replications_and_how_long():
    from experiments.reporting.claims import Claim
    from experiments.reporting.power import claim_plan

    d = np.random.default_rng(5).normal(0.1, 0.3, size=3)  # three replications of a small effect
    hw = st.t.ppf(0.975, 2) * d.std(ddof=1) / math.sqrt(3)
    open_ = Check("0.1/s", float(d.mean()), hw, n=3, test=Method.PAIRED)
    assert open_.verdict.value == "unresolved"
    text = claim_plan(Claim("c", (Check("0.05/s", 1.0, 0.1, 3, Method.PAIRED), open_)), seconds_per_replication=900.0)
    plan = from_check(open_, seconds_per_replication=900.0)
    assert plan is not None and text == plan.text() and f"{plan.more} more" in text and "h" in text
    assert claim_plan(Claim("c", (Check("x", 1.0, 0.1, 3, Method.PAIRED),))) == ""  # resolved: nothing to plan
    assert claim_plan(Claim("c", (Check("x", 0.1, 1.0, 3, Method.QUADRATURE),))).startswith("no estimate")
