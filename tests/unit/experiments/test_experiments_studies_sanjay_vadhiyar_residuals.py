"""The residuals analysis' batched fit (experiments/studies/sanjay_vadhiyar/analyses/residuals.py) is what its variant table rests on: it must match
scipy's NNLS and pick what sv_regression.fit picks, and its choice rule must keep the base fit
unless a variant is better by more than the noise of the comparison."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import nnls

from experiments.models.sv_model import SvModel
from experiments.models.sv_regression import fit
from experiments.studies.sanjay_vadhiyar.analyses import residuals


@pytest.fixture(scope="module")
def res():
    return residuals


def test_batched_nnls_matches_scipy_also_where_a_coefficient_is_held_at_zero(res):
    rng = np.random.default_rng(3)
    t = rng.uniform(1, 10, 12)
    c1 = rng.uniform(0, 5, (40, 12))
    c2 = np.where(np.arange(40)[:, None] % 2, -c1 + rng.normal(0, 0.1, (40, 12)), rng.uniform(0, 5, (40, 12)))
    coef, mape = res.nnls2(c1, c2, t)
    for k in range(40):
        want, _ = nnls(np.column_stack([c1[k], c2[k]]) / t[:, None], np.ones_like(t))
        assert coef[k] == pytest.approx(want, rel=1e-6, abs=1e-9)
        assert mape[k] == pytest.approx(np.mean(np.abs(c1[k] * want[0] + c2[k] * want[1] - t) / t))


def test_base_variant_picks_what_sv_regression_picks(res):
    truth = SvModel(application="s", problem_size_range=(500, 4000), f_comp="N^2", f_comm="N", f_cpu="x",
                    f_bw="sqrt x", f_pcomp="P", f_pcomm="1", a_comp_s=2e-5, a_comm_s=3e-3)
    rng = np.random.default_rng(1)
    rows = [(n, p, c, b, truth.predict_s(n, p, c, b) * rng.normal(1, 0.05))
            for n in (500, 1000, 2000, 4000) for p in (1, 2, 4, 8, 16)
            for c, b in ((1.0, 1e9), (rng.uniform(0.1, 1), rng.uniform(1e8, 1e9)))]
    runs = res.Runs(*(np.array(col, dtype=float) for col in zip(*rows)))
    runs = res.Runs(runs.n, runs.p, runs.cpu, runs.bw / 1e9, runs.t)
    model = fit(runs.training_runs(), "s")
    mine = res.fit_variant(runs, res.VARIANTS[0])
    assert mine.names == (model.f_comp, model.f_comm, model.f_pcomp, model.f_pcomm, model.f_cpu, model.f_bw)
    assert mine.coef == pytest.approx((model.a_comp_s, model.a_comm_s), rel=1e-4)
    assert mine.mape == pytest.approx(model.mape, rel=1e-6)


def test_loaded_workstations_counts_only_cpu_loads_on_the_jobs_machines(res):
    load = "cpu left ws1:19.7% ws5:67.9% ws12:17.8%; bw left ws3>ws9:66.2% ws1>ws12:7.6%"
    assert res.loaded_workstations("ws1 ws2 ws3 ws9 ws12", load) == 2
    assert res.loaded_workstations("ws2 ws3", load) == 0


def test_choice_keeps_base_unless_better_by_more_than_one_standard_error(res):
    base, other = res.VARIANTS[0], res.VARIANTS[1]
    fitted = res.Fitted(("1",) * 6, (1.0, 0.0), base, 0.0)
    rng = np.random.default_rng(0)
    base_loo = rng.normal(0, 0.2, 36)
    slightly = res.Scored(other, base_loo * 0.99 + rng.normal(0, 0.05, 36), fitted)
    clearly = res.Scored(other, base_loo * 0.5, fitted)
    assert res.choose([res.Scored(base, base_loo, fitted), slightly]).variant is base
    assert res.choose([res.Scored(base, base_loo, fitted), clearly]).variant is other
