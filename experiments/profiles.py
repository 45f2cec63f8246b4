"""Sevcik fits for an experiment's classes, measured on its own cluster and cached.

A profile is only valid for the machine it was measured on: the same
workload arguments, the same CPU caps on the workstations it ran on and the
same image. That tuple is the cache key, so a second run of an experiment
(or another experiment with the same classes and cluster) profiles nothing.
Profiling runs are dedicated: the caller stops owner load first.

Besides T(p), launch and teardown, a profile measures a few resizes of the
class alone (shrinks and grows between the largest profiled sizes, through
the same live executor) and fits their cost (`experiments.models.resize`),
so predictions take every overhead from here and never from the run they
predict.
"""
from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from experiments import delivered
from experiments.config import ClassSpec, Profiling
from experiments.models import loop
from experiments.models.launch import stored_fit
from experiments.models.resize import ResizeFit, ResizeSample
from scheduler.actions import Action, Preempt, Resize, Start
from scheduler.jobs import Outcome
from scheduler.live import Arrival
from scheduler.live.executor import LiveExecutor
from scheduler.live.stream import JobClass, PmaxOnlyModel
from scheduler.policy import Policy
from scheduler.snapshot import Reason, Snapshot
from testbed import state
from testbed.state import cluster_dir as cluster_state_dir
import workloads
from workloads.host import profile as wprofile
from workloads.host import sevcik

Log = Callable[[str], None]


def profile_key(cls: ClassSpec, prof: Profiling, cpus: list[float | str], image: str, host_idle: str) -> str:
    """Hash of what the fit depends on (arguments, demand, caps or speeds of the workstations used, image,
    whether the host's idle cores poll or halt: a job alone ran 7-13% slower on halting cores, and
    how a run's delivered speed is summarised, which its jobs' speed ratios must share)."""
    argv = cls.argv(prof.demand)
    code = hashlib.sha256()
    # the workloads are mounted, not in the image; every folder of them (host/, wire/) shapes a run
    for path in sorted(p for p in workloads.SOURCE_DIR.rglob("*.py") if "__pycache__" not in p.parts):
        code.update(path.read_bytes())
    blob = json.dumps({"method": "live-executor+resizes+hello", "launch": "pool", "argv": argv, "procs": prof.procs, "reps": prof.reps, "cpus": cpus, "image": image, "host_idle": host_idle,
                       "workloads": code.hexdigest(), "delivered_speed": delivered.STATISTIC}, sort_keys=True)
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


class ResizeScript(Policy):
    """Profiling only: one job, started on sizes[0] workstations and resized through the rest in turn.

    It preempts at once after each start or restore, so every safe point the
    job reaches is a resize until the script runs out.
    """

    name = "RESIZE-SCRIPT"

    def __init__(self, sizes: list[int]) -> None:
        if len(sizes) < 2 or any(n < 1 for n in sizes):
            raise ValueError(f"resize script needs two or more sizes >= 1, got {sizes}")
        self.sizes = list(sizes)
        self.step = 0

    def decide(self, snap: Snapshot) -> list[Action]:
        if snap.reason is Reason.ARRIVAL and snap.queue:
            job = snap.queue[0]
            return [Start(job.id, tuple(range(self.sizes[0]))), Preempt(job.id)]
        if snap.reason is Reason.ACK and snap.preempted:
            job = next(iter(snap.preempted.values()))
            self.step += 1
            return [Resize(job.id, tuple(range(self.sizes[self.step])))]
        if snap.reason is Reason.RECONFIGURED and snap.running and self.step + 1 < len(self.sizes):
            return [Preempt(next(iter(snap.running.values())).id)]
        return []


def resize_sizes(procs: list[int]) -> list[int]:
    """Shrink and grow between the largest profiled sizes: e.g. 8, 4, 8, 4, 2, 4 for procs 1, 2, 4, 8."""
    top = sorted(set(procs))[-3:]
    if len(top) < 2:
        raise ValueError(f"profiling needs two or more sizes to resize between, got {procs}")
    a, b = top[-1], top[-2]
    c = top[-3] if len(top) == 3 else b
    return [a, b, a, b, c, b] if c != b else [a, b, a, b]


def measure_resizes(cluster, workstations: list[str], name: str, cls: ClassSpec, prof: Profiling,
                    log: Log) -> tuple[list[ResizeSample], list[float]]:
    """One job per repetition, alone, resized by `ResizeScript`; each resize onto a new set is a sample.

    Also returns, per repetition, the start-up: seconds from the launch to the
    job's hello (when the preemption asked at its start could be sent), the
    earliest a live job can be asked to stop.
    """
    argv = tuple(cls.argv(prof.demand))
    sizes = resize_sizes(prof.procs)
    out, startups = [], []
    for rep in range(prof.reps):
        job = Arrival(0, JobClass(name, argv, PmaxOnlyModel(max(sizes))), 0.0)
        res = LiveExecutor([job], ResizeScript(sizes), cluster.job_launcher(), list(workstations[:max(sizes)]),
                           cluster.controller_address, tag=f"profile-{name}-resize-r{rep}").run()
        if res.states[0].status != Outcome.DONE:
            raise RuntimeError(f"profiling resizes of class {name} failed: {res.states[0].error}")
        first = res.resizes[0] if res.resizes else None
        if first is not None and first.sent_at is not None:
            startups.append(max(0.0, first.sent_at - res.jobs[0].start))
        for r in res.resizes:
            if r.kind in ("loser", "winner") and r.reconfig_s is not None:
                release = None if r.exited_at is None or r.partition_at is None else r.exited_at - r.partition_at
                out.append(ResizeSample(tuple(r.from_procs), tuple(r.to_procs), float(r.reconfig_s),
                                        int(r.bytes_moved), release))
                log(f"{name}: resize {len(r.from_procs)}->{len(r.to_procs)} rep={rep} {r.reconfig_s:.2f} s, "
                    f"{r.bytes_moved} bytes moved")
    return out, startups


def link_rate(cluster, workstations: list[str]) -> float:
    """The slowest link between the profiling workstations, bit/s (from the cluster spec)."""
    spec = cluster.spec
    return float(min(spec.link_rate(a, b) for a in workstations for b in workstations if a != b))


def launch_fit(samples: list[dict], startup_s: float | None, ref_speed: float | None) -> dict[str, float]:
    """launch_s + launch_per_proc_s·p + setup_work_s/p (experiments/models/launch.py) of the
    stored samples, as the predictions read it back (`stored_fit`)."""
    return stored_fit({"samples": samples, "startup_s": startup_s, "ref_speed": ref_speed})


def teardown(samples) -> float:
    """Median time from the job's done report to its mpiexec's exit (workstations still held)."""
    return float(max(0.0, np.median([s.wall_s - s.done_s for s in samples])))


@dataclass(frozen=True)
class AloneRun:
    """One profile run: its sample (loop, launch to exit, launch to done), the reference speed
    the meter saw it delivered (None: no meter), the seconds from its start to its hello, and
    where and when it ran (epoch s), so a stored profile can be metered again from the run's
    kept meter series."""
    sample: wprofile.Sample
    speed: float | None
    hello_s: float
    hosts: tuple[str, ...]
    t0_epoch: float
    t1_epoch: float


def run_alone(cluster, workstations: list[str], name: str, argv: tuple[str, ...], p: int, rep: int,
              tag: str) -> AloneRun:
    """One job of the class alone on the first p workstations, through the live executor."""
    job = Arrival(0, JobClass(name, argv, PmaxOnlyModel(p)), 0.0)
    ex = LiveExecutor([job], "RA", cluster.job_launcher(), list(workstations[:p]), cluster.controller_address, tag=tag)
    res = ex.run()
    outcome, record = res.states[0], res.jobs[0]
    if outcome.status != Outcome.DONE or "compute_s" not in outcome.report:
        raise RuntimeError(f"profiling class {name} on {p} workstation(s) failed: {outcome.error}")
    t0 = delivered.monotonic_to_epoch(ex.t0 + record.start)
    t1 = delivered.monotonic_to_epoch(ex.t0 + record.finish)
    speed = delivered.job_speed(cluster_state_dir(cluster.name), workstations[:p], t0, t1).speed
    exited = max(r.exited_at for r in res.runs)
    hello = min(res.runs, key=lambda r: r.launch).hello_at - record.start
    sample = wprofile.Sample(p, rep, float(outcome.report["compute_s"]), exited - record.start, record.finish - record.start)
    return AloneRun(sample, speed, hello, tuple(workstations[:p]), t0, t1)


def stored_sample(run: AloneRun) -> dict:
    """One profile run as a profile stores it."""
    s = run.sample
    return {"p": s.p, "rep": s.rep, "time_s": s.time_s, "wall_s": s.wall_s, "done_s": s.done_s,
            "hello_s": run.hello_s, "ref_speed": run.speed, "hosts": list(run.hosts),
            "t0_epoch": run.t0_epoch, "t1_epoch": run.t1_epoch}


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
    runs: list[AloneRun] = []
    for rep in range(prof.reps):  # repetitions in rounds: a slow spell of the host hits every p alike
        for p in prof.procs:
            run = run_alone(cluster, workstations, name, argv, p, rep, f"profile-{name}-p{p}-r{rep}")
            runs.append(run)
            sample = run.sample
            log(f"{name}: p={p} rep={rep} loop {sample.time_s:.2f} s, launch to done {sample.done_s:.2f} s, "
                f"to exit {sample.wall_s:.2f} s")
    samples = [r.sample for r in runs]
    speeds = [r.speed for r in runs]  # reference cores each run was delivered (delivered.job_speed)
    resized, startups = measure_resizes(cluster, workstations, name, cls, prof, log)
    resize = None
    if resized:
        resize = ResizeFit.fit(resized, link_rate(cluster, list(workstations[:max(resize_sizes(prof.procs))])))
    else:  # the replay falls back to the config's reconfig_default_s and says so
        log(f"{name}: no resize measured (too few phases to reach a safe point before the end?)")
    startup = float(np.median(startups)) if startups else None
    # The reference speed the profile ran at (median over its runs; None: no meter): a live
    # job's delivered speed over this is its speed ratio, which normalises its times.
    ref_speed = float(np.median([v for v in speeds if v is not None])) if any(v is not None for v in speeds) else None
    stored_samples = [stored_sample(r) for r in runs]
    fit = loop.fit(stored_samples, ref_speed)  # each run's times as at ref_speed
    at_ref = loop.normalised_samples(stored_samples, ref_speed)
    means = {p: float(np.mean([s["time_s"] for s in at_ref if s["p"] == p])) for p in prof.procs}
    points = sevcik.errors(fit, list(means), list(means.values()))
    data = {
        "class": name, "key": key, "workload": cls.workload, "argv": list(argv), "demand": prof.demand,
        # per unit of demand (demand 1 = the class mean), so a job of demand f has T = f * T(p)
        "W": fit.work_s / prof.demand, "alpha": fit.alpha_s / prof.demand, "beta": fit.beta_s / prof.demand,
        "pmax": cls.pmax, "best_p": fit.best_p(), "phases": cls.base_demand, "units_profiled": cls.units(prof.demand),
        **launch_fit(stored_samples, startup, ref_speed),
        "teardown_s": teardown(samples),
        "startup_s": startup,  # launch to hello, at the largest p
        "resize": resize.to_dict() if resize is not None else None,
        **{f"resize_{k}": v for k, v in (resize.to_dict() if resize is not None else {}).items()},  # for the report
        "resize_samples": [{"from": len(s.old), "to": len(s.new), "reconfig_s": s.reconfig_s,
                            "bytes_moved": s.bytes_moved, "release_s": s.release_s} for s in resized],
        "points": [{"p": pt.p, "measured_s": pt.measured_s, "fit_s": pt.predicted_s,
                    "rel_error": pt.relative_error} for pt in points],
        "max_fit_error": max(abs(pt.relative_error) for pt in points),
        "samples": stored_samples,  # as measured, each with its delivered speed
        "ref_speed": ref_speed,
    }
    cache_dir().mkdir(parents=True, exist_ok=True)
    (cache_dir() / f"{key}.json").write_text(json.dumps(data, indent=2))
    return data


def run_check(cluster, workstations: list[str], name: str, cls: ClassSpec, prof: Profiling, p: int, index: int,
              log: Log) -> dict:
    """One profile run between cells (experiments/profile_checks.py): the class alone on the first
    p workstations, as `measure` runs it, stored as one more sample with the epoch it ended."""
    run = run_alone(cluster, workstations, name, tuple(cls.argv(prof.demand)), p, index, f"check-{name}-p{p}-{index}")
    log(f"{name}: check {index} on p={p}: loop {run.sample.time_s:.2f} s, launch to done {run.sample.done_s:.2f} s")
    return {**stored_sample(run), "t": time.time()}
