"""Sevcik fits for an experiment's classes, measured on its own cluster and cached.

A profile is only valid for the machine it was measured on: the same
workload arguments, the same CPU caps on the workstations it ran on and the
same image. That tuple is the cache key, so a second run of an experiment
(or another experiment with the same classes and cluster) profiles nothing.
Profiling runs are dedicated: the caller stops owner load first.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Callable

import numpy as np
from scipy.optimize import nnls

from experiments.config import ClassSpec, Profiling
from scheduler.live import Arrival
from scheduler.live.executor import LiveExecutor
from scheduler.live.stream import JobClass, PmaxOnlyModel
from testbed import state
from testbed.docker_backend import WORKLOADS_DIR
from workloads import profile as wprofile
from workloads import sevcik

Log = Callable[[str], None]


def profile_key(cls: ClassSpec, prof: Profiling, cpus: list[float], image: str) -> str:
    """Hash of what the fit depends on (arguments, demand, caps of the workstations used, image)."""
    argv = cls.argv(prof.demand)
    code = hashlib.sha256()
    for path in sorted(WORKLOADS_DIR.glob("*.py")):  # the workloads are mounted, not in the image
        code.update(path.read_bytes())
    blob = json.dumps({"method": "live-executor", "argv": argv, "procs": prof.procs, "reps": prof.reps, "cpus": cpus, "image": image,
                       "workloads": code.hexdigest()}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def cache_dir() -> Path:
    return state.home() / "profiles"


def cached(key: str) -> dict | None:
    path = cache_dir() / f"{key}.json"
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, json.JSONDecodeError):
        return None  # a damaged cache entry is re-measured, never trusted


def launch_fit(samples) -> dict[str, float]:
    a = np.array([[1.0, s.p] for s in samples])
    b = np.array([max(0.0, s.done_s - s.time_s) for s in samples])
    (intercept, slope), _ = nnls(a, b)
    return {"launch_s": float(intercept), "launch_per_proc_s": float(slope)}


def teardown(samples) -> float:
    """Median time from the job's done report to its mpiexec's exit (workstations still held)."""
    return float(max(0.0, np.median([s.wall_s - s.done_s for s in samples])))


def measure(cluster, workstations: list[str], name: str, cls: ClassSpec, prof: Profiling, key: str,
            log: Log) -> dict:
    """Run the dedicated profile and return the fit as stored with the results.

    Each run goes through the live executor, alone on the first p
    workstations, so its launch, control channel and exit are timed exactly
    as in the experiment. T(p) is fitted on the job's own compute loop; what
    a live job pays on top of it (mpiexec start-up over ssh, data set-up) is
    launch-to-done less the loop, which grows with p, so it is fitted as
    launch_s + launch_per_proc_s·p; teardown_s is done-to-exit.
    """
    argv = tuple(cls.argv(prof.demand))
    samples = []
    for rep in range(prof.reps):  # repetitions in rounds: a slow spell of the host hits every p alike
        for p in prof.procs:
            job = Arrival(0, JobClass(name, argv, PmaxOnlyModel(p)), 0.0)
            res = LiveExecutor([job], "RA", cluster, list(workstations[:p]), cluster.controller_address,
                               tag=f"profile-{name}-p{p}-r{rep}").run()
            state, record = res.states[0], res.jobs[0]
            if state.status != "done" or "compute_s" not in state.report:
                raise RuntimeError(f"profiling class {name} on {p} workstation(s) failed: {state.error}")
            exited = max(r.exited_at for r in res.runs)
            sample = wprofile.Sample(p, rep, float(state.report["compute_s"]), exited - record.start,
                                     record.finish - record.start)
            samples.append(sample)
            log(f"{name}: p={p} rep={rep} loop {sample.time_s:.2f} s, launch to done {sample.done_s:.2f} s, "
                f"to exit {sample.wall_s:.2f} s")
    fit = sevcik.fit([s.p for s in samples], [s.time_s for s in samples])
    means = {p: float(np.mean([s.time_s for s in samples if s.p == p])) for p in prof.procs}
    points = sevcik.errors(fit, list(means), list(means.values()))
    data = {
        "class": name, "key": key, "workload": cls.workload, "argv": list(argv), "demand": prof.demand,
        # per unit of demand (demand 1 = the class mean), so a job of demand f has T = f * T(p)
        "W": fit.work_s / prof.demand, "alpha": fit.alpha_s / prof.demand, "beta": fit.beta_s / prof.demand,
        "pmax": cls.pmax, "best_p": fit.best_p(), "phases": cls.base_demand, "units_profiled": cls.units(prof.demand),
        **launch_fit(samples),
        "teardown_s": teardown(samples),
        "points": [{"p": pt.p, "measured_s": pt.measured_s, "fit_s": pt.predicted_s,
                    "rel_error": pt.relative_error} for pt in points],
        "max_fit_error": max(abs(pt.relative_error) for pt in points),
        "samples": [{"p": s.p, "rep": s.rep, "time_s": s.time_s, "wall_s": s.wall_s, "done_s": s.done_s}
                    for s in samples],
    }
    cache_dir().mkdir(parents=True, exist_ok=True)
    (cache_dir() / f"{key}.json").write_text(json.dumps(data, indent=2))
    return data
