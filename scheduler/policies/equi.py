"""Equipartition as implemented by Padhye & Dowdy §2.3, synchronisation delay included."""
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
        sizes = equal_shares(len(ready), snap.P)
        targets = [(job, min(n, job.pmax)) for job, n in zip(ready, sizes)]
        return restart(targets, set(ids(snap.free_mask)))
