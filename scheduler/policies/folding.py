"""Folding, the dynamic policy of Padhye & Dowdy §2.3 (after McCann & Zahorjan)."""
from __future__ import annotations

from scheduler.actions import Action, Preempt, Resize, Start
from scheduler.alloc import grow, take_mask
from scheduler.policy import Policy
from scheduler.snapshot import Reason, Snapshot


class Folding(Policy):
    """At most one preemption per event.

    Arrival with free processors: the queue head (the newcomer, unless jobs
    were already waiting) starts on all of them. Arrival with none free: the
    running job with the largest partition, if larger than 1, is asked to
    preempt (ties: most recently arrived); else the newcomer waits (FIFO).
    Completion with a queue: the head starts on all idle processors.
    Completion with an empty queue and idle processors: the running job with
    the smallest partition (ties: most recently arrived) is asked to preempt
    so it can unfold.

    On acknowledgment the policy reads the state then, not a memory of why it
    asked: if jobs are queued and the job holds n > 1 processors it keeps the
    ceil(n/2) lowest ids and the queue head gets the other floor(n/2) (fold);
    otherwise it is restarted on its old set plus the idle processors
    (unfold; also what happens to a fold whose newcomer was served meanwhile).
    Choices: no job exceeds its pmax, so a start takes min(pmax, free), a
    fold's newcomer takes at most its pmax of the half (the rest stays idle),
    only jobs below pmax are unfold candidates, and a completion starts queue
    heads while idle processors remain (one head when pmax >= P, as in P&D).
    """

    name = "FOLDING"

    def decide(self, snap: Snapshot) -> list[Action]:
        reason = snap.reason
        if reason is Reason.ARRIVAL:
            if snap.free_mask:
                return self._start_heads(snap)
            folds = [j for j in snap.running.values() if len(j.procs) > 1]
            if not folds:
                return []
            victim = max(folds, key=lambda j: (len(j.procs), j.seq))
            return [Preempt(victim.id)]
        if reason is Reason.COMPLETION:
            if snap.queue:
                return self._start_heads(snap)
            if snap.free_mask:
                grows = [j for j in snap.running.values() if len(j.procs) < j.pmax]
                if grows:
                    victim = min(grows, key=lambda j: (len(j.procs), -j.seq))
                    return [Preempt(victim.id)]
            return []
        if reason is Reason.ACK:
            job = snap.subject
            n = len(job.procs)
            free = set(snap.free)
            if snap.queue and n > 1:
                keep = (n + 1) // 2
                ids = sorted(job.procs)
                head = snap.queue[0]
                return [Resize(job.id, tuple(ids[:keep])),
                        Start(head.id, tuple(ids[keep:keep + min(n - keep, head.pmax)]))]
            extra = min(len(free), job.pmax - n)
            return [Resize(job.id, grow(job.procs, free, extra))]
        return []

    @staticmethod
    def _start_heads(snap: Snapshot) -> list[Action]:
        mask = snap.free_mask
        actions: list[Action] = []
        for job in snap.queue:
            if not mask:
                break
            procs, mask = take_mask(mask, min(mask.bit_count(), job.pmax))
            actions.append(Start(job.id, procs))
        return actions
