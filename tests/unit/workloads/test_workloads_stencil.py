"""The Jacobi stencil: its sweep against plain numpy and a direct solve, independent of the row
partition (pure, no MPI); and as real MPI jobs on the host's Open MPI, on 1 and 3 ranks and
resized 4 -> 2 -> 3 through the real control channel, always the same grid."""
from __future__ import annotations

import time
from typing import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workloads import stencildata as sd
from workloads.host.control_server import ControlServer
from workloads.host.launch import Launcher, LocalLauncher
from workloads.host.malleable import MalleableJob, parse_result
from workloads.host.pool_local import local_pool
from workloads.partition import block_bounds
from workloads.redistribution_plan import plan_moves, rows_over_network

RTOL = 1e-10


def plain_rhs(n: int) -> np.ndarray:
    """h²f written out directly: f = 1 + ((3i + 7j) mod 11) / 11, h = 1/(n+1)."""
    f = np.fromfunction(lambda i, j: 1.0 + ((3 * i + 7 * j) % 11) / 11.0, (n, n), dtype=np.int64)
    return f / (n + 1) ** 2


def plain_jacobi(u: np.ndarray, b: np.ndarray) -> np.ndarray:
    """One textbook sweep: the zero-framed grid with the top edge at TOP_VALUE."""
    g = np.pad(u, 1)
    g[0, 1:-1] = sd.TOP_VALUE
    return 0.25 * (g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:] + b)


def poisson_system(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The n² x n² five-point matrix (4 on the diagonal) and h²f plus the top boundary."""
    lap1 = 2 * np.eye(n) - np.eye(n, k=1) - np.eye(n, k=-1)
    a = np.kron(lap1, np.eye(n)) + np.kron(np.eye(n), lap1)
    rhs = plain_rhs(n)
    rhs[0] += sd.TOP_VALUE
    return a, rhs.ravel()


def blockwise_sweeps(u: np.ndarray, b: np.ndarray, parts: int, sweeps: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """`sweeps` sweeps of u split into `parts` row blocks, halos copied between blocks as the
    MPI program sends them, each block swept interior first and edge rows last as it does."""
    n = u.shape[0]
    blocks = block_bounds(n, parts)
    changes: list[np.ndarray] = []
    for _ in range(sweeps):
        new_u, change = np.empty_like(u), []
        for i, blk in enumerate(blocks):
            old = sd.padded(u[blk.lo:blk.hi])
            new = sd.padded(np.zeros((blk.rows, n)))
            if i == 0:
                sd.set_top_boundary(old)
            else:
                old[0, 1:-1] = u[blk.lo - 1]
            if i < parts - 1:
                old[-1, 1:-1] = u[blk.hi]
            scratch = np.empty((blk.rows, n))
            bb = b[blk.lo:blk.hi]
            sd.sweep_rows(old, new, bb, scratch, 1, blk.rows - 1)
            sd.sweep_rows(old, new, bb, scratch, 0, min(1, blk.rows))
            sd.sweep_rows(old, new, bb, scratch, max(1, blk.rows - 1), blk.rows)
            new_u[blk.lo:blk.hi] = new[1:-1, 1:-1]
            change.append(sd.change_row_sums(old, new, scratch))
        u = new_u
        changes.append(np.concatenate(change))
    return u, changes


def test_rhs_rows_are_the_plain_formula_in_any_split():
    n = 23
    whole = sd.rhs_rows(n, 0, n)
    np.testing.assert_allclose(whole, plain_rhs(n), rtol=1e-15, atol=0)
    assert np.array_equal(np.vstack([sd.rhs_rows(n, b.lo, b.hi) for b in block_bounds(n, 4)]), whole)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 24), data=st.data())
def test_a_blockwise_sweep_is_the_plain_sweep_bit_for_bit_in_any_partition(n, data):
    parts = data.draw(st.integers(1, n), label="parts")
    rng = np.random.default_rng(n * 100 + parts)
    u, b = rng.random((n, n)), sd.rhs_rows(n, 0, n)
    one, one_changes = blockwise_sweeps(u, b, 1, 3)
    split, split_changes = blockwise_sweeps(u, b, parts, 3)
    assert np.array_equal(split, one)  # every point summed in the same order, whoever holds it
    for a, c in zip(split_changes, one_changes):
        assert np.array_equal(a, c)  # per-row sums too, so the residual is partition-free
    expected = u
    for _ in range(3):
        expected = plain_jacobi(expected, plain_rhs(n))
    np.testing.assert_allclose(one, expected, rtol=1e-13, atol=1e-16)


def test_serial_jacobi_converges_to_the_direct_solution_and_its_residual_is_a_u_minus_b():
    n = 8
    a, rhs = poisson_system(n)
    exact = np.linalg.solve(a, rhs).reshape(n, n)
    u, done, residual = sd.serial_jacobi(n, 1500)
    assert done == 1500 and residual is not None
    assert np.linalg.norm(u - exact) / np.linalg.norm(exact) < 1e-12
    # the residual reported after 20 sweeps is that of the 19th iterate: 4 (u20 - u19) = b - A u19
    u19, _, _ = sd.serial_jacobi(n, 19)
    _, _, r20 = sd.serial_jacobi(n, 20, residual_every=20)
    assert r20 == pytest.approx(np.linalg.norm(rhs - a @ u19.ravel()), rel=1e-12)


def test_serial_jacobi_stops_at_the_tolerance():
    n = 10
    a, rhs = poisson_system(n)
    u, done, residual = sd.serial_jacobi(n, 5000, residual_every=5, tol=1e-6)
    assert 0 < done < 5000 and done % 5 == 0
    assert residual <= 1e-6 * np.linalg.norm(rhs)
    assert np.linalg.norm(rhs - a @ u.ravel()) <= 1e-6 * np.linalg.norm(rhs)  # the last sweep only helps


def test_norms_from_row_sums_do_not_depend_on_the_order_of_the_rows():
    rows = np.random.default_rng(3).random(1000) * 10.0 ** np.arange(-8, 8, 0.016)
    assert sd.norm_from_row_sums(rows) == sd.norm_from_row_sums(rows[::-1]) == sd.norm_from_row_sums(
        np.concatenate([rows[500:], rows[:500]]))


def test_work_is_counted_in_reference_seconds_of_the_matvec_rate():
    from workloads.reference import MATVEC_FLOP_PER_REF_S
    n = sd.DEFAULT_N
    assert sd.flop_per_iteration(n, 10) == n * n * (5 + 0.3)
    assert sd.work_per_iteration_ref_s(n, 10) == pytest.approx(n * n * 5.3 / MATVEC_FLOP_PER_REF_S)
    print(f"stencil n={n}: {sd.work_per_iteration_ref_s(n):.2e} reference-s per sweep, "
          f"{sd.DEFAULT_ITERATIONS * sd.work_per_iteration_ref_s(n):.3f} for the default {sd.DEFAULT_ITERATIONS}")


# --- real MPI jobs on the host's Open MPI ---------------------------------------------------

N, ITERATIONS = 40, 400
PROGRAM = ["python3", "-m", "workloads.stencil", "--n", str(N), "--iterations", str(ITERATIONS),
           "--residual-every", "7", "--print-u"]


def job_id(tag: str) -> str:
    return f"{tag}-{time.time_ns() % 10**12}"


def run_plain(hosts: list[str], program: list[str] = PROGRAM) -> dict:
    argv = [*program, "--job", job_id("st"), "--hosts", ",".join(hosts)]
    result = LocalLauncher().mpirun_popen(hosts, argv).wait(120)
    assert result.exit_code == 0, result.stderr[-3000:]
    report = parse_result(result.stdout)
    assert report is not None, result.stdout[-3000:]
    return report


def rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


@pytest.fixture(scope="module")
def one_rank() -> dict:
    return run_plain(["ws1"])


@pytest.mark.host_mpi
def test_one_and_three_ranks_give_the_serial_grid(one_rank):
    three = run_plain(["ws1", "ws2", "ws3"])
    u_ref, done, residual = sd.serial_jacobi(N, ITERATIONS, residual_every=7)
    for report in (one_rank, three):
        assert report["workload"] == "stencil" and report["iterations"] == ITERATIONS == done
        assert rel(np.array(report["u"]), u_ref) < RTOL
        assert report["residual_norm"] == pytest.approx(residual, rel=RTOL)
    assert three["ranks"] == 3 and three["halo_wait_s"] >= 0
    assert rel(np.array(three["u"]), np.array(one_rank["u"])) < RTOL
    assert (three["u_norm"], three["b_norm"]) == pytest.approx((one_rank["u_norm"], one_rank["b_norm"]), rel=RTOL)


@pytest.mark.host_mpi
def test_a_tolerance_stops_every_partition_at_the_same_sweep():
    program = ["python3", "-m", "workloads.stencil", "--n", "12", "--iterations", "5000",
               "--residual-every", "5", "--tol", "1e-4"]
    one, two = run_plain(["ws1"], program), run_plain(["ws1", "ws2"], program)
    _, done, _ = sd.serial_jacobi(12, 5000, residual_every=5, tol=1e-4)
    assert one["iterations"] == two["iterations"] == done < 5000
    assert two["residual_norm"] <= 1e-4 * two["b_norm"]


def stencil_bytes(old: list[str], new: list[str]) -> int:
    """u and h²f: two float64 rows of N per row that crosses the network."""
    return rows_over_network(plan_moves(N, old, new)) * N * 8 * 2


@pytest.fixture(params=["mpiexec", "pool"])
def launcher(request) -> Iterator[Launcher]:
    """Each launch an mpiexec, or (as on the cluster) a `run` line to a resident pool of 4 ranks."""
    if request.param == "mpiexec":
        yield LocalLauncher()
        return
    with local_pool(4, port_base=18790 + (time.time_ns() // 1000) % 1000 * 8) as pool:
        yield pool


@pytest.mark.host_mpi
def test_resized_four_to_two_to_three_matches_the_unresized_run(one_rank, launcher):
    hosts = ["ws1", "ws2", "ws3", "ws4"]
    with ControlServer(bind_host="127.0.0.1") as server:
        job = MalleableJob(launcher, server, job_id("st-resize"), PROGRAM, hosts, "127.0.0.1", timeout_s=120)
        with job:
            job.start()
            time.sleep(0.15)  # let the resizes land mid-run, with a residual already in the state
            shrink = job.resize(["ws1", "ws2"])
            time.sleep(0.15)
            grow = job.resize(["ws1", "ws2", "ws3"])
            record = job.wait()
    assert shrink is not None and grow is not None, "the job finished before it could be preempted"
    assert (shrink.kind, grow.kind) == ("loser", "winner")
    assert 1 <= shrink.iteration <= grow.iteration < ITERATIONS
    assert shrink.bytes_moved == stencil_bytes(hosts, ["ws1", "ws2"])
    assert grow.bytes_moved == stencil_bytes(["ws1", "ws2"], ["ws1", "ws2", "ws3"])
    assert record.hosts_history == [hosts, ["ws1", "ws2"], ["ws1", "ws2", "ws3"]]
    result = record.result
    assert result["iterations"] == ITERATIONS and result["ranks"] == 3
    assert result["iterations_this_run"] == ITERATIONS - grow.iteration
    assert result["restore"]["role"] == "winner"
    assert rel(np.array(result["u"]), np.array(one_rank["u"])) < RTOL
    assert result["residual_norm"] == pytest.approx(one_rank["residual_norm"], rel=RTOL)
    print(f"{type(launcher).__name__}: stencil n={N} 4->2 at iteration {shrink.iteration} ({shrink.bytes_moved} B), "
          f"2->3 at {grow.iteration} ({grow.bytes_moved} B)")


@pytest.mark.host_mpi
def test_bad_sizes_are_refused_naming_the_option():
    zero = LocalLauncher().mpirun_popen(["ws1"], [*PROGRAM[:3], "--job", job_id("bad"), "--hosts", "ws1",
                                                  "--n", "0"]).wait(60)
    assert zero.exit_code != 0 and "argument --n: must be >= 1, got 0" in zero.stderr
    hosts = ["ws1", "ws2", "ws3"]
    few = LocalLauncher().mpirun_popen(hosts, [*PROGRAM[:3], "--job", job_id("bad"), "--hosts", ",".join(hosts),
                                               "--n", "2"]).wait(60)
    assert few.exit_code != 0 and "ValueError: --n: 2 rows cannot be split over 3 ranks" in few.stderr
