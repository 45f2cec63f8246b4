"""Confidence-interval arithmetic for independent replications."""
from __future__ import annotations

import math

import pytest

from experiments.reporting.stats import replications_needed, t_interval


def test_interval_by_hand():
    # mean 3, s = sqrt(2.5), t_{4, 0.975} = 2.776445; half-width = t * s / sqrt(5)
    iv = t_interval([1.0, 2.0, 3.0, 4.0, 5.0], 0.95)
    assert iv.mean == pytest.approx(3.0)
    assert iv.half_width == pytest.approx(2.776445 * math.sqrt(2.5) / math.sqrt(5), rel=1e-6)
    assert iv.rel_half_width == pytest.approx(iv.half_width / 3.0)


def test_two_samples_use_t_with_one_degree_of_freedom():
    iv = t_interval([10.0, 12.0], 0.95)
    # s = sqrt(2), t_{1, 0.975} = 12.7062
    assert iv.half_width == pytest.approx(12.706205 * math.sqrt(2) / math.sqrt(2), rel=1e-6)
    assert not iv.meets(0.05)


def test_single_sample_has_no_precision():
    iv = t_interval([4.2])
    assert iv.mean == 4.2 and math.isinf(iv.half_width) and not iv.meets(0.05)


def test_meets_the_five_percent_rule():
    assert t_interval([100.0, 101.0, 99.0, 100.5, 99.5]).meets(0.05)
    assert not t_interval([100.0, 150.0, 60.0]).meets(0.05)


def test_replications_needed_reaches_target():
    samples = [100.0, 110.0, 95.0]
    n = replications_needed(samples, 0.05)
    assert n > 3
    # with the same mean and s, n replications meet the target and n - 1 do not
    mean = sum(samples) / 3
    s = math.sqrt(sum((x - mean) ** 2 for x in samples) / 2)
    from scipy.stats import t
    assert t.ppf(0.975, n - 1) * s / math.sqrt(n) <= 0.05 * mean
    assert t.ppf(0.975, n - 2) * s / math.sqrt(n - 1) > 0.05 * mean
    assert replications_needed([100.0, 100.1, 99.9, 100.0], 0.05) == 4


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="at least one"):
        t_interval([])
    with pytest.raises(ValueError, match="confidence"):
        t_interval([1.0, 2.0], 1.5)
    with pytest.raises(ValueError, match="two replications"):
        replications_needed([1.0], 0.05)
