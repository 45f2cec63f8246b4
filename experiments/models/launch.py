"""What a job pays beyond its compute loop, as a function of its size p.

Launch-to-done less the loop is fitted as launch_s + launch_per_proc_s·p +
setup_work_s/p (non-negative least squares). The last term is set-up split
among the ranks, paid before the first safe point: CG builds its rows of A
(measured 3.3/0.9/0.5/0.1 s at p = 1/2/4/8 on now8). A fit without it put
that set-up into alpha, so a CG job just started at p = 1 answered a
preemption 2-6 s later live than in the simulator, and under Equipartition
every other job waited for it.

Two choices keep the prediction from paying more than was measured:
- The start-up (launch to hello, `startup_s`, profiled separately) is part of
  launch-to-done. The simulator pays it as a pause, so the fit is of what
  is left once it is taken out, and `launch_s` gives it back: the total is
  what was measured. (Fitted with it inside, the whole extra of CG went to
  setup_work_s/p with launch_s = 0, and the start-up was paid twice: 0.26 s
  on a 9 s job at p = 4.)
- Each run weighs by its own length: an error in seconds matters as a share
  of the job's time, which is what the prediction targets are. Unweighted,
  the p = 1 runs (3.7 and 2.3 s of extra, the noisiest) set the fit, and
  CG at p = 4 was given 0.68 s where 0.45 s was measured.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.optimize import nnls

from experiments.models.loop import normalised_samples


def fit_launch(procs: Sequence[int], extra_s: Sequence[float], total_s: Sequence[float] | None = None,
               startup_s: float = 0.0) -> dict[str, float]:
    """launch_s, launch_per_proc_s and setup_work_s from (p, launch-to-done less the loop) pairs.

    `total_s`: each run's launch-to-done, to weigh its error as a share of it (None: unweighted).
    `startup_s`: the start-up paid as a pause; fitted without, given back in launch_s."""
    if len(procs) != len(extra_s) or not procs or (total_s is not None and len(total_s) != len(procs)):
        raise ValueError(f"procs/extra_s/total_s: need equal, non-empty lists (got {len(procs)}, {len(extra_s)}"
                         f"{'' if total_s is None else f' and {len(total_s)}'})")
    if not startup_s >= 0:
        raise ValueError(f"startup_s: must be >= 0 seconds, got {startup_s}")
    weights = np.ones(len(procs)) if total_s is None else 1.0 / np.maximum(np.asarray(total_s, float), 1e-3)
    a = np.array([[1.0, p, 1.0 / p] for p in procs]) * weights[:, None]
    b = np.array([max(0.0, e - startup_s) for e in extra_s]) * weights
    (intercept, slope, setup), _ = nnls(a, b)
    return {"launch_s": float(intercept) + startup_s, "launch_per_proc_s": float(slope), "setup_work_s": float(setup)}


def fit_hello(procs: Sequence[int], hello_s: Sequence[float]) -> tuple[float, float]:
    """(startup_s, setup_work_s) from each run's launch-to-hello: startup_s + setup_work_s/p.

    The hello is what ends the pause a job can answer no preemption in (its coordinator
    says it once set up, `workloads/runtime.py`), so the pause is fitted on it directly.
    Fitted on launch-to-done instead, CG's set-up came out at 2.38 s/p, where its p = 1
    jobs said hello 1.15 s after their start; under Equipartition every other job then
    waited 1.5 s longer for each new job's acknowledgment than live (demo, 24 Nov 2026)."""
    a = np.array([[1.0, 1.0 / p] for p in procs])
    (startup, setup), _ = nnls(a, np.asarray(hello_s, float))
    return float(startup), float(setup)


def fit_samples(samples: Sequence[dict], startup_s: float | None) -> dict[str, float]:
    """The launch fit of a profile's samples (each with p, time_s, done_s, and hello_s when
    profiled with it). With hello_s, the pause before work is fitted on it (`fit_hello`)
    and the rest of launch-to-done less the loop as launch_s + launch_per_proc_s·p, with
    `startup_s` in the result; without, as `fit_launch`."""
    procs = [int(s["p"]) for s in samples]
    hellos = [s.get("hello_s") for s in samples]
    if not samples or any(h is None or not np.isfinite(h) or h < 0 for h in hellos):
        return fit_launch(procs, [s["done_s"] - s["time_s"] for s in samples], [s["done_s"] for s in samples],
                          startup_s or 0.0)
    startup, setup = fit_hello(procs, hellos)
    weights = 1.0 / np.maximum(np.array([s["done_s"] for s in samples], float), 1e-3)
    after = [max(0.0, s["done_s"] - s["time_s"] - startup - setup / p) for s, p in zip(samples, procs)]
    (intercept, slope), _ = nnls(np.array([[1.0, p] for p in procs]) * weights[:, None], np.array(after) * weights)
    return {"launch_s": float(intercept) + startup, "launch_per_proc_s": float(slope), "setup_work_s": setup,
            "startup_s": startup}


def stored_fit(profile: dict) -> dict[str, float]:
    """The launch fit of a stored profile, from its samples whenever it has them (so a profile
    stored before a change of the fit is read as today's), else as stored. `startup_s` is in
    it when the samples carry their hello times."""
    if profile.get("samples"):  # each run's times as at the profile's reference speed
        return fit_samples(normalised_samples(profile["samples"], profile.get("ref_speed")), profile.get("startup_s"))
    return {"launch_s": float(profile["launch_s"]),
            "launch_per_proc_s": float(profile.get("launch_per_proc_s", 0.0)),
            "setup_work_s": float(profile.get("setup_work_s", 0.0))}
