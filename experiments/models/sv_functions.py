"""The candidate functions of Sanjay & Vadhiyar's Eq. 1, by role and by name.

Names are what a stored model keeps. The load variables are the CPU fraction and the
bandwidth in Gbit/s (so coefficients stay near 1). log P is log2(P) + 1, so that it and
P/log P are finite and non-zero at P = 1 (the paper's FFT example, P/log P, is not).
Candidates run from simple to complex: the regression keeps the earlier one of a tie.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

Fn = Callable[[np.ndarray], np.ndarray]

PROBLEM_SIZE: dict[str, Fn] = {  # f_comp, f_comm
    "1": np.ones_like,
    "log N": np.log2,
    "N": lambda n: n,
    "N log N": lambda n: n * np.log2(n),
    "N^1.5": lambda n: n ** 1.5,
    "N^2": lambda n: n ** 2,
    "N^3": lambda n: n ** 3,
}

PROCESSORS: dict[str, Fn] = {  # f_Pcomp, f_Pcomm (in the denominators)
    "1": np.ones_like,
    "log P": lambda p: np.log2(p) + 1.0,
    "sqrt P": np.sqrt,
    "P/log P": lambda p: p / (np.log2(p) + 1.0),
    "P": lambda p: p,
    "1/P": lambda p: 1.0 / p,
    "P^2": lambda p: p ** 2,
}

LOAD: dict[str, Fn] = {  # f_cpu (of the CPU fraction), f_bw (of Gbit/s), in the denominators
    "1": np.ones_like,
    "sqrt x": np.sqrt,
    "x": lambda x: x,
    "x^2": lambda x: x ** 2,
}

ROLES: dict[str, dict[str, Fn]] = {
    "f_comp": PROBLEM_SIZE, "f_comm": PROBLEM_SIZE,
    "f_pcomp": PROCESSORS, "f_pcomm": PROCESSORS,
    "f_cpu": LOAD, "f_bw": LOAD,
}


def shown(name: str, variable: str) -> str:
    """A candidate's name with its variable (N, P or x) spelled as Eq. 1 prints it."""
    if name == "1":
        return "1"
    return name.replace("x", variable) if variable not in ("N", "P") else name
