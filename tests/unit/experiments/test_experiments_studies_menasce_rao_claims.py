"""The §5 remarks judged from hand-made curves: one set built to meet every remark, one to miss them."""
from __future__ import annotations

import pytest

from experiments.reporting.claims import Verdict
from experiments.studies.menasce_rao.claims import Remark, judged, section5
from experiments.studies.menasce_rao.figures import PointResult
from experiments.studies.menasce_rao.figures_report import write
from experiments.studies.menasce_rao.measure import Prediction
from experiments.studies.menasce_rao.paper import CLASSES
from experiments.studies.menasce_rao.sweeps import Point, points
from testbed.load.model import p0

BASE_S = {"LX": 26.5, "SPARC5": 13.0, "SPARC20": 10.0}


def paperlike(p: Point) -> float:
    """eq. 7's 1/p0 (convex in D and N, falling in Z), with LX's ratio to SPARC20 going 2.65 -> 2.9 over N."""
    lx_extra = 1 + (2.9 / 2.65 - 1) * (p.n - 1) / 4 if p.kind == "LX" else 1.0
    return BASE_S[p.kind] * lx_extra / p0(p.n, p.z_s, p.d_s)


def flat(p: Point) -> float:
    """Linear in D, LX's faster, nothing moves with N or Z: LX / SPARC20 26 / 11 = 2.36 at D = 1."""
    base = {"LX": 20.0, "SPARC5": 14.0, "SPARC20": 10.0}[p.kind]
    return base * (1 + {"LX": 0.3, "SPARC5": 0.1, "SPARC20": 0.1}[p.kind] * p.d_s)


def results(predicted, measured) -> list[PointResult]:
    return [PointResult(p, CLASSES[p.kind], Prediction({}, predicted(p), None, predicted(p), 0.1),
                        (measured(p), measured(p)) if measured else ())
            for p in points([4, 5, 6])]


def by_key(claims: list[Remark]) -> dict[str, Remark]:
    return {c.key: c for c in claims}


def pointing(claim) -> bool:
    """Every check's point estimate on the claimed side (what decided before intervals were required)."""
    return all(c.margin > 0 for c in claim.checks)


def test_curves_like_the_papers_meet_every_quantitative_remark():
    got = by_key(section5(results(paperlike, paperlike), [4, 5, 6]))
    # no interval on a median of a few runs: every claim unresolved, its point estimates on one side or the other
    assert {c.measured.verdict for c in got.values()} == {Verdict.UNRESOLVED}
    holds = {k: pointing(c.measured) for k, c in got.items()}
    assert holds == {"fig4-nonlinear": True, "fig4-slower": True, "fig4-slower-relative": False,
                     "fig5-similar": True, "fig5-n5": True, "fig5-n1": True, "fig5-growing": True,
                     "fig6-dramatic": True}
    assert got["fig5-n5"].measured.ours == "2.90x (+0%)" and got["fig5-n1"].measured.ours == "2.65x (+0%)"
    assert got["fig5-growing"].measured.ours == "2.65x at N = 1, 2.90x at N = 5 (+9.4%)"
    assert got["fig5-n5"].paper == "2.9x" and got["fig5-n5"].sentence.startswith("For example, at N = 5")
    assert "no interval: the point estimate on the claimed side at 3 of 3" in got["fig4-nonlinear"].measured.words


def test_flat_curves_miss_them_and_the_verdict_follows_the_measurement():
    got = by_key(section5(results(paperlike, flat), [4, 5, 6]))
    assert {k: pointing(c.measured) for k, c in got.items()} == {
        "fig4-nonlinear": False, "fig4-slower": True, "fig4-slower-relative": True, "fig5-similar": False,
        "fig5-n5": False, "fig5-n1": False, "fig5-growing": False, "fig6-dramatic": False}
    assert got["fig5-similar"].measured.ours.startswith("LX: first step flat")
    assert got["fig6-dramatic"].measured.ours.endswith("; not at every step")
    assert pointing(got["fig5-n1"].predicted) and not pointing(got["fig5-n1"].measured)
    assert got["fig5-n5"].measured.ours == "2.36x (-18%)"


def test_without_live_runs_the_verdict_is_the_models_and_says_so():
    got = by_key(section5(results(paperlike, None), [5]))
    assert set(got) == {"fig5-similar", "fig5-n5", "fig5-n1", "fig5-growing"}  # only the chosen figure's
    assert got["fig5-n5"].measured is None and got["fig5-n5"].words == "not measured (model: unresolved)"
    assert Remark("k", "s", "-", "t", None, None).words == "not run"
    assert Remark("k", "s", "-", "t", None, None).verdict is Verdict.NO_DATA
    assert judged("x", []).verdict is Verdict.NO_DATA


def test_a_missing_point_leaves_its_claim_unjudged():
    rs = [r for r in results(paperlike, paperlike) if not (r.point.kind == "SPARC20" and r.point.n == 5)]
    got = by_key(section5(rs, [5]))
    assert got["fig5-n5"].predicted is None and got["fig5-n5"].measured is None
    assert pointing(got["fig5-n1"].measured)


def test_the_report_has_the_claims_table_with_both_verdicts(tmp_path):
    md = write(results(paperlike, flat), [4, 5, 6], tmp_path, "cmd").read_text()
    row = next(line for line in md.splitlines() if line.startswith("| \"However, at N = 1"))
    assert row == ("| \"However, at N = 1, the degradation factor is 2.65.\" | 2.65x | LX / SPARC20 at N = 1 within "
                   "10% | 2.65x (+0%) (unresolved) | 2.36x (-11%) (unresolved) | **unresolved** |")
    # medians without an interval: every remark unresolved; Fig. 5's first steps are all flat, so no slope ratio
    # can be read (no data)
    assert md.count("**unresolved**") == 7 and md.count("**no data**") == 1
    assert "non-linear = the last step's slope at least 1.2x the first's" in md


@pytest.mark.parametrize("figs, keys", [([4], 3), ([6], 1), ([4, 5, 6], 8)])
def test_each_figure_brings_its_own_claims(figs, keys):
    assert len(section5(results(paperlike, None), figs)) == keys
