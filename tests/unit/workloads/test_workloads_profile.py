"""The profiler's bookkeeping and outputs, from given samples (the runs themselves are integration)."""
from __future__ import annotations

import csv
import json

import pytest

from workloads.host.profile import DPI, FIGSIZE_IN, Profile, ProfileSpec, Sample, program, speedup_figure, write


def test_spec_validation():
    with pytest.raises(ValueError):
        ProfileSpec("nbody", (1, 2))
    with pytest.raises(ValueError):
        ProfileSpec("cg", ())
    assert program("cg", ["--n", "300"]) == ["python3", "-m", "workloads.cg", "--n", "300"]


def test_curve_and_fit_files(tmp_path):
    spec = ProfileSpec("cg", (1, 2, 4), reps=2, args=("--n", "300"))
    profile = Profile(spec, [Sample(1, 0, 8.0, 9.0), Sample(1, 1, 8.2, 9.1), Sample(2, 0, 4.5, 5.0),
                             Sample(2, 1, 4.3, 5.0), Sample(4, 0, 2.9, 3.5), Sample(4, 1, 3.1, 3.6)])
    assert profile.mean_times()[1] == pytest.approx(8.1)
    assert profile.speedups()[4] == pytest.approx(8.1 / 3.0)
    paths = write(profile, tmp_path)
    rows = list(csv.DictReader(paths["curve.csv"].open()))
    assert [int(r["p"]) for r in rows] == [1, 2, 4]
    model = profile.fit()
    for r in rows:
        assert float(r["fit_time_s"]) == pytest.approx(model.predict(int(r["p"])))
        assert float(r["fit_rel_error"]) == pytest.approx(
            (float(r["fit_time_s"]) - float(r["mean_time_s"])) / float(r["mean_time_s"]))
    fit = json.loads(paths["fit.json"].read_text())
    assert fit["work_s"] == pytest.approx(model.work_s)
    assert len(list(csv.DictReader(paths["samples.csv"].open()))) == 6
    # what the figure shows: its size in pixels, and this profile's speedups as the measured line
    import matplotlib.image
    import matplotlib.pyplot as plt
    pixels = matplotlib.image.imread(paths["speedup.png"])
    assert pixels.shape[:2] == (FIGSIZE_IN[1] * DPI, FIGSIZE_IN[0] * DPI)
    fig = speedup_figure(profile, model)
    measured = fig.axes[0].lines[0]
    assert list(measured.get_xdata()) == [1, 2, 4]
    assert list(measured.get_ydata()) == pytest.approx([profile.speedups()[p] for p in (1, 2, 4)])
    fitted = fig.axes[0].lines[1].get_ydata()
    assert fitted[-1] == pytest.approx(model.predict(1) / model.predict(4))
    plt.close(fig)
    assert pixels[..., :3].std() > 0.05  # not a blank canvas
