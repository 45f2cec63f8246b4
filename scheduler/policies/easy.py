"""EASY backfilling (Mu'alem & Feitelson 2001) and its conservative variant.

Both plan with counts of processors (any free workstation serves a rigid job) and with each
job's estimate (`fcfs.estimate_s`: its requested walltime, else its model's T(p), else
unknown). A running job gives its processors back at start + estimate (`fcfs.expected_end`);
the engine kills a job at its walltime, so with walltimes that plan is an upper bound.
"""
from __future__ import annotations

import math
from bisect import bisect_left
from itertools import islice

from scheduler.actions import Action, Start
from scheduler.alloc import take_mask
from scheduler.policies.fcfs import estimate_s, expected_end, width
from scheduler.policy import Policy
from scheduler.snapshot import JobView, Snapshot


def running_ends(snap: Snapshot) -> list[tuple[float, int]]:
    """(expected end, processors held) of every started job, earliest end first."""
    now = snap.time
    ends = []
    for group in (snap.running, snap.preempting, snap.preempted):
        for job in group.values():
            w = job.walltime
            end = job.start + w if w is not None else math.nan
            if not end >= now:  # no walltime, not launched yet (NaN start) or overrun: the general rule
                end = expected_end(job, now)
            ends.append((end, len(job.procs)))
    ends.sort()
    return ends


class EASY(Policy):
    """EASY backfilling: FCFS, except that while the head of the queue waits, later jobs may
    start if they do not delay it.

    Each call: queued jobs start in order while they fit (FCFS). When the head does not fit it
    gets a reservation, the shadow time: the earliest expected end of running jobs at which
    enough processors are free for it; `extra` is what is free then beyond its need (every job
    ending at the shadow time counted). A later job (in queue order) that fits now starts if
    now + its estimate <= the shadow time, or else if it needs no more than `extra` (which it
    then uses up). The reservation is computed again at every call, so a job ending early moves
    it earlier. Rule for unknown estimates: a shadow time at +inf (some running job has no
    walltime and no T(p)) backfills nothing, as the head could then never be protected; a
    job of unknown estimate is backfilled only into `extra`.
    Never preempts, never resizes.
    """

    name = "EASY"
    run_to_completion = True

    def decide(self, snap: Snapshot) -> list[Action]:
        queue = snap.queue
        mask = snap.free_mask
        free = mask.bit_count()
        actions: list[Action] = []
        started: list[JobView] = []
        i, nq = 0, len(queue)
        while i < nq:
            job = queue[i]
            n = job.pmax
            if n > free:
                break
            procs, mask = take_mask(mask, n)
            free -= n
            actions.append(Start(job.id, procs))
            started.append(job)
            i += 1
        if free == 0 or i >= nq - 1:  # nothing free, or no one behind the head
            return actions
        shadow, extra = self.reserve(snap, queue[i], free, started)
        if shadow == math.inf:
            return actions
        now = snap.time
        for job in islice(queue, i + 1, None):  # the hot loop of a long trace's long queues
            n = job.pmax  # width(job): a rigid job's pmax is its size
            if n > free:
                continue
            w = job.walltime
            if (w if w is not None else estimate_s(job)) + now <= shadow:
                pass  # back before the head needs its processors (the sum, as the engine's kill adds it)
            elif n <= extra:
                extra -= n  # on processors the head does not need at its reservation
            else:
                continue
            procs, mask = take_mask(mask, n)
            free -= n
            actions.append(Start(job.id, procs))
            if not free:
                break
        return actions

    def reserve(self, snap: Snapshot, head: JobView, free: int, started: list[JobView]) -> tuple[float, int]:
        """The head's shadow time and the processors free then beyond its need, given `free`
        processors free now and `started` just started in this call (not yet in the snapshot)."""
        now = snap.time
        ends = running_ends(snap)
        if started:
            ends += [(now + estimate_s(j), width(j)) for j in started]
            ends.sort()
        need = width(head)
        avail = free
        k, m = 0, len(ends)
        while k < m:
            t = ends[k][0]
            while k < m and ends[k][0] == t:  # every job ending at t gives its processors back at t
                avail += ends[k][1]
                k += 1
            if avail >= need:
                return t, avail - need
        return math.inf, 0  # cannot happen while need <= P: every processor comes back


class ConservativeBackfill(Policy):
    """Conservative backfilling: every queued job, in queue order, gets a reservation, the
    earliest time at which enough processors stay free for its whole estimate in the plan
    made so far (running jobs at their expected ends, earlier queued jobs at their
    reservations); a job whose reservation is now starts now. The plan is made again at
    every call. A job of unknown estimate holds its reservation for ever; a job that can
    never fit (processors held for ever by jobs of unknown estimate) gets none and waits.

    Each call costs O(queue x plan steps) in the worst case: meant for traces of modest queues.
    """

    name = "EASY-CONSERVATIVE"
    run_to_completion = True

    def decide(self, snap: Snapshot) -> list[Action]:
        now = snap.time
        mask = snap.free_mask
        # The plan: avail[k] processors free over [times[k], times[k + 1]). Step 0 is what is free
        # now, kept apart even from jobs expected to end now (they have not given theirs back yet):
        # only a reservation in step 0 starts now.
        times = [now]
        avail = [mask.bit_count()]
        for end, n in running_ends(snap):
            if end == times[-1] and len(times) > 1:
                avail[-1] += n
            else:
                times.append(end)
                avail.append(avail[-1] + n)
        actions: list[Action] = []
        for job in snap.queue:
            n = job.size if job.size is not None else job.pmax
            est = estimate_s(job)
            k = _earliest(times, avail, n, est)
            if k < 0:
                continue
            t0 = times[k]
            end = t0 + est
            stop = len(times)
            if end < math.inf:
                stop = bisect_left(times, end, k + 1) if end > t0 else k
                if stop == len(times) or times[stop] != end:
                    times.insert(stop, end)
                    avail.insert(stop, avail[stop - 1])
            if stop == k and k == 0:  # an estimate of 0: it still holds its processors as it starts
                stop = 1
            for j in range(k, stop):
                avail[j] -= n
            if k == 0:
                procs, mask = take_mask(mask, n)
                actions.append(Start(job.id, procs))
        return actions


def _earliest(times: list[float], avail: list[int], n: int, est: float) -> int:
    """Index of the first plan step from which n processors stay free for `est` seconds, or -1."""
    m = len(times)
    for k in range(m):
        if avail[k] < n:
            continue
        end = times[k] + est
        j = k + 1
        while j < m and times[j] < end and avail[j] >= n:
            j += 1
        if j == m or times[j] >= end:
            return k
    return -1
