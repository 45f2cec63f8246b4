"""What a job pays beyond its compute loop, as a function of its size p.

Launch-to-done less the loop is fitted as launch_s + launch_per_proc_s·p +
setup_work_s/p (non-negative least squares). The last term is set-up split
among the ranks, paid before the first safe point: CG builds its rows of A
(measured 3.3/0.9/0.5/0.1 s at p = 1/2/4/8 on now8). A fit without it put
that set-up into alpha, so a CG job just started at p = 1 answered a
preemption 2-6 s later live than in the simulator, and under Equipartition
every other job waited for it.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.optimize import nnls


def fit_launch(procs: Sequence[int], extra_s: Sequence[float]) -> dict[str, float]:
    """launch_s, launch_per_proc_s and setup_work_s from (p, launch-to-done less the loop) pairs."""
    if len(procs) != len(extra_s) or not procs:
        raise ValueError(f"procs/extra_s: need equal, non-empty lists (got {len(procs)} and {len(extra_s)})")
    a = np.array([[1.0, p, 1.0 / p] for p in procs])
    b = np.array([max(0.0, e) for e in extra_s])
    (intercept, slope, setup), _ = nnls(a, b)
    return {"launch_s": float(intercept), "launch_per_proc_s": float(slope), "setup_work_s": float(setup)}


def stored_fit(profile: dict) -> dict[str, float]:
    """The launch fit of a stored profile, refitted from its samples if it predates setup_work_s."""
    if "setup_work_s" in profile or not profile.get("samples"):
        return {"launch_s": float(profile["launch_s"]),
                "launch_per_proc_s": float(profile.get("launch_per_proc_s", 0.0)),
                "setup_work_s": float(profile.get("setup_work_s", 0.0))}
    samples = profile["samples"]
    return fit_launch([int(s["p"]) for s in samples], [s["done_s"] - s["time_s"] for s in samples])
