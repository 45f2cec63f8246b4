"""DYN-EQUI of Anastasiadis & Sevcik §3.1: equal partitions under each job's pmax."""
from __future__ import annotations

from operator import attrgetter

from scheduler.actions import Action, Preempt
from scheduler.alloc import water_fill
from scheduler.policies._restart import restart
from scheduler.policy import Policy
from scheduler.snapshot import Reason, Snapshot, ids

_SEQ = attrgetter("seq")


class DynEqui(Policy):
    """Re-partition at every arrival and completion, water-filled under pmax.

    Jobs holding processors come first (so every preempted job is restarted),
    then queued jobs in FIFO order, up to P jobs; among them the shares differ
    by at most one, no share exceeds pmax, and leftover units go to the
    earliest arrivals. Only jobs whose size changes are preempted; once none
    is awaiting acknowledgment the preempted ones are resized and the new
    ones started. `zero_overhead` makes the simulator acknowledge at once and
    resize for free, which is the paper's idealised benchmark policy.
    """

    name = "DYN-EQUI"
    zero_overhead = True

    def decide(self, snap: Snapshot) -> list[Action]:
        reason = snap.reason
        if reason is Reason.RECONFIGURED or (reason is Reason.ACK and snap.preempting):
            return []
        running = snap.running
        held = [*running.values(), *snap.preempting.values(), *snap.preempted.values()]
        room = snap.P - len(held)
        ready = held + snap.queue[:room] if room > 0 else held
        ready.sort(key=_SEQ)
        sizes = water_fill([j.pmax for j in ready], snap.P)
        changes = [Preempt(j.id) for j, n in zip(ready, sizes)
                   if n != len(j.procs) and j.seq in running]
        if changes or snap.preempting:
            return changes
        return restart([(j, n) for j, n in zip(ready, sizes) if j.seq not in running],
                       set(ids(snap.free_mask)))

