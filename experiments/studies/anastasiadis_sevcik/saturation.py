"""The measurement window and saturation rule of Section 6.

Paper: "the first 500 jobs are used to warm up the system ... The reported
statistics correspond to the subsequent 19,500 jobs.  The performance of the
jobs that arrive after the first 20,000 jobs is omitted.  The policy is
considered as saturated when the generation of 10,000 additional jobs is
reported without the termination of the 19,500 intervening jobs."

Jobs after the first 20,000 are still generated and scheduled: they keep the
system loaded (and, under SDF or DYN-EQUI, they can delay measured jobs) until
the measured jobs finish.  Only jobs that arrive before the last measured
completion can influence the measured jobs, which is what makes it exact to
simulate a prefix of the stream (see ``prefix_is_exact``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Window:
    """Indices (in arrival order) of the jobs that count, and the saturation horizon."""

    warmup_jobs: int
    jobs_per_replication: int
    saturation_extra_jobs: int

    @property
    def measured(self) -> slice:
        return slice(self.warmup_jobs, self.jobs_per_replication)

    @property
    def total_jobs(self) -> int:
        """Most jobs a replication ever generates (the paper's 20,000 + 10,000)."""
        return self.jobs_per_replication + self.saturation_extra_jobs

    def horizon_ks(self, arrival_ks: np.ndarray) -> float:
        """Arrival time of the last additional job: measured jobs must all finish by then."""
        if len(arrival_ks) < self.total_jobs:
            raise ValueError(f"stream has {len(arrival_ks)} jobs; the window needs {self.total_jobs}")
        return float(arrival_ks[self.total_jobs - 1])


def is_saturated(window: Window, arrival_ks: np.ndarray, finish_ks: np.ndarray) -> bool:
    """True if some measured job had not finished when the last additional job arrived.

    ``finish_ks`` holds the measured jobs' completion times (NaN or inf for a
    job the simulation did not finish, which counts as not finished).
    """
    finish = np.asarray(finish_ks, dtype=float)
    if len(finish) != window.jobs_per_replication - window.warmup_jobs:
        raise ValueError(f"expected {window.jobs_per_replication - window.warmup_jobs} measured "
                         f"finish times, got {len(finish)}")
    if np.isnan(finish).any():
        return True
    return bool(finish.max() > window.horizon_ks(arrival_ks))


def prefix_is_exact(arrival_ks: np.ndarray, n_simulated: int, last_measured_finish_ks: float) -> bool:
    """True if simulating only the first ``n_simulated`` jobs could not have changed
    the measured jobs: every omitted job arrives no earlier than the last measured
    completion, so no scheduling decision affecting a measured job could see it.
    """
    if n_simulated >= len(arrival_ks):
        return True
    return bool(arrival_ks[n_simulated] >= last_measured_finish_ks)


def prefix_length(arrival_ks: np.ndarray, finish_ks: float, minimum: int) -> int:
    """Number of leading jobs that arrive before ``finish_ks`` (at least ``minimum``)."""
    return max(minimum, int(np.searchsorted(arrival_ks, finish_ks, side="left")))
