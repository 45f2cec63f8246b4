"""Any space-sharing policy, with *which* workstations chosen by Sanjay & Vadhiyar's selection.

The inner policy still decides how many processors a job gets (p) and when; this wrapper
rewrites the set of each Start and Resize it answers with: the p workstations with the least
predicted time (Eq. 1, or the predictor given) under the snapshot's availability, as a
selection algorithm (SA, GA, DP, BE, BRUTE; SA-FIG1 and GA-FIG2 are Figs. 1 and 2 as printed) finds them within its time budget.

- **Start:** p of the workstations free at that point of the action list.
- **Resize:** the subset restriction (Padhye & Dowdy §2.4, checked by the state machine)
  stands: a shrinking job keeps the best p of its own set; a growing job keeps its whole set
  and the search chooses the extra ones among the free, scored as members of the whole new
  set; a resize to the same size keeps the set.
- **No availability** (`Snapshot.availability` is None: an engine without speeds or owners, a
  live run without a monitor): the inner policy's actions are returned exactly as given.

A fixed p in a search over subsets of any size. The paper's algorithms search every size
(SA and GA anneal each size from max_procs down, DP grows one machine at a time, BE maps
(cpu, bw) points to the largest sets that meet them), so restricting them to size p would
mean rewriting every figure. Instead each keeps its own walk and the predictor is changed:
a subset of k >= p machines is scored by Eq. 1 at P = p with its own minAvgAvailCPU and
minAvgAvailBW, a bound on its best p-subset (Eq. 1 falls as either minimum rises), so the
least score over all sizes is the best size-p set's; a subset of k < p machines cannot hold
the job and is scored out, by (p - k) times the worst size-p prediction on the cluster added
on, which keeps the order among small sets for DP's and SA's first steps. The set found is
then fitted to p greedily by Eq. 2 (DP's step): the best p of it when larger, itself plus
the best additions when the budget ran out before a set of p was seen. Brute force thus
still gives the optimum of size p.

The budget bounds each search (one per Start or growing/shrinking Resize); the fitting adds
at most p x n evaluations. SA and GA always spend their whole budget, so a simulation with
them depends on the host's speed; BRUTE, DP and BE usually finish first (`finished`), and
then the engine stays deterministic.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from scheduler.actions import Action, Resize, Start
from scheduler.availability import Availability
from scheduler.policy import Policy
from scheduler.selection.problem import Predictor, Selection, SelectionProblem, SubsetSummary, Workstation
from scheduler.selection.registry import algorithm_names, select_hosts
from scheduler.snapshot import JobView, Snapshot, ids, mask_of

PredictorFor = Callable[[JobView, Availability], Predictor]

#: Share of a job's profiled time spent communicating, when no predictor is given (a choice:
#: the profiles of Model do not split T(p); 0.2 lets one congested link count about as much as
#: a workstation that has lost a sixth of its CPU).
DEFAULT_COMM_SHARE = 0.2
#: Bandwidth every link is taken at when the links are not known (the engine's case): all alike.
UNKNOWN_LINK_BIT_S = 1e9
DEFAULT_BUDGET_S = 0.2


def profile_predictor(comm_share: float = DEFAULT_COMM_SHARE) -> PredictorFor:
    """Eq. 1 from a job's profiled T(p) (taken unloaded): a share 1 - c of it is computation,
    slowed by 1/minAvgAvailCPU (speed included), and c is communication, slowed by the best
    link's bandwidth over minAvgAvailBW. At a fixed p, T(p) only scales the prediction."""
    if not 0.0 <= comm_share <= 1.0:
        raise ValueError(f"comm_share: {comm_share} is not in [0, 1]")

    def for_job(job: JobView, availability: Availability) -> Predictor:
        bw = availability.bw_bit_s
        ref_bit_s = float(bw[np.isfinite(bw)].max()) if bw is not None and bw.shape[0] > 1 else UNKNOWN_LINK_BIT_S
        T = job.model.T

        def predict(s: SubsetSummary) -> float:
            return T(s.procs) * ((1.0 - comm_share) / s.min_avail_cpu + comm_share * ref_bit_s / s.min_avail_bw_bit_s)

        return predict

    return for_job


@dataclass(frozen=True)
class Placement:
    """The set chosen for one action, its predicted time and the search behind it."""

    procs: tuple[int, ...]
    predicted_s: float
    selection: Selection | None  # None: nothing to search (every candidate was needed)


def choose(availability: Availability, candidates: Sequence[int], p: int, predict: Predictor, algorithm: str,
           budget_s: float, seed: int = 0, keep: Sequence[int] = ()) -> Placement:
    """The p workstations, `keep` and p - len(keep) of `candidates`, with the least predicted time.

    `predict` is Eq. 1 for the job (it is called with procs = p). Ids are the policy's 0..P-1.
    """
    keep, pool = tuple(sorted(keep)), tuple(sorted(set(candidates) - set(keep)))
    extra = p - len(keep)
    if extra < 0 or extra > len(pool):
        raise ValueError(f"p: cannot place {p} with {len(keep)} kept and {len(pool)} candidates")
    cluster = _Cluster(availability)
    if extra == 0 or extra == len(pool):
        procs = tuple(sorted(keep + (pool if extra else ())))
        return Placement(procs, predict(cluster.summary(procs, p)), None)
    selection = None
    if extra == 1:  # one machine to add or keep: score each exactly, no search needed
        scores = [predict(cluster.summary(tuple(sorted(keep + (i,))), p)) for i in pool]
        chosen = (pool[int(np.argmin(scores))],)
    else:
        problem = cluster.problem(pool, keep, predict)
        selection = select_hosts(replace(problem, predict_s=_fixed_size(predict, extra, p, problem)),
                                 algorithm, budget_s, seed)
        found = _fit(problem, [int(name) for name in selection.workstations], extra, predict, p)
        chosen = tuple(pool[i] for i in found)
    procs = tuple(sorted(keep + chosen))
    return Placement(procs, predict(cluster.summary(procs, p)), selection)


class _Cluster:
    """The snapshot's availability as the arrays the selection problem is built from."""

    def __init__(self, availability: Availability) -> None:
        n = availability.size
        speed = np.ones(n) if availability.speed is None else np.array(availability.speed, dtype=float)
        self.cpu = np.array(availability.cpu, dtype=float) * speed  # effective: avail x speed
        if availability.bw_bit_s is None:
            bw = np.full((n, n), UNKNOWN_LINK_BIT_S)
            np.fill_diagonal(bw, math.inf)
        else:
            bw = availability.bw_bit_s
        self.bw = bw
        off = bw[~np.eye(n, dtype=bool)]
        self.mean_bw = off.reshape(n, n - 1).mean(axis=1) if n > 1 else np.array([UNKNOWN_LINK_BIT_S])

    def summary(self, procs: tuple[int, ...], p: int) -> SubsetSummary:
        """The whole set's minima (one machine: the mean of its links, as the problem does)."""
        idx = np.asarray(procs, dtype=np.intp)
        bw = float(self.mean_bw[idx[0]]) if idx.size == 1 else float(self.bw[np.ix_(idx, idx)].min())
        return SubsetSummary(p, float(self.cpu[idx].min()), bw)

    def problem(self, pool: tuple[int, ...], keep: tuple[int, ...], predict: Predictor) -> SelectionProblem:
        """The pool as a selection problem, with the kept set folded in: each machine's CPU
        capped by the kept set's slowest, each link's bandwidth by the slowest link either end
        has into the kept set and by the kept set's own, so a subset E of two or more is summarised
        as keep + E is."""
        idx = np.asarray(pool, dtype=np.intp)
        cpu = self.cpu[idx]
        bw = self.bw[np.ix_(idx, idx)].copy()
        if keep:
            k = np.asarray(keep, dtype=np.intp)
            cpu = np.minimum(cpu, self.cpu[k].min())
            inside = float(self.bw[np.ix_(k, k)].min())  # +inf for one kept machine
            to_keep = np.minimum(self.bw[np.ix_(idx, k)].min(axis=1), inside)
            bw = np.minimum(bw, np.minimum.outer(to_keep, to_keep))
            np.fill_diagonal(bw, math.inf)
        # named by position in the pool; avail_cpu x speed = the effective CPU (speed > 1 allowed)
        machines = tuple(Workstation(str(i), min(1.0, float(c)), float(c) / min(1.0, float(c)))
                         for i, c in enumerate(cpu))
        return SelectionProblem(machines, bw, predict)


def _fixed_size(predict: Predictor, extra: int, p: int, problem: SelectionProblem) -> Predictor:
    """The module docstring's scoring: subsets of at least `extra` machines by Eq. 1 at P = p,
    smaller ones scored out by (extra - k) x the worst size-p prediction."""
    n = problem.size
    off = problem.bw_bit_s[~np.eye(n, dtype=bool)]
    worst_s = float(predict(SubsetSummary(p, float(problem.cpu.min()), float(off.min()))))
    if not (worst_s > 0 and math.isfinite(worst_s)):
        raise ValueError(f"predictor: {worst_s} s for the slowest set of {p} is not a time > 0")

    def scored(s: SubsetSummary) -> float:
        t_s = predict(SubsetSummary(p, s.min_avail_cpu, s.min_avail_bw_bit_s))
        return t_s if s.procs >= extra else t_s + (extra - s.procs) * worst_s

    return scored


def _fit(problem: SelectionProblem, found: list[int], m: int, predict: Predictor, p: int) -> list[int]:
    """`found` cut or grown to m machines by Eq. 2: the best p of it, or it plus the best additions."""
    if len(found) == m:
        return found
    if len(found) > m:
        members, pool = [], set(found)
    else:
        members, pool = list(found), set(range(problem.size)) - set(found)
    cpu, bw = problem.cpu, problem.bw_bit_s
    if not members:  # the first: the best machine on its own (Fig. 3, lines 2-5)
        members.append(min(sorted(pool), key=lambda i: _single(problem, predict, p, i)))
    pool -= set(members)
    min_cpu = float(cpu[members].min())
    min_bw = float(bw[np.ix_(members, members)].min())
    while len(members) < m:
        rest = np.array(sorted(pool), dtype=np.intp)
        new_cpu = np.minimum(cpu[rest], min_cpu)
        new_bw = np.minimum(bw[np.ix_(rest, members)].min(axis=1), min_bw)
        scores = [predict(SubsetSummary(p, float(c), float(b))) for c, b in zip(new_cpu, new_bw)]
        k = int(np.argmin(scores))
        members.append(int(rest[k]))
        pool.discard(int(rest[k]))
        min_cpu, min_bw = float(new_cpu[k]), float(new_bw[k])
    return members


def _single(problem: SelectionProblem, predict: Predictor, p: int, i: int) -> float:
    """Eq. 1 at P = p for machine i alone (its links: their mean)."""
    s = problem.summary([i])
    return predict(SubsetSummary(p, s.min_avail_cpu, s.min_avail_bw_bit_s))


class SelectingPolicy(Policy):
    """`inner` deciding how many and when, the selection deciding which (module docstring)."""

    def __init__(self, inner: Policy, algorithm: str, budget_s: float = DEFAULT_BUDGET_S, seed: int = 0,
                 predictor_for: PredictorFor | None = None) -> None:
        key = algorithm.strip().upper()
        if key not in algorithm_names():
            raise ValueError(f"select: unknown algorithm {algorithm!r}; known: {', '.join(algorithm_names())}")
        if not (budget_s > 0 and math.isfinite(budget_s)):
            raise ValueError(f"select_budget_s: {budget_s:g} is not a number of seconds > 0")
        self.inner = inner
        self.algorithm = key
        self.budget_s = float(budget_s)
        self.seed = seed
        self.predictor_for = predictor_for or profile_predictor()
        self.name = f"{inner.name}+{key}"  # type: ignore[misc]  (a per-object name: the pair)
        self.needs = inner.needs  # type: ignore[misc]  (at a fixed p, T(p) only scales Eq. 1)
        self.zero_overhead = inner.zero_overhead  # type: ignore[misc]
        self.run_to_completion = inner.run_to_completion  # type: ignore[misc]
        self.searches = 0
        self.out_of_budget = 0  # searches that returned the best found when the budget ran out
        self.last: list[Placement] = []  # the placements of the latest decision

    def queue_key(self, job: JobView) -> object:
        return self.inner.queue_key(job)

    def decide(self, snap: Snapshot) -> list[Action]:
        actions = self.inner.decide(snap)
        availability = snap.availability
        self.last = []
        if availability is None or not actions:
            return actions
        if availability.size != snap.P:
            raise ValueError(f"availability: {availability.size} workstations for P={snap.P}")
        free = snap.free_mask
        views: dict[object, JobView] = {}
        out: list[Action] = []
        for action in actions:
            if type(action) is Start:
                if not views:
                    views = _views(snap)
                placed = self._place(views[action.job], availability, tuple(ids(free)), len(action.procs), ())
                free &= ~mask_of(placed)
                out.append(Start(action.job, placed))
            elif type(action) is Resize:
                if not views:
                    views = _views(snap)
                old = views[action.job].procs
                n = len(action.procs)
                if n == len(old):
                    placed = tuple(old)
                elif n < len(old):
                    placed = self._place(views[action.job], availability, old, n, ())
                else:
                    placed = self._place(views[action.job], availability, tuple(ids(free)), n, old)
                free = (free & ~mask_of(placed)) | (mask_of(old) & ~mask_of(placed))
                out.append(Resize(action.job, placed))
            else:
                out.append(action)
        return out

    def _place(self, job: JobView, availability: Availability, candidates: Sequence[int], p: int,
               keep: Sequence[int]) -> tuple[int, ...]:
        placement = choose(availability, candidates, p, self.predictor_for(job, availability), self.algorithm,
                           self.budget_s, self.seed + self.searches, keep)
        if placement.selection is not None:
            self.searches += 1
            self.out_of_budget += not placement.selection.finished
        self.last.append(placement)
        return placement.procs


def _views(snap: Snapshot) -> dict[object, JobView]:
    """Jobs a Start or Resize may name: the queued and the preempted, by id."""
    views: dict[object, JobView] = {job.id: job for job in snap.queue}
    views.update((job.id, job) for job in snap.preempted.values())
    return views
