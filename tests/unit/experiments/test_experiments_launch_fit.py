"""The launch fit: launch_s + launch_per_proc_s·p + setup_work_s/p from profiled runs."""
from __future__ import annotations

import pytest

from experiments.models.launch import fit_launch, stored_fit


def test_set_up_split_among_the_ranks_is_found_and_kept_apart():
    procs = [1, 2, 4, 8] * 2
    extra = [0.1 + 0.01 * p + 2.4 / p for p in procs]
    fit = fit_launch(procs, extra)
    assert fit["launch_s"] == pytest.approx(0.1, abs=1e-6)
    assert fit["launch_per_proc_s"] == pytest.approx(0.01, abs=1e-6)
    assert fit["setup_work_s"] == pytest.approx(2.4, abs=1e-6)


def test_a_stored_profile_is_fitted_from_its_samples_with_its_start_up_paid_once():
    samples = [{"p": p, "time_s": 10.0 / p, "done_s": 10.0 / p + 0.3 + 1.6 / p} for p in (1, 2, 4)]
    fit = stored_fit({"launch_s": 0.7, "launch_per_proc_s": 0.0, "samples": samples, "startup_s": 0.25})
    assert fit["setup_work_s"] == pytest.approx(1.6, abs=1e-6) and fit["launch_s"] == pytest.approx(0.3, abs=1e-6)
    assert stored_fit({"launch_s": 0.7, "setup_work_s": 0.1}) == {"launch_s": 0.7, "launch_per_proc_s": 0.0,
                                                                  "setup_work_s": 0.1}  # no samples: as stored


def test_a_start_up_the_fit_cannot_see_is_not_paid_twice():
    """CG on now8: launch-to-done less the loop falls like 1/p and is below the start-up at p = 8.
    Fitted with the start-up inside, launch_s came out 0 and the simulator paid the start-up on top."""
    procs = [1, 2, 4, 8]
    extra = [3.0, 0.94, 0.45, 0.24]
    startup = 0.26
    fit = fit_launch(procs, extra, [20.0, 14.0, 9.5, 6.5], startup)
    paid = [startup + max(0.0, fit["launch_s"] - startup) + fit["launch_per_proc_s"] * p + fit["setup_work_s"] / p
            for p in procs]  # what experiments.predict.ClassModel charges at each p
    old = fit_launch(procs, extra)
    paid_old = [startup + max(0.0, old["launch_s"] - startup) + old["launch_per_proc_s"] * p + old["setup_work_s"] / p
                for p in procs]
    assert abs(paid[2] - extra[2]) < 0.67 * abs(paid_old[2] - extra[2])  # p = 4, where CG runs under RA
    assert abs(paid[3] - extra[3]) < abs(paid_old[3] - extra[3])


def test_each_run_weighs_as_a_share_of_its_length():
    procs, extra = [1, 4], [4.0, 0.4]  # a 1/p term cannot fit both: where it misses depends on the weights
    short = fit_launch(procs, extra, [40.0, 4.0])  # p = 4 runs are short: their error counts more
    plain = fit_launch(procs, extra)
    assert abs(short["setup_work_s"] / 4 - 0.4) < abs(plain["setup_work_s"] / 4 - 0.4)


def test_bad_input_names_the_field():
    with pytest.raises(ValueError, match="procs/extra_s"):
        fit_launch([1, 2], [0.1])
    with pytest.raises(ValueError, match="startup_s"):
        fit_launch([1, 2], [0.1, 0.2], startup_s=-1.0)


def test_the_pause_before_work_is_fitted_on_the_hellos_and_the_rest_apart():
    # start-up 0.2 s and set-up 1.0 s/p before hello; 0.3 s + 0.02 s/p more after the loop;
    # launch-to-done less the loop also holds 1.5 s/p of work after the loop that a hello-less
    # fit would take for set-up
    samples = [{"p": p, "time_s": 10.0 / p, "hello_s": 0.2 + 1.0 / p,
                "done_s": 10.0 / p + 0.2 + 1.0 / p + 0.3 + 0.02 * p + 1.5 / p} for p in (1, 2, 4, 8)]
    fit = stored_fit({"samples": samples, "startup_s": 0.9})
    assert fit["startup_s"] == pytest.approx(0.2, abs=1e-6) and fit["setup_work_s"] == pytest.approx(1.0, abs=1e-6)
    # what is left after the pause, 0.3 + 0.02 p + 1.5/p, is fitted as launch_s - startup + per_proc·p
    assert 0.2 + 0.3 < fit["launch_s"] < 0.2 + 0.3 + 1.5
    old = stored_fit({"samples": [{k: v for k, v in s.items() if k != "hello_s"} for s in samples], "startup_s": 0.2})
    assert old["setup_work_s"] > 2.0  # without hellos the work after the loop is taken for set-up
    assert "startup_s" not in old
