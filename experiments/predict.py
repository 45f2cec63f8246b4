"""Model predictions for a live experiment: the same stream, the same policy, in the engine.

Inputs are what the testbed measured: each class's Sevcik fit from profiling
(`ClassModel`), the preemption-overhead model (`OverheadModel`, its cost goes
in `ClassModel.reconfig_s`), and the speeds the workstations delivered at
calibration times what owners left them (`workstation_speeds`). `predict`
replays the stream through `scheduler.engine.simulate` and returns one
`FinishedJob` per job, on the stream's clock, so a measured and a predicted
run compare job by job; `summarize` reduces either kind the same way.
"""
from __future__ import annotations

import bisect
import math
import random
import statistics
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from experiments.models.overhead import OverheadModel
from experiments.models.resize import ResizeFit
from experiments.models.speeds import owner_availability, workstation_speeds
from experiments.noise import RunDraw
from scheduler.engine import Schedule, simulate
from scheduler.jobs import FinishedJob, Outcome, SubmittedJob
from scheduler.model import Job, SevcikModel

__all__ = ["ClassModel", "OverheadModel", "ensemble", "owner_availability", "predict", "summarize",
           "workstation_speeds"]


@dataclass(frozen=True)
class ClassModel:
    """One job class as profiled: T(p) = W/p + alpha + beta·p seconds for demand 1.

    pmax: the class's own limit; None means Sevcik's optimum ceil(sqrt(W/beta))
    of the fit (unlimited when beta = 0). phases: safe points of a demand-1 job.
    reconfig_s: seconds per resize onto a different set (`OverheadModel.cost()`).
    launch_s + launch_per_proc_s·p: mpiexec start-up, set-up and teardown,
    which the profiled compute-loop times leave out; paid once per job,
    whatever its demand (it grows with p: one ssh and one Python per rank).

    Demand f scales the work (it is an iteration/phase count):
    T_f(p) = f·(W/p + alpha + beta·p) + launch_s + launch_per_proc_s·p, with
    round(f·phases) safe points. Still a Sevcik model, so the engine takes it as is.
    teardown_s: from the job's done report to its mpiexec's exit; release_s:
    from a shrinking resize to the old mpiexec's exit. The workstations are
    not usable meanwhile, so the engine holds them (Job.teardown, Job.release).
    Approximations, both from the engine taking one T(p) per job:
    - launch_s less startup_s (the launch up to hello, paid as a pause at the
      start) rides in alpha, so it is spread over the job's progress instead
      of being paid at its start and end. Its total is exact for any resize
      history (alpha does not depend on p), but safe points move by up to
      launch_s, and under speeds < 1 the start-up slows down with the job
      (mostly right: it is ssh and Python start-up on the workstations).
      The mpiexec relaunch of each resize is in reconfig_s, not here.
    resize: the profiled resize-cost fit (fixed + per-p + bytes over the
    link, `ResizeFit`); when given it prices every resize by its sets and
    reconfig_s is unused. extra_launch_s / extra_resize_s: the config's
    overhead knob, added to every launch and every resize onto a new set,
    as the live executor waits them out.
    startup_s: launch to hello, profiled (None: not profiled, no pause).
    setup_work_s: set-up split among the ranks (experiments/models/launch.py):
    a job started on p workstations pauses a further setup_work_s/p.
    hello_s: (p, seconds from start to hello) as profiled, the median at each p; when
    given, a job's pause on n processors is read off it (`pause`) in place of startup_s +
    setup_work_s/n.
    run_sigma: how far identical dedicated runs of the class differ, as the log-sd of their
    loop times at the reference speed (`experiments.models.loop.run_sigma`); `ensemble`
    draws each job's work with it.
    A predicted job starts with a pause of startup_s + extra_launch_s (its
    mpiexec launching) and answers a preemption only at a phase boundary at
    least one phase after its start or resize, as the live workloads do.
    """

    name: str
    W: float
    alpha: float
    beta: float
    pmax: int | None = None
    phases: int = 1
    reconfig_s: float = 0.0
    launch_s: float = 0.0
    launch_per_proc_s: float = 0.0
    teardown_s: float = 0.0
    release_s: float = 0.0
    resize: ResizeFit | None = None
    extra_launch_s: float = 0.0
    extra_resize_s: float = 0.0
    startup_s: float | None = None
    setup_work_s: float = 0.0
    run_sigma: float = 0.0
    hello_s: tuple[tuple[int, float], ...] = ()

    def __post_init__(self) -> None:
        if not (math.isfinite(self.W) and self.W > 0):
            raise ValueError(f"class {self.name}: W must be finite and > 0, got {self.W}")
        for field in ("alpha", "beta", "reconfig_s", "launch_s", "launch_per_proc_s", "teardown_s",
                      "release_s", "extra_launch_s", "extra_resize_s", "setup_work_s", "run_sigma"):
            value = getattr(self, field)
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"class {self.name}: {field} must be finite and >= 0, got {value}")
        if self.pmax is not None and self.pmax < 1:
            raise ValueError(f"class {self.name}: pmax must be >= 1, got {self.pmax}")
        if self.startup_s is not None and not (math.isfinite(self.startup_s) and self.startup_s >= 0):
            raise ValueError(f"class {self.name}: startup_s must be finite and >= 0, got {self.startup_s}")
        if self.phases < 1:
            raise ValueError(f"class {self.name}: phases must be >= 1, got {self.phases}")

    @property
    def fit_pmax(self) -> int | None:
        """pmax, or Sevcik's optimum of the (unscaled) fit when pmax is None."""
        return SevcikModel(self.W, self.alpha, self.beta, self.pmax).pmax

    def model(self, demand: float = 1.0, requested: int | None = None) -> SevcikModel:
        """The engine model of one job of this class; `requested` caps pmax."""
        pmax = self.fit_pmax
        if requested is not None:
            if requested < 1:
                raise ValueError(f"class {self.name}: requested must be >= 1, got {requested}")
            pmax = requested if pmax is None else min(pmax, requested)
        # pmax is fixed first, from the loop fit alone: the live policy is told the same.
        if pmax is None:  # no limit: keep it so, or SevcikModel would derive one from the larger beta
            pmax = 2**31 - 1
        # what of the launch is not the start-up pause (set-up after hello, wind-down) rides in alpha
        rest = max(0.0, self.launch_s - (self.startup_s or 0.0))
        return SevcikModel(demand * self.W, demand * self.alpha + rest,
                           demand * self.beta + self.launch_per_proc_s, pmax)

    def resize_cost(self, old: Sequence[int], new: Sequence[int]) -> float:
        """Seconds for a resize from set `old` to set `new` (a different set), knob included."""
        base = self.reconfig_s if self.resize is None else self.resize.cost(old, new)
        return base + self.extra_resize_s

    def startup(self) -> float:
        """Seconds from a start until the job begins its work: the profiled launch-to-hello
        (0 for a profile without it: its whole launch then rides in alpha) plus the knob's delay."""
        return (self.startup_s or 0.0) + self.extra_launch_s

    def pause(self, n: int) -> float:
        """Seconds from a start on n processors until the job begins its work: the profiled
        hello at n, interpolated linearly in log p - log time between profiled sizes (a set-up
        split among the ranks falls like a power of p) and held flat beyond them; plus the
        knob's launch delay."""
        points = sorted(self.hello_s)
        if not points:
            return (self.startup_s or 0.0) + self.setup_work_s / n + self.extra_launch_s
        ps = [p for p, _ in points]
        if n <= ps[0]:
            t = points[0][1]
        elif n >= ps[-1]:
            t = points[-1][1]
        else:
            i = bisect.bisect_right(ps, n)
            (p0, t0), (p1, t1) = points[i - 1], points[i]
            if t0 > 0 and t1 > 0:
                w = math.log(n / p0) / math.log(p1 / p0)
                t = math.exp(math.log(t0) + w * (math.log(t1) - math.log(t0)))
            else:
                t = t0 + (t1 - t0) * (n - p0) / (p1 - p0)
        return t + self.extra_launch_s

    def job_phases(self, demand: float = 1.0) -> int:
        """Safe points of a job of this demand: round(demand·phases), at least 1."""
        return max(1, round(demand * self.phases))


def predict(stream: Sequence[SubmittedJob], classes: Mapping[str, ClassModel], policy: str, P: int, *,
            speeds: Sequence[float] | None = None,
            availability: Sequence[float] | None = None,
            schedule: Sequence[Schedule] | None = None) -> list[FinishedJob]:
    """One predicted FinishedJob per stream job, in the stream's order.

    `speeds`: per workstation, relative to the profile (`workstation_speeds`);
    None runs every workstation at the profiled speed. `availability`: what owners
    leave of each workstation (1 - U_ow), which a job pays as the product over its
    members (scheduler/engine.py); `schedule`, instead, the owners' bursts themselves
    (experiments/owner_schedules.py). `requested` in the
    outcome is the pmax the job ran with (its request, the class's pmax and P,
    whichever is least).
    """
    stream = list(stream)
    jobs = engine_jobs(stream, classes)
    records = {r.id: r for r in simulate(jobs, policy, P, timeline=False, speeds=speeds,
                                                   availability=availability, schedule=schedule).jobs}
    return [FinishedJob.of(sj, records[sj.id]) for sj in stream]


def engine_jobs(stream: Sequence[SubmittedJob], classes: Mapping[str, ClassModel],
                work: Mapping[int, float] | None = None) -> list[Job]:
    """The engine's jobs for a stream, as `predict` runs them (also for a caller that wants the timeline).
    `work`: a factor on some jobs' work (their safe points stay those of their demand)."""
    jobs = []
    for sj in stream:
        cm = classes.get(sj.cls)
        if cm is None:
            raise ValueError(f"job {sj.id}: unknown class {sj.cls!r} (known: {', '.join(sorted(classes))})")
        if sj.requested_procs is not None and sj.requested_procs < 1:
            raise ValueError(f"job {sj.id}: requested must be >= 1, got {sj.requested_procs}")
        factor = work.get(sj.id, 1.0) if work else 1.0
        jobs.append(Job(sj.id, sj.arrival_s, cm.model(sj.demand * factor, sj.requested_procs), cm.job_phases(sj.demand),
                        cm.reconfig_s + cm.extra_resize_s, cm.teardown_s, cm.release_s,
                        resize_cost=cm.resize_cost, startup=cm.startup(), work_first=True,
                        setup_work=cm.setup_work_s, pause=cm.pause if cm.hello_s else None))
    return jobs


#: The cell statistics an ensemble gives (run_stats.STATS names) and summarize's key for each.
ENSEMBLE_STATS = {"response": "mean_response", "median_execution": "median_execution", "wait": "mean_wait",
                  "mean_procs": "mean_partition", "preemptions": "preemptions_per_job"}


def ensemble(stream: Sequence[SubmittedJob], classes: Mapping[str, ClassModel], policy: str, P: int, *,
             counted: Collection[int], replicas: int = 40, seed: int = 0,
             speeds: Sequence[float] | None = None,
             availability: Sequence[float] | None = None,
             schedule: Sequence[Schedule] | None = None,
             noise: Sequence[RunDraw] | None = None) -> dict[str, list[float]]:
    """Each statistic of ENSEMBLE_STATS over the `counted` jobs, in `replicas` replays of the stream.

    With `noise` (one `experiments.noise.RunDraw` per replay, drawn once for every cell of
    the run from a model measured on other live runs), replay i scales every job's work by
    exp(shift_i + N(0, sigma_cell_i) + N(0, sigma_job_i)): the first term all cells of
    the run share at that replay, the second all jobs of this cell, the third the job alone. Without one, as before: each job's work alone is drawn with its
    class's profiled run_sigma (a band that leaves out what the jobs of a cell share).

    In each replay every job's work is drawn around its class model: a factor with mean 1
    and log-sd the class's run_sigma, how far identical dedicated runs differed when it was
    profiled. One replay is a single path through a chaotic system: a job that ends 5%
    sooner can hand its processors to another job and change every later partition (the
    demo's EQUI cell at 0.25/s measured medians of 18.3 to 26.8 s in runs of one stream).
    The ensemble's mean is what a run should give on average, and its spread how far one
    run may stray by chance alone. Seeded: the same inputs give the same figures.
    """
    if replicas < 1:
        raise ValueError(f"replicas must be >= 1, got {replicas}")
    stream = list(stream)
    counted = set(counted)
    rng = random.Random(seed)
    out: dict[str, list[float]] = {name: [] for name in ENSEMBLE_STATS}
    if noise is not None and len(noise) < replicas:
        raise ValueError(f"noise: {len(noise)} run draws for {replicas} replicas")
    for i in range(replicas):
        work = {}
        if noise is not None:
            shift, sigma_cell, sigma_job = noise[i]
            shared = shift + rng.gauss(0.0, sigma_cell)
            for sj in stream:
                work[sj.id] = math.exp(shared + rng.gauss(0.0, sigma_job))
        else:
            for sj in stream:
                sigma = classes[sj.cls].run_sigma if sj.cls in classes else 0.0
                work[sj.id] = math.exp(rng.gauss(0.0, sigma) - sigma * sigma / 2) if sigma else 1.0
        records = {r.id: r for r in simulate(engine_jobs(stream, classes, work), policy, P, timeline=False,
                                             speeds=speeds, availability=availability,
                                             schedule=schedule).jobs}
        figures = summarize([FinishedJob.of(sj, records[sj.id]) for sj in stream if sj.id in counted], 0)
        for name, key in ENSEMBLE_STATS.items():
            out[name].append(figures[key])
    return out


def summarize(outcomes: Sequence[FinishedJob], warmup: int) -> dict[str, float]:
    """Means over the jobs with id >= warmup (ids are stream positions) that are done.

    Works the same for measured and predicted outcomes. `jobs` counts the done
    jobs averaged over, `failed` the others past the warm-up (status not done),
    which are left out; with no done job every figure is NaN.
    """
    if not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f"warmup must be a whole number of jobs >= 0, got {warmup!r}")
    kept = [o for o in outcomes if o.id >= warmup]
    done = [o for o in kept if o.status == Outcome.DONE]
    n = len(done)

    def mean(values: list[float]) -> float:
        return sum(values) / n if n else math.nan

    return {
        "jobs": n,
        "failed": len(kept) - n,
        "mean_response": mean([o.response_s for o in done]),
        "mean_wait": mean([o.wait_s for o in done]),
        "mean_execution": mean([o.execution_s for o in done]),
        "median_execution": statistics.median([o.execution_s for o in done]) if n else math.nan,
        "mean_partition": mean([o.mean_procs for o in done]),
        "preemptions_per_job": mean([float(o.preemptions) for o in done]),
    }
