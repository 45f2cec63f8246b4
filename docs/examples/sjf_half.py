"""Shortest job first, each job on at most half the machine (docs/your-policy.md)."""
from scheduler.actions import Action, Start
from scheduler.model import Knowledge
from scheduler.policy import Policy
from scheduler.snapshot import JobView, Reason, Snapshot


class ShortestFirstHalf(Policy):
    """Run to completion. The queue is kept shortest first by T(1), the job's time alone on one
    workstation (ties: arrival). At each arrival and completion, queued jobs start in that order,
    each on min(pmax, P // 2, free) workstations, while any workstation is free."""

    name = "SJF-HALF"
    needs = frozenset({Knowledge.PMAX, Knowledge.T1})  # jobs whose model cannot tell T(1) are refused
    run_to_completion = True  # never preempts: the drivers skip calls that could start nothing

    def queue_key(self, job: JobView) -> object:
        return job.t1

    def decide(self, snap: Snapshot) -> list[Action]:
        if snap.reason not in (Reason.ARRIVAL, Reason.COMPLETION):
            return []
        cap = max(1, snap.P // 2)
        free = sorted(snap.free)
        actions: list[Action] = []
        for job in snap.queue:
            if not free:
                break
            n = min(job.pmax, cap, len(free))
            actions.append(Start(job.id, tuple(free[:n])))
            free = free[n:]
        return actions
