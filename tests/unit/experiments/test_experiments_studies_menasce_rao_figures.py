"""Menascé & Rao Figs. 4-6: the sweeps, their time scaling, the predictions on the cluster's spec,
and the report (Markdown, CSV, PNG) from hand-made results."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest

from experiments.studies.menasce_rao.figures import PointResult, estimate_s, predict_point
from experiments.studies.menasce_rao.figures_report import write
from experiments.studies.menasce_rao.measure import Planned, Prediction
from experiments.studies.menasce_rao.owner_use import OwnerUse
from experiments.studies.menasce_rao.paper import CLASSES, TIME_SCALE
from experiments.studies.menasce_rao.sweeps import (BASELINE_D_S, BASELINE_N, BASELINE_Z_S, SWEEPS, Point, curve,
                                                    figures, point, points)
from testbed.spec import load

SPEC = Path(__file__).resolve().parents[3] / "compose" / "specs" / "menasce-rao.toml"


def test_each_figure_moves_one_knob_from_the_papers_baseline():
    for fig, sweep in SWEEPS.items():
        for kind in CLASSES:
            c = curve(fig, kind)
            assert [x for x, _ in c] == sorted(x for x, _ in c) == [float(v) for v in sweep.values]
            for x, p in c:
                assert p.kind == kind and p.value(sweep.parameter) == x
                rest = {"N": BASELINE_N, "D": BASELINE_D_S, "Z": BASELINE_Z_S}
                del rest[sweep.parameter]
                assert all(p.value(k) == v for k, v in rest.items())
    # Fig. 5 has the two N the text quotes; every curve passes through the baseline
    assert {1, 5} <= set(SWEEPS[5].values)
    assert all(point("LX", "N", BASELINE_N) in [p for _x, p in curve(f, "LX")] for f in SWEEPS)


def test_the_baseline_is_one_point_shared_by_the_three_figures():
    every = points([4, 5, 6])
    assert len(every) == len(set(every)) == 3 * (1 + sum(len(s.values) - 1 for s in SWEEPS.values()))
    assert len(points([5])) == 3 * len(SWEEPS[5].values)
    assert [p.kind for p in every[:3]] == ["LX"] * 3  # class by class


def test_the_daemons_run_the_papers_owners_scaled_in_time():
    o = Point("LX", 5, 2.0, 20.0).owners()
    assert (o.n, o.d, o.z) == (5, pytest.approx(2.0 * TIME_SCALE), pytest.approx(20.0 * TIME_SCALE))


@pytest.mark.parametrize("text, message", [
    ("7", "--figures: 7 is not one of the §5 figures (4, 5, 6)"),
    ("", "--figures: none is not one of the §5 figures"),
    ("4,x", "--figures: expected figure numbers like 4,5,6, got '4,x'"),
])
def test_a_bad_figure_list_names_the_option(text, message):
    with pytest.raises(ValueError) as e:
        figures(text)
    assert str(e.value).startswith(message)
    assert figures("6, 4,4") == [4, 6]


def test_predictions_on_the_spec_grow_with_the_owners_and_scale_with_the_class():
    c = Planned(load(SPEC))
    light, heavy = (predict_point(c, Point("SPARC20", n, 1.0, 5.0)) for n in (1, 5))
    assert light.workstations == CLASSES["SPARC20"] and light.measured_s == () and light.error is None
    assert heavy.prediction.tgs_s > 2.5 * light.prediction.tgs_s  # eq. 7: 1/p0 is 3.51 at N = 5, 1.2 at N = 1
    assert light.prediction.mc_s == pytest.approx(light.prediction.tgs_s, rel=0.15)
    assert light.prediction.tgs_profiled_s is None
    # profiled speeds 20% under the spec's: TGS at them is longer, the placement is the same
    slow = predict_point(c, Point("SPARC20", 1, 1.0, 5.0), profiled={"SPARC20": 0.265 * 0.8})
    assert slow.prediction.placement == light.prediction.placement
    assert slow.prediction.tgs_profiled_s > 1.15 * slow.prediction.tgs_s
    lx = predict_point(c, Point("LX", 1, 1.0, 5.0))
    assert lx.prediction.tgs_s / light.prediction.tgs_s == pytest.approx(2.65, rel=0.05)
    assert estimate_s([light, heavy], 2) == pytest.approx(2 * (light.prediction.mc_s + heavy.prediction.mc_s + 4.0))


def result(p: Point, mc_s: float, measured: tuple[float, ...] = (), uses: tuple[OwnerUse, ...] = ()) -> PointResult:
    return PointResult(p, CLASSES[p.kind], Prediction({}, mc_s * 0.95, None, mc_s, mc_s * 0.01), measured, uses)


def test_the_report_gives_each_point_measured_and_predicted(tmp_path):
    uses = (OwnerUse("ws1", 1.2, 40.0, 0.1), OwnerUse("ws2", 0.4, 40.0, 0.1))  # U 0.3 and 0.1
    results = [result(Point("LX", 1, 1.0, 5.0), 40.0, (44.0, 40.0, 42.0), uses),
               result(Point("LX", 2, 1.0, 5.0), 50.0, (50.0, 52.0)),
               result(Point("LX", 5, 1.0, 5.0), 120.0)]
    assert results[0].median_s == 42.0 and results[0].error == pytest.approx(-2 / 42)
    md = write(results, [5], tmp_path, "nowlab taskgraph figures --figures 5").read_text()
    assert "# Menascé & Rao (1996), Figs. 5, live" in md
    # the owners' U: M/M/1//1 with D 0.2 s, Z 1 s (the paper's 1 and 5, x0.2) is D / (D + Z) = 0.167
    assert "| 1 | LX | 42.00 (40.00-44.00) | 40.00 ± 0.40 | 38.00 | n/a | -4.8% | 0.167 / 0.200 |" in md
    assert "| 5 | LX | not run | 120.00 ± 1.20 | 114.00 | n/a | n/a | 0.715 / n/a |" in md
    assert "`nowlab taskgraph figures --figures 5`" in md and "![Figs. 5](figures.png)" in md
    with (tmp_path / "figures.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [(r["n"], r["figures"], r["owner_d_s"], r["measured_median_s"], r["reps"]) for r in rows] == \
        [("1", "5", "0.2", "42.000", "3"), ("2", "5", "0.2", "51.000", "2"), ("5", "5", "0.2", "", "0")]
    assert [(r["owner_u_model"], r["owner_u_measured"]) for r in rows][::2] == [("0.1667", "0.2000"), ("0.7151", "")]
    assert (tmp_path / "figures.png").stat().st_size > 10_000
    # nothing measured: the title says so
    assert "predicted only (not run live yet)" in write(results[2:], [5], tmp_path, "cmd").read_text()


def test_the_owners_utilisation_is_their_cpu_time_over_wall_time_and_cores():
    from experiments.studies.menasce_rao.owner_use import OwnerUse, mean_utilisation, model_utilisation
    from testbed.spec import OwnerLoad
    assert OwnerUse("ws1", 3.0, 60.0, 0.25).utilisation == pytest.approx(0.2)
    assert mean_utilisation([OwnerUse("a", 3.0, 60.0, 0.25), OwnerUse("b", 6.0, 60.0, 0.25)]) == pytest.approx(0.3)
    assert model_utilisation(OwnerLoad(n=1, z=4.0, d=1.0)) == pytest.approx(0.2)  # D / (D + Z)
    assert model_utilisation(OwnerLoad(n=0, z=4.0, d=1.0)) == 0.0
