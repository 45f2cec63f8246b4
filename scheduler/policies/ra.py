"""RA, the Robust Adaptive policy of Rosti et al. as run by Padhye & Dowdy §2.2."""
from __future__ import annotations

from scheduler.actions import Action, Start
from scheduler.alloc import take_mask
from scheduler.policy import Policy
from scheduler.snapshot import Reason, Snapshot


class RA(Policy):
    """Non-preemptive; target = max(1, floor(P / Q)) with Q the queue length
    when the round starts.

    A round runs at every arrival and completion: nothing starts until
    `target` processors are free, then queued jobs start in FIFO order on
    `target` processors each while that many are free, without recomputing
    the target. Choice: a job is never given more than its pmax, so a job with
    pmax < target gets pmax (the round still needs `target` free to start it).
    """

    name = "RA"
    run_to_completion = True

    def decide(self, snap: Snapshot) -> list[Action]:
        if snap.reason not in (Reason.ARRIVAL, Reason.COMPLETION) or not snap.queue:
            return []
        target = max(1, snap.P // len(snap.queue))
        mask = snap.free_mask
        free = mask.bit_count()
        actions: list[Action] = []
        for job in snap.queue:
            if free < target:
                break
            n = min(target, job.pmax)
            procs, mask = take_mask(mask, n)
            free -= n
            actions.append(Start(job.id, procs))
        return actions
