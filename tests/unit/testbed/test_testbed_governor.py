"""The governor's control law against scripted meters: it converges and does not oscillate."""
from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from testbed.governor import DEADBAND, MIN_QUOTA, Governor, Target

SPEED = 0.1  # reference cores


def gov(nominal: float = 0.05, budget: float = 0.15) -> Governor:
    return Governor({"ws1": Target(speed=SPEED, budget=budget, nominal=nominal)})


def run(g: Governor, factors: list[float | None], scale: float = 1.0) -> list[float]:
    return [g.step({"ws1": f}, {"ws1": scale})["ws1"].written for f in factors]


def sign_changes(xs: list[float]) -> int:
    d = [b - a for a, b in zip(xs, xs[1:]) if abs(b - a) > 1e-12]
    return sum(1 for a, b in zip(d, d[1:]) if (a > 0) != (b > 0))


def test_step_change_converges_monotonically() -> None:
    g = gov(nominal=SPEED / 2.0)
    qs = run(g, [2.0] * 5 + [1.25] * 20)
    assert qs[0] == pytest.approx(SPEED / 2.0)
    assert qs[-1] == pytest.approx(SPEED / 1.25, rel=DEADBAND)
    assert sign_changes(qs) == 0  # rises to the new quota without overshoot
    within = next(i for i, q in enumerate(qs) if abs(q - SPEED / 1.25) <= DEADBAND * SPEED / 1.25)
    assert within - 5 <= 8, f"took {within - 5} steps"


def test_slow_drift_is_followed() -> None:
    g = gov()
    factors = [2.0 - 0.005 * i for i in range(100)]  # 2.0 -> 1.5 over 100 steps
    qs = run(g, factors)
    for f, q in zip(factors[20:], qs[20:]):
        assert q * f == pytest.approx(SPEED, rel=0.05)


def test_noise_does_not_make_it_ring() -> None:
    rng = random.Random(1)
    g = gov()
    factors = [2.0 * (1 + rng.gauss(0, 0.002)) for _ in range(200)]  # noise inside the deadband
    qs = run(g, factors)
    assert len({round(q, 9) for q in qs[20:]}) == 1, "quota moved on noise below the deadband"


def test_budget_clamps_and_flags() -> None:
    g = gov(nominal=0.05, budget=0.08)
    out = [g.step({"ws1": 0.5})["ws1"] for _ in range(20)]  # would need 0.2 cores
    assert out[-1].quota == pytest.approx(0.08)
    assert out[-1].clamped


def test_meter_stops_quota_held_and_flagged() -> None:
    g = gov()
    run(g, [1.6] * 20)
    held = g.quotas["ws1"]
    steps = [g.step({"ws1": None})["ws1"] for _ in range(5)]
    assert all(s.stale and s.quota == held for s in steps)
    assert not g.step({"ws1": 1.6})["ws1"].stale


def test_cap_mode_scale_multiplies_the_governed_quota() -> None:
    g = gov()
    run(g, [2.0] * 20)
    s = g.step({"ws1": 2.0}, {"ws1": 0.25})["ws1"]
    assert s.written == pytest.approx(0.25 * s.quota)
    assert g.step({"ws1": 2.0}, {"ws1": 0.0})["ws1"].written == MIN_QUOTA


def test_bad_gain_refused() -> None:
    with pytest.raises(ValueError, match="gain"):
        Governor({}, gain=1.5)


@settings(max_examples=200, deadline=None)
@given(f0=st.floats(0.8, 3.0), f1=st.floats(0.8, 3.0), noise=st.floats(0, 0.05), seed=st.integers(0, 1000))
def test_any_step_converges_without_oscillating(f0: float, f1: float, noise: float, seed: int) -> None:
    """From any factor to any other, with noise: the delivered speed ends near its target, and
    the quota turns round at most as often as the noise forces (never a growing swing)."""
    rng = random.Random(seed)
    g = gov(nominal=SPEED / f0, budget=1.0)
    factors = [f0] * 10 + [f1 * (1 + rng.gauss(0, noise)) for _ in range(60)]
    qs = run(g, factors)
    tail = [q * f1 for q in qs[-20:]]
    assert sum(tail) / len(tail) == pytest.approx(SPEED, rel=DEADBAND + 2 * noise + 0.01)
    if noise == 0:
        assert sign_changes(qs) == 0
    swings = [abs(b - a) for a, b in zip(qs[30:], qs[31:])]
    assert max(swings, default=0) <= (0.5 * 6 * noise + DEADBAND) * max(qs) + 1e-12
