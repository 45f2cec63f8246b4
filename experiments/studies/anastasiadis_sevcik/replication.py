"""One replication of one cell, run on the real scheduler engine.

This is the only module that knows the engine's API (``scheduler.engine.
simulate``, ``scheduler.registry.get_policy``, ``scheduler.model``).  The
engine works in seconds; the study works in the paper's ks, so times are
converted at this boundary and nowhere else.

Jobs are fed to the engine as a prefix of the replication's stream: enough
jobs that every job arriving before the last measured completion is
included (``saturation.prefix_is_exact``), which gives exactly the paper's
numbers without simulating all 30,000 jobs when the measured ones finish
early.  A cell whose measured jobs are still unfinished when the last of the
10,000 additional jobs arrives is saturated.
"""
from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass

import numpy as np

from experiments.studies.anastasiadis_sevcik.saturation import (
    Window,
    is_saturated,
    prefix_is_exact,
    prefix_length,
)
from experiments.studies.anastasiadis_sevcik.spec import WORKLOADS, GeneratorSpec
from experiments.studies.anastasiadis_sevcik.workload import JobStream, generate, stream_seed

KS = 1000.0  # seconds per ks


@dataclass(frozen=True)
class ReplicationTask:
    """Everything a worker process needs to run one replication (picklable)."""

    generator: GeneratorSpec
    workload: str
    load: float
    policy: str
    replication: int
    seed: int
    jobs_per_replication: int
    warmup_jobs: int
    saturation_extra_jobs: int

    @property
    def window(self) -> Window:
        return Window(self.warmup_jobs, self.jobs_per_replication, self.saturation_extra_jobs)


@dataclass(frozen=True)
class ReplicationResult:
    """Means over the measured jobs of one replication (ks; partition in processors).

    ``actual_load`` is the measured rho_a of Section 4: processor-time
    occupied by the measured jobs over the capacity offered while they
    arrived.  ``wall_s`` is this replication's own run time.
    """

    workload: str
    load: float
    policy: str
    replication: int
    saturated: bool
    response_ks: float
    wait_ks: float
    run_ks: float
    partition: float
    actual_load: float
    jobs_simulated: int
    wall_s: float

    def as_row(self) -> dict[str, object]:
        return asdict(self)


def engine_jobs(stream: JobStream, n: int) -> list:
    """The first ``n`` jobs as the engine's ``Job`` objects (ids are arrival indices)."""
    from scheduler.model import Job, SevcikModel

    return [Job(i, float(stream.arrival_ks[i] * KS),
                SevcikModel(W=float(stream.work_ks[i] * KS), alpha=float(stream.alpha_ks[i] * KS),
                            beta=float(stream.beta_ks[i] * KS), pmax=int(stream.pmax[i])))
            for i in range(n)]


def simulate_prefix(stream: JobStream, n: int, policy_name: str, processors: int) -> dict[int, object]:
    """Run the engine on the first ``n`` jobs; records by job id."""
    from scheduler.engine import simulate
    from scheduler.registry import get_policy

    result = simulate(engine_jobs(stream, n), get_policy(policy_name), processors, timeline=False)
    return {int(r.id): r for r in result.jobs}


def run_replication(task: ReplicationTask) -> ReplicationResult:
    """Generate the replication's stream, simulate enough of it, measure the window."""
    t0 = time.perf_counter()
    window = task.window
    workload = WORKLOADS[task.workload]
    stream = generate(task.generator, workload, task.load, window.total_jobs,
                      stream_seed(task.seed, workload, task.replication))
    horizon_ks = window.horizon_ks(stream.arrival_ks)
    measured = np.arange(window.warmup_jobs, window.jobs_per_replication)

    # Start a little past the measured jobs; grow the prefix until it provably
    # contains every job that could affect them, or until the whole stream.
    n = min(window.total_jobs, window.jobs_per_replication + max(50, window.jobs_per_replication // 20))
    simulated = 0
    while True:
        records = simulate_prefix(stream, n, task.policy, task.generator.processors)
        simulated += n
        finish_ks = np.array([records[i].finish / KS for i in measured])
        last = float(finish_ks.max())
        if n == window.total_jobs or prefix_is_exact(stream.arrival_ks, n, last):
            break
        if last > horizon_ks:  # saturated on a prefix already: only the whole stream can say
            n = window.total_jobs
        else:
            n = min(window.total_jobs, int(prefix_length(stream.arrival_ks, last, n + 1) * 1.05) + 10)

    saturated = is_saturated(window, stream.arrival_ks, finish_ks)
    start_ks = np.array([records[i].start / KS for i in measured])
    submit_ks = stream.arrival_ks[measured]
    partition = np.array([records[i].mean_partition for i in measured])
    run_ks = finish_ks - start_ks
    span_ks = submit_ks[-1] - submit_ks[0]
    gap_ks = span_ks / (len(measured) - 1) if len(measured) > 1 else math.nan
    occupancy = float(np.mean(partition * run_ks))  # processor-ks per job
    return ReplicationResult(
        workload=task.workload, load=task.load, policy=task.policy, replication=task.replication,
        saturated=saturated,
        response_ks=math.inf if saturated else float(np.mean(finish_ks - submit_ks)),
        wait_ks=math.inf if saturated else float(np.mean(start_ks - submit_ks)),
        run_ks=float(np.mean(run_ks)),
        partition=float(np.mean(partition)),
        actual_load=occupancy / (task.generator.processors * gap_ks),
        jobs_simulated=simulated,
        wall_s=time.perf_counter() - t0,
    )
