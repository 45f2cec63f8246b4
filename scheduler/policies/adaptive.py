"""The run-to-completion family of Anastasiadis & Sevcik §3, built from three choices.

queue order  : FIFO, or SDF (non-decreasing T(1), FIFO among equals)
target size  : ASP  max(1, floor(free / waiting))
               AP1  max(1, floor(P / waiting))
               AEP  max(1, floor(P / (waiting + running)))
               SDF  pmax (all it can use), SDF-Max k: min(k, pmax)
distribution : greedy (each job its target, in queue order), or DIF

"waiting" counts the queue when the round starts (the newcomer included),
"running" the jobs holding processors; the target is fixed for the round.
Each job in queue order gets min(target, pmax, free left) while processors
remain, so the last job activated takes what is left even when that is less
than its target (A&S footnote 1). Choice: AP1 and AEP never give a job more
than the target (that is what makes AEP conservative); ASP, whose target is
a share of the free processors, gives the remainder of that division to the
queue's last job (capped at pmax), so it divides all free processors "as
equally as possible" and an arrival to an empty queue gets min(pmax, free).
The SDF family activates jobs with min(pmax, [k,] free) each; SDF-Max k caps
every partition at k. DIF keeps greedy's choice of *which* jobs start and of
*how many* processors they get in all, gives each one processor, then hands
out the rest one at a time to the job with the largest T(p) - T(p+1), up to
pmax (ties: the earlier in queue order). Choice: the total is greedy's, not
all free processors, because A&S §6.4 find DIF leaves AEP's partition sizes
unchanged and affects only execution times. Rounds run at arrivals and
completions only.
"""
from __future__ import annotations

import heapq
from typing import Callable

from scheduler.actions import Action, Start
from scheduler.alloc import take_mask
from scheduler.model import Knowledge
from scheduler.policy import Policy
from scheduler.snapshot import JobView, Reason, Snapshot

Target = Callable[[Snapshot], int]
_ROUNDS = (Reason.ARRIVAL, Reason.COMPLETION)


def asp_target(snap: Snapshot) -> int:
    return snap.free_mask.bit_count() // len(snap.queue) or 1


def ap1_target(snap: Snapshot) -> int:
    return snap.P // len(snap.queue) or 1


def aep_target(snap: Snapshot) -> int:
    jobs = len(snap.queue) + len(snap.running) + len(snap.preempting) + len(snap.preempted)
    return snap.P // jobs or 1


def greedy(queue, target: int, free: int, last_takes_rest: bool) -> list[tuple[JobView, int]]:
    """(job, size) for the jobs activated this round, in queue order."""
    chosen: list[tuple[JobView, int]] = []
    n_queue = len(queue)
    for i, job in enumerate(queue):
        if free <= 0:
            break
        n = min(target, job.pmax, free)
        if last_takes_rest and i == n_queue - 1:
            n = min(job.pmax, free)
        chosen.append((job, n))
        free -= n
    return chosen


def dif(chosen: list[tuple[JobView, int]], total: int) -> list[tuple[JobView, int]]:
    """Same jobs, `total` processors given out by the largest marginal gain."""
    sizes = [1] * len(chosen)
    left = total - len(chosen)
    heap = []
    for i, (job, _) in enumerate(chosen):
        if job.pmax > 1:
            T = job.model.T
            heap.append((T(2) - T(1), i))
    heapq.heapify(heap)
    while left > 0 and heap:
        _, i = heapq.heappop(heap)
        sizes[i] += 1
        left -= 1
        job = chosen[i][0]
        p = sizes[i]
        if p < job.pmax:
            T = job.model.T
            heapq.heappush(heap, (T(p + 1) - T(p), i))
    return [(job, n) for (job, _), n in zip(chosen, sizes)]


class Adaptive(Policy):
    """One member of the family; see the module docstring for the rules."""

    run_to_completion = True

    def __init__(self, name: str, target: Target | int | None, *, sdf: bool, use_dif: bool,
                 last_takes_rest: bool) -> None:
        self.name = name
        self._target = target
        self._sdf = sdf
        self._dif = use_dif
        self._last_takes_rest = last_takes_rest
        needs = {Knowledge.PMAX}
        if sdf:
            needs.add(Knowledge.T1)
        if use_dif:
            needs.add(Knowledge.TP)
        self.needs = frozenset(needs)

    def queue_key(self, job: JobView) -> object:
        return (job.t1, job.seq) if self._sdf else job.seq

    def decide(self, snap: Snapshot) -> list[Action]:
        mask = snap.free_mask
        if not mask or not snap.queue or snap.reason not in _ROUNDS:
            return []
        t = self._target
        if t is None:
            target = snap.P
        elif isinstance(t, int):
            target = t
        else:
            target = t(snap)
        free = mask.bit_count()
        chosen = greedy(snap.queue, target, free, self._last_takes_rest)
        if self._dif:
            chosen = dif(chosen, sum(n for _, n in chosen))
        actions: list[Action] = []
        for job, n in chosen:
            procs, mask = take_mask(mask, n)
            actions.append(Start(job.id, procs))
        return actions


def family() -> list[Adaptive]:
    """The 12 adaptive rules and SDF variants named as in A&S (and Table 2)."""
    rules: list[Adaptive] = []
    for base, target in (("ASP", asp_target), ("AP1", ap1_target), ("AEP", aep_target)):
        rest = base == "ASP"
        rules.append(Adaptive(base, target, sdf=False, use_dif=False, last_takes_rest=rest))
        rules.append(Adaptive(f"{base}(1)", target, sdf=True, use_dif=False, last_takes_rest=rest))
        rules.append(Adaptive(f"{base}(2)", target, sdf=True, use_dif=True, last_takes_rest=rest))
    rules.append(Adaptive("SDF", None, sdf=True, use_dif=False, last_takes_rest=False))
    for k in (1, 2, 6):
        rules.append(Adaptive(f"SDF-MAX{k}", k, sdf=True, use_dif=False, last_takes_rest=False))
    return rules
