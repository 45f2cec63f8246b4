"""DIF, the differential allocation of Anastasiadis & Sevcik §3.4, in each reading the text allows.

The definition: "The idea is to allocate the available processors one at a
time to the waiting job that achieves the largest decrease in its response
time." For the (2) rules: "the number of waiting jobs to be activated is
determined by the number of processors that would be allocated to them by
AEP. The actual distribution of free processors among the jobs for
activation is again decided based on the maximum differences T(p) - T(p + 1)
for p >= 1."

Fixed by the text, in every reading: the jobs that start are the base rule's
(ASP, AP1 or AEP over the SDF queue); each gets one processor first ("p >= 1");
then one processor at a time goes to the job with the largest T(p) - T(p+1),
never past pmax (problem (1): p_j <= p_j^max). Ties go to the job earlier in
the queue (the paper is silent; this keeps SDF's preference).

Left open is how many processors DIF hands out, the *pool*:

- ``GREEDY_TOTAL`` (default): what the base rule would give these jobs in all.
  From "the number of processors that would be allocated to them by AEP",
  and the only pool under which §6.4's "both the partition size and the
  waiting time remain the same in the case of AEP, when compared to that
  without DIF" holds by construction.
- ``ALL_FREE``: every free processor, read from "the actual distribution of
  free processors among the jobs for activation" (and RTC's "each released
  processor is allocated to the waiting job ...").
- ``SHARE``: the jobs' unrounded target share, k x target for the k jobs
  started (P/(waiting+running) for AEP, P/waiting for AP1, free/waiting for
  ASP), rounded down as a whole, at least the greedy total and at most the
  free processors. The paper defines the target as a ratio and never says
  it is rounded per job; greedy must round each job's size, DIF can hand out
  the fractions that greedy leaves idle.

Not allowed by the text, so not offered: a relative gain (T(p)-T(p+1))/T(p)
(the text names the difference); DIF over the whole queue with p_j = 0
allowed (problem (1) as stated, which the text sets aside because it "has
no provision ... for activating only a subset of the jobs"); a per-job cap
at the base rule's target (under the greedy total that is greedy itself).
"""
from __future__ import annotations

import heapq
from enum import Enum

from scheduler.snapshot import JobView


class DifReading(str, Enum):
    """How many processors DIF distributes; see the module docstring."""

    GREEDY_TOTAL = "greedy-total"
    ALL_FREE = "all-free"
    SHARE = "share"

    @property
    def suffix(self) -> str:
        """What a policy name carries for this reading ('' for the default)."""
        return _SUFFIX[self]


_SUFFIX = {DifReading.GREEDY_TOTAL: "", DifReading.ALL_FREE: "-FREE", DifReading.SHARE: "-SHARE"}

#: The readings other than the default, which the registry offers as named variants.
VARIANTS: tuple[DifReading, ...] = (DifReading.ALL_FREE, DifReading.SHARE)


def same_as(base: str, reading: DifReading) -> DifReading:
    """The reading whose rounds ``base`` ('ASP', 'AP1', 'AEP') under ``reading`` repeats exactly.

    Under SHARE, ASP and AP1 hand out every free processor, as under ALL_FREE:
    greedy stops either when the free processors are used up (its total is
    then all of them) or when every waiting job has started (k = waiting, so
    k x share is free for ASP and P >= free for AP1). Only AEP's share,
    P/(waiting + running), can fall short of the free processors. A study
    need not simulate ASP(2)-SHARE and AP1(2)-SHARE.
    """
    if reading is DifReading.SHARE and base in ("ASP", "AP1"):
        return DifReading.ALL_FREE
    return reading


def pool(reading: DifReading, chosen: list[tuple[JobView, int]], free: int, share: tuple[int, int]) -> int:
    """Processors DIF distributes among the ``chosen`` (job, greedy size) pairs.

    ``share`` is the base rule's unrounded target, processors per job as (numerator, denominator).
    """
    greedy_total = sum(n for _, n in chosen)
    if reading is DifReading.GREEDY_TOTAL:
        return greedy_total
    if reading is DifReading.ALL_FREE:
        return free
    k_share = len(chosen) * share[0] // share[1]
    return min(free, max(greedy_total, k_share))


def distribute(chosen: list[tuple[JobView, int]], total: int) -> list[tuple[JobView, int]]:
    """The same jobs, one processor each, then ``total`` in all by the largest T(p) - T(p+1), up to pmax.

    Processors no job can use (every job at pmax) stay free.
    """
    sizes = [1] * len(chosen)
    left = total - len(chosen)
    heap = []
    for i, (job, _) in enumerate(chosen):
        if job.pmax > 1:
            T = job.model.T
            heap.append((T(2) - T(1), i))  # negated gain: heapq pops the smallest
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
