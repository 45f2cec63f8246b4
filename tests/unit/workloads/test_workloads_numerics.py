"""The CG problem, the compute unit, checkpoints and the Sevcik fit (pure logic, no MPI)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse.linalg

from workloads import cgdata, checkpoint, compute
from workloads.checkpoint import LocalState
from workloads.host import sevcik
from workloads.partition import block_bounds


@pytest.mark.parametrize("n", [300, 500])
def test_matrix_is_symmetric_positive_definite_and_row_blocks_agree(n):
    a = cgdata.matrix_rows(n, 0, n)
    assert np.array_equal(a, a.T)
    assert np.linalg.eigvalsh(a).min() >= cgdata.SHIFT / 2
    stacked = np.vstack([cgdata.matrix_rows(n, b.lo, b.hi) for b in block_bounds(n, 7)])
    assert np.array_equal(stacked, a)
    assert np.array_equal(np.concatenate([cgdata.rhs(n, b.lo, b.hi) for b in block_bounds(n, 3)]),
                          cgdata.rhs(n, 0, n))


def test_serial_cg_reaches_numpy_and_scipy_answers():
    n = 300
    a, b = cgdata.matrix_rows(n, 0, n), cgdata.rhs(n, 0, n)
    x, done = cgdata.serial_cg(a, b, 250)
    assert done == 250
    exact = np.linalg.solve(a, b)
    assert np.linalg.norm(x - exact) / np.linalg.norm(exact) < 1e-12
    x_scipy, info = scipy.sparse.linalg.cg(a, b, rtol=1e-13, maxiter=1000)
    assert info == 0
    assert np.linalg.norm(x - x_scipy) / np.linalg.norm(x_scipy) < 1e-10


def test_serial_cg_tolerance_stops_early():
    n = 300
    a, b = cgdata.matrix_rows(n, 0, n), cgdata.rhs(n, 0, n)
    x, done = cgdata.serial_cg(a, b, 1000, tol=1e-8)
    assert 0 < done < 250
    assert np.linalg.norm(b - a @ x) <= 1e-8 * np.linalg.norm(b)


def test_compute_unit_does_the_multiplies_it_claims():
    for n in (0, 1, compute.CHUNK, compute.CHUNK + 3, 10 * compute.CHUNK):
        applied = math.ceil(n / compute.CHUNK)  # element 0 is multiplied once per chunk pass
        assert compute.multiply(n) == pytest.approx(compute.FACTOR ** applied, rel=1e-15)


def test_calibration_gives_a_positive_rate():
    rate = compute.calibrate(seconds=0.05, probe_mults=10_000)
    assert rate > 1e5
    print(f"compute unit: {rate:.3e} multiplies/s on this host")


def test_checkpoint_round_trip(tmp_path):
    state = LocalState({"A": np.arange(12.0).reshape(3, 4), "x": np.ones(3)}, {"A": 9, "x": 9},
                       {"iteration": 17, "rho": 0.1 + 0.2})
    checkpoint.save(tmp_path, "job1", "ws2", state, ["ws1", "ws2", "ws3"])
    meta = checkpoint.read_meta(tmp_path, "job1", "ws2")
    assert meta["layout_hosts"] == ["ws1", "ws2", "ws3"]
    assert meta["scalars"] == {"iteration": 17, "rho": 0.1 + 0.2}  # exact float
    arrays = checkpoint.load_arrays(tmp_path, "job1", "ws2", meta["arrays"])
    assert np.array_equal(arrays["A"], state.arrays["A"]) and np.array_equal(arrays["x"], state.arrays["x"])
    assert checkpoint.read_meta(tmp_path, "job1", "ws1") is None
    checkpoint.remove(tmp_path, "job1", "ws2")
    assert checkpoint.read_meta(tmp_path, "job1", "ws2") is None


@pytest.mark.parametrize("bad", ["", "..", "a/b"])
def test_checkpoint_paths_stay_inside_the_root(tmp_path, bad):
    with pytest.raises(ValueError):
        checkpoint.host_dir(tmp_path, bad, "ws1")


def test_sevcik_fit_recovers_known_parameters():
    truth = sevcik.SevcikFit(work_s=12.0, alpha_s=0.4, beta_s=0.05)
    procs = [1, 1, 2, 2, 4, 4, 8, 8]
    times = [float(truth.predict(p)) for p in procs]
    got = sevcik.fit(procs, times)
    assert got.work_s == pytest.approx(12.0, rel=1e-9)
    assert got.alpha_s == pytest.approx(0.4, rel=1e-9)
    assert got.beta_s == pytest.approx(0.05, rel=1e-9)
    assert all(abs(pt.relative_error) < 1e-9 for pt in sevcik.errors(got, procs, times))
    assert got.best_p() == pytest.approx(math.sqrt(12.0 / 0.05))


def test_sevcik_fit_keeps_coefficients_non_negative():
    # times that a free least-squares fit would explain with a negative alpha
    procs = [1, 2, 4, 8]
    times = [10.0, 4.0, 1.5, 0.6]
    free = np.linalg.lstsq(np.column_stack([1 / np.array(procs), np.ones(4), procs]), times, rcond=None)[0]
    assert free[1] < 0
    got = sevcik.fit(procs, times)
    assert min(got.work_s, got.alpha_s, got.beta_s) >= 0
    for pt in sevcik.errors(got, procs, times):
        print(f"p={pt.p} measured={pt.measured_s} fit={pt.predicted_s:.3f} error={100 * pt.relative_error:+.1f}%")


def test_sevcik_fit_needs_three_points():
    with pytest.raises(ValueError):
        sevcik.fit([1, 2], [1.0, 0.5])
