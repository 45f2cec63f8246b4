"""The resize-ratio analysis: its crossover finder on cases whose answer is known, and the
model changes it sweeps (a resize-cost factor, W moved into alpha, the set-up scaled)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from experiments.models.resize import ResizeFit
from experiments.predict import ClassModel
from experiments.studies.padhye_dowdy.analyses.resize_ratio import (
    Variant, crossings, crossover, crossover_interval, fold_cost_s, locate, paired_ratio, paper_ratio, scaled,
    speedup, t1_s)

GRID = np.logspace(-5, 0, 21)


@settings(max_examples=40, deadline=None)
@given(root=st.floats(min_value=2e-5, max_value=0.5), slope=st.floats(min_value=0.05, max_value=5.0))
def test_a_curve_linear_in_log_x_gives_its_root_exactly(root: float, slope: float) -> None:
    y = 1.0 + slope * np.log(GRID / root)
    assert crossover(GRID, y) == pytest.approx(root, rel=1e-9)


@settings(max_examples=40, deadline=None)
@given(root=st.floats(min_value=2e-5, max_value=0.5), power=st.floats(min_value=0.1, max_value=3.0))
def test_a_monotone_power_law_is_bracketed_by_the_grid_cell_holding_its_root(root: float, power: float) -> None:
    y = (GRID / root) ** power  # reaches 1 at x = root
    found = crossover(GRID, y)
    eps = 1e-9  # a root on a grid point may be found a rounding error to either side of it
    cell_low, cell_high = GRID[GRID <= root * (1 + eps)].max(), GRID[GRID >= root * (1 - eps)].min()
    assert cell_low * (1 - eps) <= found <= cell_high * (1 + eps)
    assert found == pytest.approx(root, rel=0.35)  # within a quarter-decade cell, near the root


def test_a_band_of_half_width_d_in_log_ratio_crosses_at_root_times_e_to_the_minus_and_plus_d() -> None:
    root, d = 3e-3, 0.4
    y = 1.0 + np.log(GRID / root)
    (rel_from, start), (rel_to, end) = crossover_interval(GRID, y - d, y + d)
    assert (rel_from, rel_to) == ("=", "=")
    assert start == pytest.approx(root * math.exp(-d))
    assert end == pytest.approx(root * math.exp(d))


def test_locate_says_which_side_of_the_range_a_missing_crossover_lies() -> None:
    assert locate(GRID, np.full(len(GRID), 1.2)) == ("<", GRID[0])
    assert locate(GRID, np.full(len(GRID), 0.8)) == (">", GRID[-1])
    assert locate(GRID, np.linspace(1.5, 0.5, len(GRID))) == ("none", None)  # only falls through 1
    assert crossover(GRID, np.linspace(1.5, 0.5, len(GRID))) is None


def test_a_point_exactly_at_one_is_the_answer_and_a_noisy_curve_counts_its_crossings() -> None:
    y = np.array([0.9, 1.0, 1.1])
    assert crossover([1.0, 2.0, 4.0], y) == pytest.approx(2.0)
    assert crossings([0.9, 1.1, 0.95, 1.2]) == 3


def test_crossover_refuses_a_grid_that_is_not_increasing_and_positive() -> None:
    with pytest.raises(ValueError, match="increasing"):
        crossover([1.0, 1.0], [0.5, 1.5])
    with pytest.raises(ValueError, match="increasing"):
        crossover([0.0, 1.0], [0.5, 1.5])


def test_paired_ratio_of_identical_pairs_is_one_and_a_constant_ratio_has_no_spread() -> None:
    mean, lo, hi = paired_ratio([10.0, 20.0, 30.0], [10.0, 20.0, 30.0])
    assert (mean, lo, hi) == pytest.approx((1.0, 1.0, 1.0))
    mean, lo, hi = paired_ratio([12.0, 24.0, 6.0, 30.0], [10.0, 20.0, 5.0, 25.0])
    assert (mean, lo, hi) == pytest.approx((1.2, 1.2, 1.2))


def cg_like() -> ClassModel:
    fit = ResizeFit(fixed_s=0.1, per_proc_s=0.01, data_bytes=50e6, link_bit_s=1e8, release_s=0.7)
    return ClassModel(name="cg", W=17.0, alpha=4.0, beta=0.04, pmax=4, phases=100, resize=fit,
                      release_s=0.7, setup_work_s=3.5, hello_s=((1, 3.9), (4, 0.6)))


def test_scaling_the_resize_scales_the_fold_and_the_release_and_leaves_the_job_alone() -> None:
    m = cg_like()
    base = fold_cost_s(m, 8)
    assert fold_cost_s(scaled(m, 2.0), 8) == pytest.approx(2 * base)
    assert fold_cost_s(scaled(m, 0.0), 8) == 0.0
    assert scaled(m, 0.5).release_s == pytest.approx(0.35)
    assert t1_s(scaled(m, 3.0)) == pytest.approx(t1_s(m))


def test_moving_work_into_alpha_keeps_t1_and_flattens_the_speedup_and_setup_scales_the_pause() -> None:
    m = cg_like()
    flat = Variant(serial=0.25).apply(m)
    assert t1_s(flat) == pytest.approx(t1_s(m))
    assert speedup(flat, 4) < speedup(m, 4)
    quiet = Variant(setup_scale=0.0).apply(m)
    assert quiet.pause(1) == 0.0 and m.pause(1) == pytest.approx(3.9)


def test_the_papers_ratio_grows_with_its_bytes_and_its_range_holds_the_central_value() -> None:
    central, low, high = paper_ratio("fig7", 8, 4)
    assert low < central < high
    assert paper_ratio("fig6", 8, 4)[0] > 0  # 0.72 MB against CG 300's smaller work


def test_a_paper_volume_class_moves_n_squared_bytes_and_keeps_its_job_time() -> None:
    from experiments.config import ClassSpec
    from experiments.studies.padhye_dowdy.analyses.paper_volumes import rescaled

    old = ClassSpec.model_validate({"workload": "cg", "args": {"n": 2500, "iterations": 400}})
    new = ClassSpec.model_validate({"workload": "cg", "args": {"n": 300, "iterations": 25000}})
    m = cg_like()
    small = rescaled(m, old, new)
    assert small.resize.data_bytes == pytest.approx(m.resize.data_bytes * (300 / 2500) ** 2)
    assert small.setup_work_s == pytest.approx(m.setup_work_s * (300 / 2500) ** 2)
    assert small.phases == 25000 and t1_s(small) == pytest.approx(t1_s(m))
    assert 0.05 <= small.release_s < m.release_s
