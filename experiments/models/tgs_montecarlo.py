"""The Monte Carlo loop of Menascé & Rao's Fig. 2: draw owner activity, run TGS, until converged.

Each iteration draws every owner's think times and CPU demands (box 1; why per command and
not one Z~, D~ per workstation: `owner_trace.py`), lets the P guests of a task share what
the owners leave (box 2, eq. 6), and scans the graph (box 3, `tgs.py`). The iterations are
grouped in batches; the batch means give a Student-t 95% interval, and the loop stops when
its half-width is at most `rel_width` of the mean (batch means, MacDougall [7]).
Seeded, so a prediction can be repeated. Pure: progress goes to a callback, not a screen.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from experiments.models.mva import dedicated_time_s, shared_time_s
from experiments.models.owner_trace import OwnerTrace
from experiments.models.tgs import GuestCount, Network, TgsResult, tgs
from scheduler.taskgraph.placement import Policy
from scheduler.taskgraph.spec import TaskGraph, TaskSpec
from scheduler.taskgraph.workstations import Workstation

CONFIDENCE = 0.95


@dataclass(frozen=True)
class MonteCarloSettings:
    rel_width: float = 0.02        # stop when the 95% half-width is at most this share of the mean
    batch_size: int = 20           # iterations per batch
    min_batches: int = 10          # batches before the interval is trusted
    max_batches: int = 2000        # give up (converged=False) after this many
    seed: int = 0

    def __post_init__(self) -> None:
        if not 0 < self.rel_width < 1:
            raise ValueError(f"rel_width: must be in (0, 1), got {self.rel_width}")
        if self.batch_size < 1 or self.min_batches < 2 or self.max_batches < self.min_batches:
            raise ValueError("batches: need batch_size >= 1 and 2 <= min_batches <= max_batches, "
                             f"got {self.batch_size}, {self.min_batches}, {self.max_batches}")


@dataclass(frozen=True)
class TaskMeans:
    task: str
    start_s: float
    finish_s: float


@dataclass(frozen=True)
class MonteCarloResult:
    mean_s: float                  # mean execution time over all iterations
    half_width_s: float            # of the 95% interval from the batch means
    batches: int
    batch_size: int
    converged: bool                # half-width within rel_width of the mean
    elapsed_s: float               # wall time the loop took
    tasks: tuple[TaskMeans, ...]   # each task's mean start and finish, in graph order

    @property
    def rel_half_width(self) -> float:
        return self.half_width_s / self.mean_s if self.mean_s > 0 else 0.0


def _half_width(means: Sequence[float]) -> float:
    k = len(means)
    sd = float(np.std(means, ddof=1))
    return float(stats.t.ppf(0.5 + CONFIDENCE / 2, k - 1)) * sd / math.sqrt(k)


def one_iteration(graph: TaskGraph, workstations: Sequence[Workstation], policy: Policy,
                  rng: np.random.Generator, network: Network = Network(),
                  guest_count: GuestCount = GuestCount.RUNNING,
                  available: Mapping[str, float] | None = None) -> TgsResult:
    """One pass of Fig. 2: fresh owner traces on every workstation, then TGS."""
    traces = {w.name: OwnerTrace(w.owners, rng) for w in workstations if w.owners is not None and w.owners.n > 0}

    def service(task: TaskSpec, ws: Workstation, guests: int, start_s: float) -> float:
        work_s = shared_time_s(dedicated_time_s(task.demand_ref_s, ws), guests)  # eq. 6 on the free CPU
        trace = traces.get(ws.name)
        return work_s if trace is None else trace.finish_after(start_s, work_s) - start_s

    return tgs(graph, workstations, policy, network, service, guest_count, available)


def monte_carlo(graph: TaskGraph, workstations: Sequence[Workstation], policy: Policy,
                network: Network = Network(), settings: MonteCarloSettings = MonteCarloSettings(),
                guest_count: GuestCount = GuestCount.RUNNING,
                available: Mapping[str, float] | None = None,
                on_batch: Callable[[int, float, float], None] | None = None) -> MonteCarloResult:
    """Iterate Fig. 2 until the 95% interval of the batch means is narrow enough.

    `on_batch(batches, mean_s, rel_half_width)` is called after each batch (for a progress bar).
    """
    rng = np.random.default_rng(settings.seed)
    began = time.perf_counter()
    names = [t.name for t in graph.tasks]
    sum_start = dict.fromkeys(names, 0.0)
    sum_finish = dict.fromkeys(names, 0.0)
    batch_means: list[float] = []
    half = math.inf
    while len(batch_means) < settings.max_batches:
        total = 0.0
        for _ in range(settings.batch_size):
            res = one_iteration(graph, workstations, policy, rng, network, guest_count, available)
            total += res.makespan_s
            for t in res.timings:
                sum_start[t.task] += t.start_s
                sum_finish[t.task] += t.finish_s
        batch_means.append(total / settings.batch_size)
        mean = float(np.mean(batch_means))
        if len(batch_means) >= 2:
            half = _half_width(batch_means)
        rel = half / mean if mean > 0 else 0.0
        if on_batch is not None:
            on_batch(len(batch_means), mean, rel)
        if len(batch_means) >= settings.min_batches and rel <= settings.rel_width:
            break
    n = len(batch_means) * settings.batch_size
    mean = float(np.mean(batch_means))
    return MonteCarloResult(
        mean_s=mean, half_width_s=half, batches=len(batch_means), batch_size=settings.batch_size,
        converged=half <= settings.rel_width * mean, elapsed_s=time.perf_counter() - began,
        tasks=tuple(TaskMeans(k, sum_start[k] / n, sum_finish[k] / n) for k in names))
