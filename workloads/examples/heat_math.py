"""The 1-D heat problem and its explicit step, shared by the MPI program (heat.py) and the tests.

A rod of n cells between two ends held at LEFT and RIGHT (asymmetric, so a halo sent to the wrong
neighbour changes the answer), starting from an integer-built pattern. One step of the explicit
(FTCS) scheme with r = alpha dt / dx² (stable for r <= 1/2) is

    u'[i] = u[i] + r * ((u[i-1] + u[i+1]) - 2 * u[i]),

evaluated in that order for every cell. A cell depends only on the old rod, so a block of cells
computes bit for bit what the whole rod computes: the answer does not depend on the partition or
on resizes. Blocks are held padded, rows + 2 long: [0] and [rows + 1] are the halo cells (a
neighbour's edge cell, or the held end). Runs in the workstations and on the host: numpy only.
"""
from __future__ import annotations

import numpy as np

LEFT, RIGHT = 1.0, 0.0  # the ends' temperatures
MAX_R = 0.5  # the explicit scheme's stability limit


def initial_rows(lo: int, hi: int) -> np.ndarray:
    """Cells [lo, hi) of the starting rod: ((7 i) mod 13) / 13, exact in any split."""
    i = np.arange(lo, hi, dtype=np.int64)
    return ((7 * i) % 13).astype(np.float64) / 13.0


def padded(block: np.ndarray, *, first: bool, last: bool) -> np.ndarray:
    """A block with its two halo cells; the rod's ends hold LEFT and RIGHT."""
    out = np.zeros(block.shape[0] + 2, dtype=np.float64)
    out[1:-1] = block
    if first:
        out[0] = LEFT
    if last:
        out[-1] = RIGHT
    return out


def step(old: np.ndarray, new: np.ndarray, r: float) -> None:
    """One explicit step of the padded block `old` into the padded `new` (halo cells left alone)."""
    inner = old[1:-1]
    np.add(old[:-2], old[2:], out=new[1:-1])
    new[1:-1] -= 2.0 * inner
    new[1:-1] *= r
    new[1:-1] += inner


def serial(n: int, steps: int, r: float) -> np.ndarray:
    """The whole rod after `steps` steps on one process: the reference the MPI runs must match."""
    old = padded(initial_rows(0, n), first=True, last=True)
    new = old.copy()
    for _ in range(steps):
        step(old, new, r)
        old, new = new, old
    return old[1:-1].copy()


def steady(n: int) -> np.ndarray:
    """The rod after infinitely many steps: a straight line from LEFT to RIGHT."""
    return LEFT + (RIGHT - LEFT) * np.arange(1, n + 1) / (n + 1)
