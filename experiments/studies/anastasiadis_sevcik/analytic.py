"""Section 4's analytic ratio of waiting to running time (Figure 1).

With identical jobs and target partition n = P/N (AEP, N jobs in the system)
Little's law gives W(n)/T(n) = (1 - rho)/rho; with n = P/L (AP1, L waiting
jobs) it gives W(n)/T(n) = 1/rho, where rho is the *actual* load
lambda * n * T(n) / P, i.e. the fraction of processor capacity occupied.
"""
from __future__ import annotations

import numpy as np


def wait_over_run_aep(rho: np.ndarray | float) -> np.ndarray:
    """Eq. (3): W/T = (1 - rho)/rho."""
    rho = _check(rho)
    return (1.0 - rho) / rho


def wait_over_run_ap1(rho: np.ndarray | float) -> np.ndarray:
    """Eq. (4): W/T = 1/rho."""
    rho = _check(rho)
    return 1.0 / rho


def _check(rho: np.ndarray | float) -> np.ndarray:
    arr = np.asarray(rho, dtype=float)
    if np.any(arr <= 0) or np.any(arr > 1):
        raise ValueError("actual load rho must be in (0, 1]")
    return arr
