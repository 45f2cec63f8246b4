"""Scaling a cluster's speeds to a slower host: ClusterSpec.scaled and testbed.speed_fit, hand-worked."""
from __future__ import annotations

import pytest

from testbed.placement import SpeedRefused
from testbed.spec import SpecError, from_dict
from testbed.speed_fit import MIN_SCALE, fit, fitting_scale


def now8(speed: float = 0.3) -> object:
    return from_dict({"name": "t-fit", "defaults": {"speed": speed},
                      "workstation": [{"name": "ws", "count": 8}]})


def test_scaled_multiplies_every_speed_and_leaves_raw_caps() -> None:
    s = from_dict({"name": "t-fit", "defaults": {"speed": 0.2},
                   "workstation": [{"name": "a", "speed": 0.4}, {"name": "b"}, {"name": "c", "cpu": 0.3}]})
    k = s.scaled(0.5)
    assert (k.speed("a"), k.speed("b"), k.speed("c")) == (0.2, 0.1, None)
    assert k.cpu("c") == 0.3 and k.names == s.names
    assert s.speed("a") == 0.4  # the original is untouched
    assert s.scaled(1.0) is s


@pytest.mark.parametrize("k", [0.0, -1.0, float("nan"), float("inf")])
def test_a_bad_scale_is_one_line_naming_the_field(k: float) -> None:
    with pytest.raises(SpecError, match=r"^speed_scale: must be > 0 and finite"):
        now8().scaled(k)


def test_now8_on_a_host_at_factor_1_05_runs_at_0_6() -> None:
    # A core holds 0.9 x 1.05 x 0.8 = 0.756 reference cores at placement's headroom; four
    # workstations a core: 0.6 x 0.3 x 4 = 0.72 fits, 0.65 x 0.3 x 4 = 0.78 does not.
    assert fitting_scale(now8(), [0, 1], {}, {0: 1.05, 1: 1.05}) == 0.6


def test_a_fast_enough_host_keeps_the_speeds() -> None:
    assert fitting_scale(now8(), [0, 1], {}, {0: 2.0, 1: 2.0}) == 1.0


def test_another_clusters_load_leaves_less_room() -> None:
    # Core 0 has 0.45 of its 0.9 taken: it holds 0.45 x 2.0 x 0.8 = 0.72 reference cores, core 1
    # 1.44, together 2.16 against the 2.4 that eight of 0.3 ask: k = 1 no longer fits.
    free = fitting_scale(now8(), [0, 1], {}, {0: 2.0, 1: 2.0})
    loaded = fitting_scale(now8(), [0, 1], {0: 0.45}, {0: 2.0, 1: 2.0})
    assert loaded is not None and loaded < free


def test_a_host_too_slow_for_any_scale_is_none() -> None:
    assert fitting_scale(now8(), [0, 1], {}, {0: 0.01, 1: 0.01}) is None
    assert MIN_SCALE > 0


def test_fit_reads_each_core_for_its_window_and_says_so() -> None:
    asked: list[tuple[list[int], float]] = []

    def read(cores: list[int], seconds: float) -> dict[int, float]:
        asked.append((cores, seconds))
        return {0: 1.05, 1: 1.1}

    got = fit(now8(), [0, 1], {}, read)
    assert asked == [([0, 1], 16.0)]
    assert got.scale == 0.6 and got.factors == {0: 1.05, 1: 1.1}
    line = got.describe(now8())
    assert "1.05, 1.10" in line and "at 0.6x (0.18)" in line and "1.7x as long" in line and "\n" not in line


def test_fit_of_a_spec_without_speeds_reads_nothing() -> None:
    raw = from_dict({"name": "t-fit", "workstation": [{"name": "a", "cpu": 0.3}]})
    got = fit(raw, [0, 1], {}, lambda cores, s: pytest.fail("read"))
    assert got.scale == 1.0


def test_fit_refuses_a_meter_that_read_nothing() -> None:
    with pytest.raises(SpeedRefused, match=r"^speed_scale: the meter read no usable factor"):
        fit(now8(), [0, 1], {}, lambda cores, s: {0: float("nan"), 1: 1.0})
