"""The pure parts of the bias-with-load analysis, on synthetic frames and a small real replay."""
from __future__ import annotations

import math
import random

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from experiments.predict import ClassModel
from experiments.replay import CellReplay
from experiments.studies.padhye_dowdy.analyses import bias_with_load as b
from scheduler.jobs import SubmittedJob


def test_run_factor_is_the_geometric_mean_with_its_standard_error() -> None:
    rng = random.Random(1)
    logs = [rng.gauss(0.08, 0.1) for _ in range(400)]
    factor, se, n = b.run_factor(logs)
    assert n == 400
    assert factor == pytest.approx(math.exp(np.mean(logs)))
    assert se == pytest.approx(np.std(logs, ddof=1) / 20)
    assert abs(math.log(factor) - 0.08) < 3 * se
    assert b.run_factor([]) == (1.0, pytest.approx(math.nan, nan_ok=True), 0)


def _reps(errors: dict[float, float], replications: int, policies=("RA", "FOLDING")) -> pd.DataFrame:
    rows = []
    for rate, err in errors.items():
        for policy in policies:
            for rep in range(replications):
                measured = 10.0 + rep + rate
                rows.append({"run": "r", "policy": policy, "rate": rate, "replication": rep, "measured": measured,
                             "single": measured * (1 + err), "corrected": measured})
    return pd.DataFrame(rows)


def test_rate_errors_recover_each_rates_error_and_the_correction_removes_it() -> None:
    out = b.rate_errors(_reps({0.1: -0.17, 0.2: -0.12, 0.3: -0.14}, replications=3)).set_index("rate")
    assert out.error_single.to_dict() == pytest.approx({0.1: -0.17, 0.2: -0.12, 0.3: -0.14})
    assert out.error_corrected.abs().max() < 1e-12
    assert (out.error_single_ci < 1e-9).all()  # every replication has the same error: no spread
    assert "error_ensemble_before" not in out  # a side the frame lacks is not made up


def test_rate_errors_interval_is_nan_with_one_replication_and_wider_with_spread() -> None:
    one = b.rate_errors(_reps({0.1: 0.05}, replications=1))
    assert math.isnan(float(one.error_single_ci.iloc[0]))
    spread = _reps({0.1: 0.0}, replications=4)
    spread["single"] = spread.measured * (1 + 0.1 * (spread.replication - 1.5))
    assert float(b.rate_errors(spread).error_single_ci.iloc[0]) > 0.05


@settings(max_examples=25, deadline=None)
@given(hs.floats(-2, 2), hs.floats(-5, 5))
def test_slope_recovers_a_known_slope_within_its_interval(true: float, intercept: float) -> None:
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 3, 200)
    y = intercept + true * x + rng.normal(0, 0.05, 200)
    s = b.slope(x, y)
    assert s.n == 200 and s.lo <= s.slope <= s.hi
    assert abs(s.slope - true) < 0.03
    assert math.isnan(b.slope([1, 2], [1, 2]).slope)


def test_busy_on_cores_counts_other_jobs_workstations_on_shared_cores_over_the_span() -> None:
    core_of = {"ws1": 0, "ws3": 0, "ws2": 1, "ws4": 1}
    launches = pd.DataFrame([
        {"job": 0, "hosts": ("ws1",), "launched_at": 0.0, "exited_at": 10.0},
        {"job": 1, "hosts": ("ws3",), "launched_at": 5.0, "exited_at": 20.0},   # same core, half the span
        {"job": 2, "hosts": ("ws2", "ws4"), "launched_at": 0.0, "exited_at": 10.0},  # other core, whole span
        {"job": 3, "hosts": ("ws3",), "launched_at": 10.0, "exited_at": 30.0},  # after the span
    ])
    co, running = b.busy_on_cores(launches, core_of, 0, ("ws1",), 0.0, 10.0)
    assert co == pytest.approx(0.5)
    assert running == pytest.approx(1.5)
    co2, _ = b.busy_on_cores(launches, core_of, 0, ("ws1", "ws2"), 0.0, 10.0)  # both cores: per core
    assert co2 == pytest.approx((0.5 + 2.0) / 2)  # core 0: half of ws3; core 1: all of ws2 and ws4
    assert all(math.isnan(v) for v in b.busy_on_cores(launches, core_of, 0, ("ws1",), 5.0, 5.0))


def test_ceiling_share_counts_only_the_hosts_and_span_asked() -> None:
    q = pd.DataFrame({"t": [1.0, 2.0, 3.0, 4.0, 2.0, 9.0], "workstation": ["a", "a", "a", "a", "b", "a"],
                      "quota_cores": [0.2, 0.3, 0.3, 0.1, 0.3, 0.3], "ceiling": [0.3] * 6})
    assert b.ceiling_share(q, ["a"], 1.0, 4.0) == pytest.approx(0.5)
    assert b.ceiling_share(q, ["a", "b"], 1.0, 4.0) == pytest.approx(0.6)
    assert math.isnan(b.ceiling_share(q, ["c"], 0.0, 10.0))


def test_trend_sees_a_load_effect_within_runs_and_not_a_run_offset() -> None:
    rows = []
    for i, offset in enumerate((-0.15, 0.0, 0.08, -0.05)):
        for load, rate in enumerate((0.1, 0.2, 0.3), start=1):
            rows.append({"run": f"r{i}", "rate": rate + i / 100, "offset_only": offset,
                         "with_load": offset + 0.02 * load})
    table = b.with_rank(pd.DataFrame(rows))
    assert abs(b.trend(table, "offset_only").slope) < 1e-12
    assert b.trend(table, "with_load").slope == pytest.approx(0.02)
    assert b.top_less_bottom(table, "with_load") == pytest.approx([0.04] * 4)


def test_verdict_thresholds() -> None:
    assert b.verdict(0.6) == "explains"
    assert b.verdict(0.3) == "partly"
    assert b.verdict(0.1) == "does not explain"
    assert b.verdict(math.nan) == "cannot tell"


def test_log_ratio_ci_is_the_geometric_mean() -> None:
    g, lo, hi = b.log_ratio_ci(pd.Series([1.0, 4.0]), pd.Series([1.0, 1.0]))
    assert g == pytest.approx(2.0) and lo < 2.0 < hi


def test_work_factor_finds_the_work_that_makes_unresized_jobs_match() -> None:
    """Measured jobs made by the engine with every job's work x 1.2; a launch outside the work
    makes the execution factor smaller than 1.2, and the search still finds 1.2."""
    models = {"c": ClassModel("c", W=8.0, alpha=0.5, beta=0.0, pmax=4, launch_s=2.0)}
    stream = [SubmittedJob(i, "c", 40.0 * i) for i in range(6)]  # far apart: every job alone, unresized
    cells = [CellReplay(1, "RA", 0.025, 0, stream, 4, None, None, None, frozenset(range(6)))]
    measured = b.replay_frame(cells, models, 1.2).assign(delivered_speed=1.0)
    replay = b.replay_frame(cells, models)
    execution_factor = float(np.exp(np.mean(np.log(measured.execution / replay.execution))))
    assert 1.0 < execution_factor < 1.19
    work, frame = b.work_factor(cells, models, measured, execution_factor)
    assert work == pytest.approx(1.2, rel=0.005)
    assert np.allclose(frame.execution, measured.execution, rtol=0.01)
