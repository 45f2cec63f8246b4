"""The CG problem: a deterministic SPD matrix and right-hand side, row by row.

Each rank generates only its own rows, and the host-side tests regenerate the
whole matrix, so every entry must come out bit-identical on any numpy version:
entries are built from integer hashing and one correctly rounded multiply, no
transcendental functions (whose last bits vary between numpy builds).

A = tridiag(-1, 2 + SHIFT, -1) + H, where H is dense, symmetric and hashed with
|H_ij| <= SHIFT / (2n). Row sums of |H| are at most SHIFT/2, so the smallest
eigenvalue is at least SHIFT/2 and A is SPD (measured: condition number ~101
for n = 300..1000). CG reaches machine precision after ~150 iterations, inside
the default 250 but late enough that resizes land mid-convergence, so an
unpreempted and a resized run agree to ~1e-14 and 1e-10 is a real check.
The matrix is dense (n*n float64, 2 MB at n=500), like the paper's.
Runs in the containers and on the host: numpy only.
"""
from __future__ import annotations

import numpy as np

SHIFT = 0.04
_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xBF58476D1CE4E5B9)
_M3 = np.uint64(0x94D049BB133111EB)


def _hash(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A symmetric 64-bit mix of (min, max) of two index arrays (wrapping arithmetic)."""
    lo, hi = np.minimum(a, b).astype(np.uint64), np.maximum(a, b).astype(np.uint64)
    with np.errstate(over="ignore"):
        h = lo * _M1 + (hi + np.uint64(1)) * _M2
        h ^= h >> np.uint64(31)
        h = h * _M3
        h ^= h >> np.uint64(29)
    return h


def matrix_rows(n: int, lo: int, hi: int) -> np.ndarray:
    """Rows [lo, hi) of the n x n matrix, as a C-contiguous float64 array."""
    rows = np.arange(lo, hi, dtype=np.int64)[:, None]
    cols = np.arange(n, dtype=np.int64)[None, :]
    k = (_hash(rows, cols) >> np.uint64(40)).astype(np.int64) - (1 << 23)  # in [-2^23, 2^23)
    block = k.astype(np.float64) * (SHIFT / (2.0 * n * (1 << 23)))
    diag = rows[:, 0]
    block[np.arange(hi - lo), diag] += 2.0 + SHIFT
    left = diag - 1
    mask = left >= 0
    block[np.arange(hi - lo)[mask], left[mask]] -= 1.0
    right = diag + 1
    mask = right < n
    block[np.arange(hi - lo)[mask], right[mask]] -= 1.0
    return np.ascontiguousarray(block)


def rhs(n: int, lo: int, hi: int) -> np.ndarray:
    """Entries [lo, hi) of b: b_i = 1 + (i mod 10) / 10."""
    i = np.arange(lo, hi, dtype=np.int64)
    return 1.0 + (i % 10).astype(np.float64) / 10.0


def serial_cg(a: np.ndarray, b: np.ndarray, iterations: int, tol: float | None = None) -> tuple[np.ndarray, int]:
    """Plain one-process CG with the same update order as the distributed one.

    The reference for tests: with a fixed iteration count the distributed run
    must match this to rounding; with a tolerance both must match np.linalg.solve.
    """
    x = np.zeros_like(b)
    r = b.copy()
    p = r.copy()
    rho = float(r @ r)
    b_norm = float(np.sqrt(b @ b))
    done = 0
    for _ in range(iterations):
        if tol is not None and np.sqrt(rho) <= tol * b_norm:
            break
        q = a @ p
        pq = float(p @ q)
        alpha = rho / pq if pq != 0.0 else 0.0
        x += alpha * p
        r -= alpha * q
        rho_new = float(r @ r)
        beta = rho_new / rho if rho != 0.0 else 0.0
        p = r + beta * p
        rho = rho_new
        done += 1
    return x, done
