"""Equipartition as implemented by Padhye & Dowdy §2.3, synchronisation delay included,
with the remainder of P handed out (EQUI) or left idle as the paper's formula does (EQUI-FLOOR)."""
from __future__ import annotations

from scheduler.actions import Action, Preempt
from scheduler.alloc import equal_shares
from scheduler.policies._restart import restart
from scheduler.policy import Policy
from scheduler.snapshot import Reason, Snapshot, ids


class Equipartition(Policy):
    """Preempt everyone at each arrival or completion, then share P equally.

    Nothing is reallocated until every preempted job has acknowledged or
    finished (the synchronisation delay); a job that finishes meanwhile is
    not restarted. The ready jobs (all preempted ones, then queued ones in
    FIFO order up to P jobs in all) get sizes differing by at most one, the
    larger ones to the earliest arrivals. Every preempted job is restarted;
    queued jobs that do not fit wait. Choice: a share above a job's pmax is
    cut to pmax and the difference stays idle (this is P&D's rule, not
    DYN-EQUI's water-filling). With nothing running, an arrival or completion
    shares P among the queue at once.
    """

    name = "EQUI"

    def decide(self, snap: Snapshot) -> list[Action]:
        actions: list[Action] = []
        if snap.reason in (Reason.ARRIVAL, Reason.COMPLETION):
            actions = [Preempt(job.id) for job in snap.running.values()]
        elif not snap.preempted:
            return []
        if actions or snap.preempting:
            return actions
        if not snap.preempted and not snap.queue:
            return []
        held = sorted(snap.preempted.values(), key=lambda j: j.seq)
        ready = held + list(snap.queue[: max(0, snap.P - len(held))])
        ready.sort(key=lambda j: j.seq)
        sizes = self.shares(len(held) + len(snap.queue), len(ready), snap.P)
        targets = [(job, min(n, job.pmax)) for job, n in zip(ready, sizes)]
        return restart(targets, set(ids(snap.free_mask)))

    def shares(self, n_ready: int, n_restarted: int, P: int) -> list[int]:
        """Sizes for the first `n_restarted` of `n_ready` ready jobs, earliest first:
        P shared as equally as possible (the remainder to the earliest)."""
        return equal_shares(n_restarted, P)


class EquipartitionFloor(Equipartition):
    """Equipartition with the paper's own partition size: ⌊P/n⌋, the remainder idle.

    Padhye & Dowdy §2.3: "The new partition size for each job is calculated
    using the following formula: max(1, ⌊Total number of processors in the
    system / Number of ready jobs⌋)" and "The number of ready jobs includes
    the new arrivals and the jobs that have been preempted." So with n ready
    jobs every restarted job gets max(1, ⌊P/n⌋) and P mod n processors stay
    idle until the next arrival or completion repartitions. EQUI hands that
    remainder out instead (`alloc.equal_shares`), which the paper does not
    say. Reading chosen where the paper leaves freedom: n counts every queued
    job too (not only those that fit), which only matters when n > P, where
    both readings give 1 each to the first P; the rest is EQUI's (preempted
    jobs first, FIFO, a share above pmax cut to pmax).
    """

    name = "EQUI-FLOOR"

    def shares(self, n_ready: int, n_restarted: int, P: int) -> list[int]:
        return [max(1, P // max(1, n_ready))] * n_restarted
