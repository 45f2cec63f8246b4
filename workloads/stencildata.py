"""The stencil problem and its Jacobi sweep, shared by the MPI program and the tests.

Poisson's equation -Δu = f on the unit square, on an n x n grid of interior points
(h = 1/(n+1)), with u = TOP_VALUE on the top edge and 0 on the other three: the
boundary and f are asymmetric, so a halo sent to the wrong neighbour changes the
answer. The 5-point Jacobi sweep is

    u'[i,j] = (u[i-1,j] + u[i+1,j] + u[i,j-1] + u[i,j+1] + h²f[i,j]) / 4,

evaluated in that order for every point. Each point depends only on the old grid,
so a row block computes bit for bit what the whole grid computes: the answer is
independent of the partition and of resizes. Sums (norms, the residual) are formed
per row, and rows are summed with math.fsum (correctly rounded, so independent of
the order), which keeps them partition-independent too.

Grids are held padded, (rows + 2) x (n + 2): row 0 and row rows+1 are the halo rows
(a neighbour's edge row, or the boundary), columns 0 and n+1 the zero boundary.
Runs in the containers and on the host: numpy only.
"""
from __future__ import annotations

import math

import numpy as np

from workloads.reference import MATVEC_FLOP_PER_REF_S

TOP_VALUE = 1.0
# Flop per grid point of one sweep: three neighbour additions, + h²f, x 1/4.
FLOP_PER_POINT = 5
# Flop per grid point of a residual evaluation (subtract, square, add), every few sweeps.
RESIDUAL_FLOP_PER_POINT = 3
DEFAULT_N = 1000
DEFAULT_ITERATIONS = 300
DEFAULT_RESIDUAL_EVERY = 10


def rhs_rows(n: int, lo: int, hi: int) -> np.ndarray:
    """Rows [lo, hi) of h²f, with f[i,j] = 1 + ((3i + 7j) mod 11) / 11 (integer-built, exact)."""
    i = np.arange(lo, hi, dtype=np.int64)[:, None]
    j = np.arange(n, dtype=np.int64)[None, :]
    f = 1.0 + ((3 * i + 7 * j) % 11).astype(np.float64) / 11.0
    return np.ascontiguousarray(f * (1.0 / float((n + 1) * (n + 1))))


def padded(block: np.ndarray) -> np.ndarray:
    """A row block inside a zero frame: (rows + 2) x (n + 2), halo rows zero."""
    rows, n = block.shape
    out = np.zeros((rows + 2, n + 2), dtype=np.float64)
    out[1:-1, 1:-1] = block
    return out


def set_top_boundary(grid: np.ndarray) -> None:
    """The halo row above grid row 0 is the top edge of the domain."""
    grid[0, 1:-1] = TOP_VALUE


def sweep_rows(old: np.ndarray, new: np.ndarray, b: np.ndarray, scratch: np.ndarray, lo: int, hi: int) -> None:
    """One Jacobi sweep of block rows [lo, hi) from padded `old` into padded `new`.

    Only rows 0 and rows-1 read a halo row, so the caller sweeps the others while
    the halos are in flight. `scratch` is a rows x n buffer; every point is summed
    in the order of the module docstring, whatever [lo, hi) is.
    """
    if lo >= hi:
        return
    t = scratch[lo:hi]
    np.add(old[lo:hi, 1:-1], old[lo + 2:hi + 2, 1:-1], out=t)   # above + below
    t += old[lo + 1:hi + 1, :-2]                                  # + left
    t += old[lo + 1:hi + 1, 2:]                                   # + right
    t += b[lo:hi]                                                 # + h²f
    np.multiply(t, 0.25, out=new[lo + 1:hi + 1, 1:-1])


def change_row_sums(old: np.ndarray, new: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """Σ_j (new - old)² for each block row: with Jacobi, b - A·u_old = 4 (u_new - u_old)."""
    d = scratch
    np.subtract(new[1:-1, 1:-1], old[1:-1, 1:-1], out=d)
    d *= d
    return d.sum(axis=1)


def square_row_sums(block: np.ndarray) -> np.ndarray:
    """Σ_j block[i,j]² for each row."""
    return (block * block).sum(axis=1)


def rhs_row_sums(b: np.ndarray, holds_top: bool) -> np.ndarray:
    """Row sums of the squared right-hand side of A·u = h²f + boundary: the top edge adds
    TOP_VALUE to grid row 0 (the residual of u = 0), the norm a --tol is relative to."""
    rhs = b.copy()
    if holds_top and rhs.shape[0]:
        rhs[0] += TOP_VALUE
    return square_row_sums(rhs)


def norm_from_row_sums(row_sums: np.ndarray) -> float:
    """sqrt of the correctly rounded total: the same for any split of the rows."""
    return math.sqrt(math.fsum(row_sums.tolist()))


def serial_jacobi(n: int, iterations: int, residual_every: int = DEFAULT_RESIDUAL_EVERY,
                  tol: float | None = None) -> tuple[np.ndarray, int, float | None]:
    """One-process Jacobi with the distributed program's sweep and stopping rule.

    Returns the grid (n x n), the sweeps done and the last residual norm. The
    reference for the MPI tests: a run on any number of ranks, resized or not,
    must give this grid.
    """
    b = rhs_rows(n, 0, n)
    old, new = padded(np.zeros((n, n))), padded(np.zeros((n, n)))
    set_top_boundary(old)
    set_top_boundary(new)
    scratch = np.empty((n, n))
    b_norm = norm_from_row_sums(rhs_row_sums(b, holds_top=True))
    residual = None
    done = 0
    while done < iterations:
        if tol is not None and residual is not None and residual <= tol * b_norm:
            break
        sweep_rows(old, new, b, scratch, 0, n)
        done += 1
        if done % residual_every == 0:
            residual = 4.0 * norm_from_row_sums(change_row_sums(old, new, scratch))
        old, new = new, old
    return old[1:-1, 1:-1].copy(), done, residual


def flop_per_iteration(n: int, residual_every: int = DEFAULT_RESIDUAL_EVERY) -> float:
    """Flop of one sweep of the n x n grid, the residual's share included."""
    return n * n * (FLOP_PER_POINT + RESIDUAL_FLOP_PER_POINT / residual_every)


def work_per_iteration_ref_s(n: int, residual_every: int = DEFAULT_RESIDUAL_EVERY) -> float:
    """Reference-seconds of one sweep, counted at the reference core's matvec flop rate.

    Like CG's 2n² flop, a floor: numpy's stencil streams its operands through memory
    and does fewer flop per second than the matvec kernel (see workloads/README.md).
    """
    return flop_per_iteration(n, residual_every) / MATVEC_FLOP_PER_REF_S
