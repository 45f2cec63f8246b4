"""Claim kinds on hand-made cells tables: each kind once holding and once not, and whether
the verdict stands outside the 95% interval. Expected gaps are worked out here from the inputs."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from experiments.reporting.cell_claims import Estimate, gap_at, judge, judge_across
from experiments.reporting.claims import Verdict
from experiments.config import ConfigError, from_dict
from experiments.sync_delay import cell_mean, timeline_delays
from scheduler.engine import simulate
from scheduler.model import Job, SevcikModel

RATES = [0.05, 0.08, 0.11]


def cells(values: dict[tuple[str, float], float], stat: str = "response", ci: float = 1.0) -> pd.DataFrame:
    rows = [{"policy": p, "rate": r, stat: v, f"{stat}_ci": ci} for (p, r), v in values.items()]
    return pd.DataFrame(rows)


# RA 100 at every rate; Folding 95, 90, 83: gaps 5%, 10%, 17%, each ± about 1.4 points.
FIG4 = cells({("RA", 0.05): 100.0, ("RA", 0.08): 100.0, ("RA", 0.11): 100.0,
              ("FOLDING", 0.05): 95.0, ("FOLDING", 0.08): 90.0, ("FOLDING", 0.11): 83.0})
BELOW = {"text": "t", "metric": "response", "lower": "FOLDING", "than": "RA"}


def test_gap_and_its_half_width():
    g = gap_at(FIG4, BELOW, 0.11)
    assert g.value == pytest.approx(0.17)
    # sqrt((1/100)² + (83·1/100²)²)
    assert g.half_width == pytest.approx(math.hypot(1 / 100, 83 / 100**2))
    zero = cells({("RA", 0.1): 2.0, ("FOLDING", 0.1): 0.0}, "wait", ci=0.5)  # Folding never waits
    z = gap_at(zero, {**BELOW, "metric": "wait"}, 0.1)
    assert (z.value, z.half_width) == pytest.approx((1.0, 0.25))
    inc = gap_at(FIG4, {**BELOW, "gap": "increase"}, 0.11)  # RA's 100 is 20.5% above Folding's 83
    assert (inc.value, inc.half_width) == pytest.approx((100 / 83 - 1, math.hypot(1 / 83, 100 / 83**2)))
    assert judge({**BELOW, "gap": "increase", "about": 0.20}, FIG4, RATES).verdict is Verdict.HOLDS
    a = gap_at(FIG4, {**BELOW, "gap": "absolute"}, 0.11)
    assert (a.value, a.half_width) == pytest.approx((17.0, math.sqrt(2)))


def test_below_plain():
    v = judge(BELOW, FIG4, RATES)
    assert v.verdict is Verdict.HOLDS and v.words == "holds, by 5–17%"
    assert v.interval.startswith("yes: outside")
    v = judge({**BELOW, "lower": "RA", "than": "FOLDING"}, FIG4, RATES)
    assert v.verdict is Verdict.FAILS and v.words.startswith("fails: RA is higher by")


def test_at_least():
    v = judge({**BELOW, "at_least": 0.04}, FIG4, RATES)  # 5% at 0.05/s: 1 point above 4%, ± 1.4
    assert v.verdict is Verdict.UNRESOLVED and "within the 95% interval at 0.05/s" in v.words
    v = judge({**BELOW, "at_least": 0.08}, FIG4, RATES)  # 5% at 0.05/s is short of 8%
    assert v.verdict is Verdict.FAILS and v.words == "fails: holds at 2 of 3 rates; not at 0.05/s"


def test_up_to():
    v = judge({**BELOW, "up_to": 0.20}, FIG4, RATES)
    assert v.verdict is Verdict.HOLDS and v.ours == "largest gap 17% at 0.11/s"
    v = judge({**BELOW, "up_to": 0.12}, FIG4, RATES)  # the largest gap, 17%, is above 12%
    assert v.verdict is Verdict.FAILS
    assert "not at largest gap at 0.11/s vs 12%" in v.words


def test_about_uses_the_tolerance():
    assert judge({**BELOW, "about": 0.17}, FIG4, RATES).verdict is Verdict.HOLDS
    assert judge({**BELOW, "about": 0.19}, FIG4, RATES).verdict is Verdict.HOLDS  # 2 points off, within 4
    v = judge({**BELOW, "about": 0.25}, FIG4, RATES)  # 8 points off
    assert v.verdict is Verdict.FAILS and v.words.startswith("fails: holds at 3 of 4 conditions")
    assert judge({**BELOW, "about": 0.25, "tolerance": 0.10}, FIG4, RATES).verdict is Verdict.HOLDS


def test_gap_grows():
    v = judge({**BELOW, "kind": "gap_grows"}, FIG4, RATES)
    assert v.verdict is Verdict.HOLDS and v.ours == "gap 5% → 10% → 17%"
    flat = cells({("RA", r): 100.0 for r in RATES} | {("FOLDING", 0.05): 90.0, ("FOLDING", 0.08): 85.0,
                                                      ("FOLDING", 0.11): 88.0})
    v = judge({**BELOW, "kind": "gap_grows"}, flat, RATES)
    assert v.verdict is Verdict.FAILS and v.words == "fails: holds at 1 of 2 steps; not at 0.08/s → 0.11/s"


def test_peaks():
    pre = cells({("FOLDING", 0.05): 0.6, ("FOLDING", 0.08): 1.3, ("FOLDING", 0.11): 0.9}, "preemptions", ci=0.1)
    claim = {"text": "t", "kind": "peaks", "metric": "preemptions", "policy": "FOLDING"}
    v = judge(claim, pre, RATES)
    assert v.verdict is Verdict.HOLDS and "1.3 at 0.08/s" in v.ours and v.interval.startswith("yes")
    rising = cells({("FOLDING", 0.05): 0.6, ("FOLDING", 0.08): 0.9, ("FOLDING", 0.11): 1.3}, "preemptions", ci=0.1)
    assert judge(claim, rising, RATES).verdict is Verdict.FAILS  # a monotone series is not a peak
    assert judge(claim, rising, [0.05, 0.11]).verdict is Verdict.NO_DATA


def test_bound_and_interval_words():
    pre = cells({("FOLDING", 0.05): 0.6, ("FOLDING", 0.08): 1.3, ("FOLDING", 0.11): 1.45}, "preemptions", ci=0.1)
    claim = {"text": "t", "kind": "bound", "metric": "preemptions", "policy": "FOLDING", "under": 1.5}
    v = judge(claim, pre, RATES)
    assert v.verdict is Verdict.UNRESOLVED and v.ours == "at most 1.45 (bound 1.5)"
    assert v.interval.startswith("no: within the 95% interval at 0.11/s")  # 1.45 ± 0.1 straddles 1.5
    assert judge({**claim, "under": 1.0}, pre, RATES).words.startswith("fails: holds at 1 of 3 rates")
    assert judge({**claim, "under": 0.5}, pre, RATES).verdict is Verdict.FAILS
    one_rep = cells({("FOLDING", r): 0.5 for r in RATES}, "preemptions", ci=float("nan"))
    v = judge(claim, one_rep, RATES)  # no interval (one replication): unresolved, never decided by the point
    assert v.interval.startswith("no: no 95% interval")
    assert v.verdict is Verdict.UNRESOLVED and "no 95% interval at 0.05/s, 0.08/s, 0.11/s: unresolved there" in v.words


def test_across_figures():
    fig5 = cells({("RA", r): 100.0 for r in RATES} | {("FOLDING", 0.05): 90.0, ("FOLDING", 0.08): 80.0,
                                                      ("FOLDING", 0.11): 75.0})
    claim = {**BELOW, "larger": "fig5", "smaller": "fig4"}
    rates = {"fig4": RATES, "fig5": RATES}
    v = judge_across(claim, {"fig4": FIG4, "fig5": fig5}, rates)
    assert v.verdict is Verdict.HOLDS and v.ours == "fig5 25% at 0.11/s vs fig4 17% at 0.11/s"
    v = judge_across({**claim, "larger": "fig4", "smaller": "fig5"}, {"fig4": FIG4, "fig5": fig5}, rates)
    assert v.verdict is Verdict.FAILS and v.interval.startswith("yes: outside")
    assert judge_across(claim, {"fig4": FIG4}, rates).verdict is Verdict.NO_DATA


def test_config_checks_each_kind_names_its_fields():
    base = {"name": "x", "title": "x", "minutes": 1, "cluster": "c.toml", "policies": ["RA", "FOLDING"],
            "class": {"a": {"workload": "synthetic"}}, "arrivals": {"rates": RATES, "jobs": 4, "mix": {"a": 1}}}
    ok = [{"text": "t", "metric": "response", "lower": "FOLDING", "than": "RA", "about": 0.17, "quote": "q"},
          {"text": "t", "kind": "peaks", "metric": "preemptions", "policy": "FOLDING"},
          {"text": "t", "kind": "bound", "metric": "sync_delay", "policy": "FOLDING", "under": 1.5}]
    assert len(from_dict({**base, "claim": ok}).claims) == 3
    bad = [({"text": "t", "metric": "response", "lower": "FOLDING", "than": "RA", "about": 0.1, "up_to": 0.2},
            "claim[0]: about: give one of at_least, up_to, about"),
           ({"text": "t", "kind": "bound", "metric": "preemptions", "policy": "FOLDING"}, "under/over"),
           ({"text": "t", "kind": "peaks", "metric": "response", "lower": "FOLDING", "than": "RA"}, "policy"),
           ({"text": "t", "kind": "bound", "metric": "response", "policy": "EQUI", "under": 1}, "'EQUI'")]
    for claim, words in bad:
        with pytest.raises(ConfigError, match=words.replace("[", r"\[").replace("]", r"\]")):
            from_dict({**base, "claim": [claim]})


def test_sync_delay_from_a_hand_worked_equi_timeline():
    # tests/unit/scheduler/test_scheduler_policies.py's EQUI sequence: A acks at 1.0 and is resized at 1.0 (B's arrival);
    # at C's arrival A acks at 2.0 but B can only finish (2.5): A is held 0.5 s, its synchronisation delay.
    jobs = [Job("A", 0, SevcikModel(8, 0, 0, 4), phases=4), Job("B", 0.6, SevcikModel(3, 0, 0, 4)),
            Job("C", 1.2, SevcikModel(0.5, 0, 0, 1))]
    delays = timeline_delays(simulate(jobs, "EQUI", 4).timeline)
    assert delays == [("A", pytest.approx(0.0)), ("A", pytest.approx(0.5))]
    assert cell_mean(delays, 0) == (pytest.approx(0.25), 2)
    assert cell_mean([(0, 1.0), (1, 3.0)], 1) == (3.0, 1)  # job 0 is warm-up
    assert math.isnan(cell_mean([], 0)[0])
    assert Estimate(math.nan).known is False


def reps_table(values: dict[str, list[float]], rate: float = 0.1, stat: str = "response") -> pd.DataFrame:
    """One row per policy and replication (run_stats.summarize's shape), replication r the same stream for all."""
    from experiments.reporting.run_stats import STATS

    rows = pd.DataFrame([{"policy": p, "rate": rate, "replication": r, stat: v}
                         for p, vs in values.items() for r, v in enumerate(vs)])
    return rows.assign(jobs=1, failed=0, **{s: float("nan") for s in STATS if s not in rows})


def test_pairing_narrows_the_interval_when_replications_share_streams():
    from experiments.reporting.cell_claims import Run
    from experiments.reporting.claims import Method
    from experiments.reporting.run_stats import cell_table

    # Each replication's stream moves both policies alike (+-40 s); Folding is 10% below RA in every one.
    shared = [60.0, 140.0, 90.0, 115.0]
    reps = reps_table({"RA": shared, "FOLDING": [0.9 * s for s in shared]})
    cells_ = cell_table(reps)
    claim = {**BELOW, "rates": [0.1]}
    paired = gap_at(Run(cells_, reps), claim, 0.1)
    welch = gap_at(Run(cells_, reps, paired=False), claim, 0.1)
    assert paired.value == pytest.approx(0.1) and welch.value == pytest.approx(0.1)
    assert (paired.test, paired.n, welch.test) == (Method.PAIRED, 4, Method.WELCH)
    assert paired.half_width < 1e-9 < welch.half_width  # the stream's noise cancels from the pairs
    assert judge(claim, cells_, [0.1], reps).verdict is Verdict.HOLDS
    assert judge(claim, Run(cells_, reps, paired=False), [0.1]).verdict is Verdict.UNRESOLVED
    assert "paired t, n = 4" in judge(claim, cells_, [0.1], reps).detail


def test_one_replication_is_unresolved_whatever_its_point():
    from experiments.reporting.run_stats import cell_table

    reps = reps_table({"RA": [100.0], "FOLDING": [50.0]})
    v = judge({**BELOW, "rates": [0.1]}, cell_table(reps), [0.1], reps)
    assert v.verdict is Verdict.UNRESOLVED and v.ours == "by 50%"


def test_a_comparison_against_a_figure_zero_by_construction_is_labelled_not_counted():
    from experiments.reporting.run_stats import cell_table

    reps = reps_table({"EQUI": [0.4, 0.6, 0.5], "FOLDING": [0.0, 0.0, 0.0]}, stat="sync_delay")
    cells_ = cell_table(reps)
    claim = {"text": "t", "metric": "sync_delay", "lower": "FOLDING", "than": "EQUI"}
    v = judge(claim, cells_, [0.1], reps)
    assert v.verdict is Verdict.BY_CONSTRUCTION and "FOLDING's sync_delay is 0 in every replication" in v.words


def test_across_figures_a_reversed_sign_never_holds():
    # The paper: Folding's gain narrows from 19% (Fig. 8) to 9% (Fig. 9). Measured: RA wins in both,
    # by 19% and 48%: the change has the claimed sign but the gains are reversed, so the claim fails.
    fig8 = cells({("RA", 0.1): 100.0, ("FOLDING", 0.1): 119.0})
    fig9 = cells({("RA", 0.1): 100.0, ("FOLDING", 0.1): 148.0})
    claim = {**BELOW, "larger": "fig8", "smaller": "fig9"}
    v = judge_across(claim, {"fig8": fig8, "fig9": fig9}, {"fig8": [0.1], "fig9": [0.1]})
    assert v.verdict is Verdict.FAILS
    assert [c.verdict for c in v.checks] == [Verdict.FAILS, Verdict.FAILS, Verdict.HOLDS]
    assert "change fig9 → fig8: 29%" in v.detail
