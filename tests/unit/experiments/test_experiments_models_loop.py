"""The loop fit brings each profile run to the profile's reference speed before fitting."""
import pytest

from experiments.models import loop
from experiments.models.launch import stored_fit


def samples(times, speeds):
    return [{"p": p, "rep": 0, "time_s": t, "done_s": t + 0.5, "wall_s": t + 0.6, "ref_speed": s}
            for (p, t), s in zip(times, speeds)]


def true_T(p, W=20.0, alpha=1.0, beta=0.1):
    return W / p + alpha + beta * p


def test_runs_at_other_speeds_fit_as_if_at_the_reference():
    # the same loop measured at 0.8x and 1.25x the reference speed takes 1/0.8 and 1/1.25 the time
    ref = 0.4
    procs = [1, 2, 4, 8, 1, 2, 4, 8]
    speeds = [0.32, 0.5, 0.32, 0.5, 0.5, 0.32, 0.5, 0.32]
    meas = [(p, true_T(p) * ref / s) for p, s in zip(procs, speeds)]
    f = loop.fit(samples(meas, speeds), ref)
    assert (f.work_s, f.alpha_s, f.beta_s) == pytest.approx((20.0, 1.0, 0.1), rel=1e-6)
    raw = loop.fit(samples(meas, [None] * 8), ref)  # no speeds: fitted as measured, and off
    assert abs(raw.work_s - 20.0) > 0.5


def test_stored_profile_is_refitted_per_unit_of_demand():
    ref = 0.4
    procs = [1, 2, 4, 8]
    meas = [(p, 2 * true_T(p)) for p in procs]  # profiled at demand 2
    profile = {"W": 99.0, "alpha": 9.0, "beta": 9.0, "demand": 2.0, "ref_speed": ref,
               "samples": samples(meas, [ref] * 4)}
    assert loop.stored(profile) == pytest.approx((20.0, 1.0, 0.1), rel=1e-6)
    assert loop.stored({"W": 3.0, "alpha": 2.0, "beta": 1.0}) == (3.0, 2.0, 1.0)  # no samples: as stored


def test_launch_fit_uses_the_same_normalisation():
    ref = 0.4
    base = samples([(1, 10.0), (2, 6.0), (4, 4.0), (8, 3.0)], [ref] * 4)
    slow = [{**s, "time_s": s["time_s"] * 2, "done_s": s["done_s"] * 2, "ref_speed": ref / 2} for s in base]
    a = stored_fit({"samples": base, "ref_speed": ref, "startup_s": 0.1})
    b = stored_fit({"samples": slow, "ref_speed": ref, "startup_s": 0.1})
    assert a == pytest.approx(b)


def test_run_sigma_is_the_pooled_log_sd_of_repeated_runs_at_the_reference():
    import math
    ref = 0.4
    # p=1 ran at 10 and 12.1 s (log gap ln 1.21); p=2 once (no degree of freedom); p=4 at the
    # same loop time twice, once at half the speed (twice as long): the same at the reference
    runs = [(1, 10.0, ref), (1, 12.1, ref), (2, 6.0, ref), (4, 3.0, ref), (4, 6.0, ref / 2)]
    s = [{"p": p, "time_s": t, "ref_speed": v} for p, t, v in runs]
    gap = math.log(1.21)
    # p=1: squares (gap/2)^2 * 2 on 1 dof; p=4: 0 on 1 dof -> sqrt(gap^2 / 2 / 2)
    assert loop.run_sigma(s, ref) == pytest.approx(math.sqrt(gap ** 2 / 4))
    assert loop.run_sigma(s[:3], ref) == pytest.approx(gap / math.sqrt(2))
    assert loop.run_sigma([s[2]], ref) == 0.0


def test_hellos_are_the_median_per_size_at_the_reference_speed():
    ref = 0.4
    s = [{"p": 1, "time_s": 10.0, "hello_s": 3.0, "ref_speed": ref}, {"p": 1, "time_s": 10.0, "hello_s": 4.0, "ref_speed": ref},
         {"p": 2, "time_s": 5.0, "hello_s": 2.0, "ref_speed": ref / 2}]  # at half speed: 1.0 s at the reference
    assert loop.hellos(s, ref) == ((1, 3.5), (2, 1.0))
    assert loop.hellos([{"p": 1, "time_s": 1.0}], ref) == ()  # profiled before hellos were recorded
