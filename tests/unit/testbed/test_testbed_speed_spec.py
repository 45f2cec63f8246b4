"""Speeds in reference cores: spec fields, placement's one-line refusals, delivered speed."""
from __future__ import annotations

import warnings

import pytest

from testbed.meter import QuotaRow, Sample, delivered_speed, measure, Smoother
from testbed.placement import place
from testbed.spec import SpecError, from_dict


def spec(*ws: dict, **top: object) -> object:
    return from_dict({"name": "t-speed", "workstation": list(ws), **top})


def test_speed_and_cpu_together_refused() -> None:
    with pytest.raises(SpecError, match=r"^workstation\[0\]: give either speed .* or cpu, not both$") as exc:
        spec({"name": "a", "speed": 0.2, "cpu": 0.1})
    assert "\n" not in str(exc.value)


def test_bad_speed_names_field() -> None:
    with pytest.raises(SpecError, match=r"^workstation\[0\]\.speed: must be > 0"):
        spec({"name": "a", "speed": 0})


def test_defaults_speed_and_governor() -> None:
    s = spec({"name": "a"}, {"name": "b", "cpu": 0.2}, defaults={"speed": 0.1, "governor": False})
    assert s.speed("a") == 0.1 and s.speed("b") is None
    assert not s.governed("a") and s.cpu("b") == 0.2


def test_cpu_specs_unchanged(hetero4_spec) -> None:
    p = place(hetero4_spec, [0, 1])
    assert p.cpu is None and p.resolve(hetero4_spec) is hetero4_spec


def test_placement_resolves_speed_to_cores() -> None:
    s = spec({"name": "a", "speed": 0.1}, {"name": "b", "speed": 0.1}, {"name": "c", "cpu": 0.1})
    p = place(s, [0, 1], {}, {0: 2.0, 1: 1.5})
    r = p.resolve(s)
    assert p.cores["a"] != p.cores["b"]
    for n in ("a", "b"):
        f = p.factor[n]
        assert r.nominal_cpu(n) == pytest.approx(0.1 / f)
        assert r.cpu(n) == pytest.approx(0.1 / (0.6 * f), rel=1e-3)  # reserved: enough at 0.6x factor
        assert r.governed(n)


def test_speed_too_large_is_one_line_naming_workstation() -> None:
    s = spec({"name": "small", "speed": 0.1}, {"name": "big", "speed": 1.6})
    with pytest.raises(SpecError) as exc:
        place(s, [0, 1], {1: 0.5}, {0: 2.0, 1: 2.0})
    msg = str(exc.value)
    assert "\n" not in msg
    assert msg.startswith("workstation big: speed 1.600 reference cores asked, 1.440 available")


def test_thin_headroom_warns() -> None:
    s = spec({"name": "a", "speed": 1.2})
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        place(s, [0], {}, {0: 2.0})
    assert any("thin headroom" in str(x.message) for x in w)


def test_delivered_speed_integrates_quota_times_factor() -> None:
    samples = [Sample(float(t), 0, "multiply", 2.0 if t < 10 else 1.0) for t in range(0, 20)]
    quotas = [QuotaRow(0.0, "a", 0, 0.05, 2.0, 0.1, 1.0, False), QuotaRow(10.0, "a", 0, 0.1, 1.0, 0.1, 1.0, False)]
    d = delivered_speed(samples, quotas, "a", 0.0, 20.0)
    assert d.status == "metered" and d.speed == pytest.approx(0.1, rel=0.02)
    d = delivered_speed(samples, [quotas[0]], "a", 0.0, 20.0)  # quota not raised: half speed after t=10
    assert d.speed == pytest.approx(0.075, rel=0.03)


def test_missing_meter_reports_raw_only() -> None:
    quotas = [QuotaRow(0.0, "a", 0, 0.05, None, 0.1, 1.0, True)]
    d = delivered_speed([], quotas, "a", 0.0, 5.0)
    assert d.speed is None and d.status == "no meter samples" and d.quota_cores == pytest.approx(0.05)
    assert delivered_speed([], [], "a", 0.0, 5.0).status == "no quota record"


def test_meter_sample_is_cheap_and_plausible() -> None:
    """A sample costs a few ms of CPU. The bound here is a sanity check (under 4% of a core at the
    keeper's two samples a second): the 2% target sits at the edge on this host (about 10 ms a
    sample, idle), so it is benchmarks/bench_meter_cost.py's figure, not a timed test."""
    sm = Smoother()
    costs = []
    for k in ("multiply", "matvec") * 5:
        s = measure(0, k, sm.sample_ref_s(0, k))  # sized as the keeper sizes them
        sm.add(s)
        costs.append(s.cpu_s)
        assert 0.3 < s.factor < 10
    median = sorted(costs)[len(costs) // 2]
    assert median * 2 < 0.04, f"median sample {median * 1e3:.1f} ms: above 4% of a core at 2 samples/s"
    assert sm.factor(0) is not None and sm.factor(1) is None


def test_governor_off_fixes_the_cap_at_speed_over_factor() -> None:
    s = spec({"name": "a", "speed": 0.1}, defaults={"governor": False})
    p = place(s, [0], {}, {0: 2.0})
    r = p.resolve(s)
    assert r.cpu("a") == pytest.approx(0.05) and not r.governed("a")


def test_keeper_targets_from_a_placed_spec() -> None:
    from testbed.keeper import targets
    s = spec({"name": "a", "speed": 0.1}, {"name": "b", "cpu": 0.1})
    r = place(s, [0, 1], {}, {0: 2.0, 1: 2.0}).resolve(s)
    t = targets(r)
    assert set(t) == {"a"}
    assert t["a"].nominal == pytest.approx(0.05) and t["a"].budget == pytest.approx(0.1 / 1.2, rel=1e-3)


def test_speed_placement_needs_factors() -> None:
    with pytest.raises(SpecError, match="measured factors"):
        place(spec({"name": "a", "speed": 0.1}), [0])


def test_speeds_held_for_one_kernel_read_that_kernels_factor_alone() -> None:
    """A cluster of multiply-bound jobs names its kernel: on zb4 the mean of both kernels held
    multiply at 0.23 of an asked 0.3 (docs/speed.md)."""
    from testbed.meter import factors_of

    samples = [Sample(float(i), 0, k, f, 0.007) for i, (k, f) in
               enumerate([("multiply", 0.8), ("matvec", 1.6), ("multiply", 0.9), ("matvec", 1.5), ("multiply", 0.85)])]
    assert factors_of(samples) == {0: pytest.approx((0.85 + 1.6) / 2)}  # each kernel's median, their mean
    assert factors_of(samples, "multiply") == {0: pytest.approx(0.85)}
    assert factors_of(samples, "matvec") == {0: pytest.approx(1.6)}
    sm = Smoother(alpha=1.0)
    for s in samples:
        sm.add(s)
    assert sm.factor(0, now=5.0) == pytest.approx((0.85 + 1.5) / 2)
    assert sm.factor(0, now=5.0, kernel="multiply") == pytest.approx(0.85)
    assert spec({"name": "a", "speed": 0.1}).kernel is None
    s = spec({"name": "a", "speed": 0.1}, defaults={"speed_kernel": "multiply"})
    assert s.kernel == "multiply"
    # placed by multiply's factor: a cap for 0.1 reference cores at 0.85 of them per core
    r = place(s, [0], {}, factors_of(samples, s.kernel)).resolve(s)
    assert r.nominal_cpu("a") == pytest.approx(0.1 / 0.85, rel=1e-3)
    with pytest.raises(ValueError, match="speed_kernel"):
        spec({"name": "a", "speed": 0.1}, defaults={"speed_kernel": "fft"})


def test_a_speed_refusal_reads_the_cores_again_and_keeps_each_best() -> None:
    """One low reading (the host lost a second of CPU) does not refuse a spec that fits the
    core's usual speed; a core that reads low every time is still refused, naming it."""
    from testbed.placement import SpeedRefused, place_on_readings

    s = spec({"name": "a", "speed": 0.8}, {"name": "b", "speed": 0.8})
    readings = iter([{0: 1.0, 1: 2.0}, {0: 2.0, 1: 1.1}])  # each core slow once, never both fast at once
    calls = []

    def read() -> dict[int, float]:
        calls.append(1)
        return next(readings)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = place_on_readings(s, [0, 1], {}, read)
    assert len(calls) == 2 and p.factor == {"a": 2.0, "b": 2.0}  # the best of each core
    with pytest.raises(SpeedRefused, match=r"^workstation \w: speed 0.800 reference cores asked"):
        place_on_readings(s, [0, 1], {}, lambda: {0: 1.0, 1: 1.0}, readings=3)
    calls.clear()
    with pytest.raises(SpecError, match="no CPU cores") as exc:  # not a speed refusal: read once, refused at once
        place_on_readings(s, [], {}, lambda: calls.append(1) or {})
    assert not isinstance(exc.value, SpeedRefused) and len(calls) == 1
