"""One sample path of a workstation's owner activity, drawn think time by think time.

Fig. 2 box 1 of Menascé & Rao draws one think time Z~ and one demand D~ per workstation and
iteration and puts them through eq. 7. That estimator has no finite mean: rho~ = D~/Z~ is
a ratio of exponentials, P(rho~ > x) = 1/(1 + x Z/D), so E[rho~] (and the N = 2 term
rho~^2 even more) diverges; with N = 2, Z = 5, D = 1 the sample mean of the inflation was
702, 2.0e5, 2.8e3, 1.6e5 over 1e3..1e6 draws while eq. 7 gives 1.48. So the Monte Carlo
draws what the words say, owner think times and demands, but for every owner command:
N owners each think Exp(Z), then queue FCFS for Exp(D) of CPU, with preemptive priority
over guests. A guest gets the CPU only while no owner command is there; its mean share is
p0 of the M/M/1//N model, and its variance is what the Monte Carlo adds to eq. 7.
Pure: the caller hands in the random generator.
"""
from __future__ import annotations

import bisect
import heapq

import numpy as np

from scheduler.taskgraph.workstations import Owners

WARMUP_CYCLES = 20  # owner think+demand cycles simulated before time 0, so time 0 is about stationary


class OwnerTrace:
    """Busy periods of the owners on one workstation from time 0 on, drawn as far as asked."""

    def __init__(self, owners: Owners, rng: np.random.Generator) -> None:
        self._z, self._d, self._rng = owners.z_s, owners.d_s, rng
        warmup_s = WARMUP_CYCLES * (owners.z_s + owners.d_s)
        self._arrivals = [(-warmup_s + float(rng.exponential(owners.z_s)), i) for i in range(owners.n)]
        heapq.heapify(self._arrivals)
        self._free_at = -warmup_s
        self._starts: list[float] = []
        self._ends: list[float] = []
        self._active = owners.n > 0

    def _step(self) -> None:
        """Serve the next owner command: FCFS after the one before it; then it thinks again."""
        arrival, who = heapq.heappop(self._arrivals)
        begin = max(arrival, self._free_at)
        end = begin + float(self._rng.exponential(self._d))
        self._free_at = end
        heapq.heappush(self._arrivals, (end + float(self._rng.exponential(self._z)), who))
        if end <= 0:
            return  # wholly in the warm-up
        begin = max(begin, 0.0)
        if self._ends and begin <= self._ends[-1]:
            self._ends[-1] = end
        else:
            self._starts.append(begin)
            self._ends.append(end)

    def _final(self, idx: int) -> None:
        """Draw until busy period `idx` exists and cannot grow (a later one has begun)."""
        while len(self._starts) < idx + 2:
            self._step()

    def finish_after(self, start_s: float, work_s: float) -> float:
        """When a guest that starts at `start_s` has had `work_s` seconds of the CPU owners leave."""
        if not self._active or work_s <= 0:
            return start_s + max(work_s, 0.0)
        t, need = start_s, work_s
        self._final(0)
        idx = bisect.bisect_right(self._ends, t)
        while True:
            self._final(idx)
            begin, end = self._starts[idx], self._ends[idx]
            if t < begin:
                if begin - t >= need:
                    return t + need
                need -= begin - t
            t = max(t, end)
            idx += 1

    def busy_fraction(self, horizon_s: float) -> float:
        """Share of [0, horizon_s] the owners held the CPU (for checking the trace against U_ow)."""
        self._final(0)
        while self._starts[-1] < horizon_s:
            self._step()
        busy = sum(max(0.0, min(e, horizon_s) - s) for s, e in zip(self._starts, self._ends) if s < horizon_s)
        return busy / horizon_s
