"""The run-to-completion family of Anastasiadis & Sevcik §3, built from three choices.

queue order  : FIFO, or SDF (non-decreasing T(1), FIFO among equals)
target size  : ASP  max(1, floor(free / waiting))
               AP1  max(1, floor(P / waiting))
               AEP  max(1, floor(P / (waiting + running)))
               SDF  pmax (all it can use), SDF-Max k: min(k, pmax)
distribution : greedy (each job its target, in queue order), or DIF in one
               of its readings (``scheduler.policies.dif``)

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
every partition at k. DIF keeps greedy's choice of *which* jobs start, gives
each one processor, then hands out the rest of its pool one at a time to the
job with the largest T(p) - T(p+1), up to pmax (ties: the earlier in queue
order). The pool is the reading's: ASP(2), AP1(2), AEP(2) use greedy's total
(the default, because A&S §6.4 find DIF leaves AEP's partition sizes
unchanged and affects only execution times); ASP(2)-FREE ... AEP(2)-FREE use
all free processors, ASP(2)-SHARE ... the jobs' unrounded target share (see
``scheduler.policies.dif``). The target is the unrounded share (a ratio of
ints) floored for greedy. Rounds run at arrivals and completions only.
"""
from __future__ import annotations

from typing import Callable

from scheduler.actions import Action, Start
from scheduler.alloc import take_mask
from scheduler.model import Knowledge
from scheduler.policies.dif import VARIANTS, DifReading, distribute, pool
from scheduler.policy import Policy
from scheduler.snapshot import JobView, Reason, Snapshot

Ratio = tuple[int, int]  # numerator, denominator: processors per job, unrounded
Share = Callable[[Snapshot], Ratio]
_ROUNDS = (Reason.ARRIVAL, Reason.COMPLETION)


def asp_share(snap: Snapshot) -> Ratio:
    """Free processors per waiting job, unrounded."""
    return snap.free_mask.bit_count(), len(snap.queue)


def ap1_share(snap: Snapshot) -> Ratio:
    """All processors per waiting job, unrounded."""
    return snap.P, len(snap.queue)


def aep_share(snap: Snapshot) -> Ratio:
    """All processors per job in the system (waiting and holding processors), unrounded."""
    jobs = len(snap.queue) + len(snap.running) + len(snap.preempting) + len(snap.preempted)
    return snap.P, jobs


def target_of(share: Ratio) -> int:
    """Greedy's per-job target: the share rounded down, at least one processor."""
    return share[0] // share[1] or 1


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


class Adaptive(Policy):
    """One member of the family; see the module docstring for the rules."""

    run_to_completion = True

    def __init__(self, name: str, target: Share | int | None, *, sdf: bool, dif: DifReading | None,
                 last_takes_rest: bool) -> None:
        self.name = name
        self._target = target
        self._sdf = sdf
        self._dif = dif
        self._last_takes_rest = last_takes_rest
        needs = {Knowledge.PMAX}
        if sdf:
            needs.add(Knowledge.T1)
        if dif is not None:
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
            share = (snap.P, 1)
        elif isinstance(t, int):
            share = (t, 1)
        else:
            share = t(snap)
        free = mask.bit_count()
        chosen = greedy(snap.queue, target_of(share), free, self._last_takes_rest)
        if self._dif is not None:
            chosen = distribute(chosen, pool(self._dif, chosen, free, share))
        actions: list[Action] = []
        for job, n in chosen:
            procs, mask = take_mask(mask, n)
            actions.append(Start(job.id, procs))
        return actions


_BASES: tuple[tuple[str, Share], ...] = (("ASP", asp_share), ("AP1", ap1_share), ("AEP", aep_share))


def family() -> list[Adaptive]:
    """The 12 adaptive rules and SDF variants named as in A&S (and Table 2)."""
    rules: list[Adaptive] = []
    for base, share in _BASES:
        rest = base == "ASP"
        rules.append(Adaptive(base, share, sdf=False, dif=None, last_takes_rest=rest))
        rules.append(Adaptive(f"{base}(1)", share, sdf=True, dif=None, last_takes_rest=rest))
        rules.append(Adaptive(f"{base}(2)", share, sdf=True, dif=DifReading.GREEDY_TOTAL, last_takes_rest=rest))
    rules.append(Adaptive("SDF", None, sdf=True, dif=None, last_takes_rest=False))
    for k in (1, 2, 6):
        rules.append(Adaptive(f"SDF-MAX{k}", k, sdf=True, dif=None, last_takes_rest=False))
    return rules


def dif_variant_name(base: str, reading: DifReading) -> str:
    """'AEP(2)-FREE' for base 'AEP' and the all-free reading ('AEP(2)' for the default)."""
    return f"{base}(2){reading.suffix}"


def dif_variants() -> list[Adaptive]:
    """ASP(2), AP1(2) and AEP(2) under each DIF reading other than the default."""
    return [Adaptive(dif_variant_name(base, reading), share, sdf=True, dif=reading, last_takes_rest=base == "ASP")
            for reading in VARIANTS for base, share in _BASES]
