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


def test_a_profile_stored_before_the_set_up_term_is_refitted_from_its_samples():
    samples = [{"p": p, "time_s": 10.0 / p, "done_s": 10.0 / p + 0.2 + 1.6 / p} for p in (1, 2, 4)]
    fit = stored_fit({"launch_s": 0.7, "launch_per_proc_s": 0.0, "samples": samples})
    assert fit["setup_work_s"] == pytest.approx(1.6, abs=1e-6) and fit["launch_s"] == pytest.approx(0.2, abs=1e-6)
    kept = stored_fit({"launch_s": 0.7, "setup_work_s": 0.0, "samples": samples})
    assert kept == {"launch_s": 0.7, "launch_per_proc_s": 0.0, "setup_work_s": 0.0}


def test_bad_input_names_the_field():
    with pytest.raises(ValueError, match="procs/extra_s"):
        fit_launch([1, 2], [0.1])
