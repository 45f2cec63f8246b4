"""The owners' measured CPU utilisation beside the M/M/1//N model's, for each live run.

Why: in Figs. 4-6 heavy owners slowed the guests much less than the model says (the Monte
Carlo above the measurement in 19 of 21 points, 52% at N = 5). The first thing to know is
whether the owner daemons take the share of their workstation the model gives them,
U = 1 - p0 of M/M/1//N (`testbed.load.model.available_fraction`). A guest shares the quota
the governor writes, which moves with the host's speed, so `of_quota`, the owners' CPU time
over (the run's wall time x the mean quota the meter recorded), is the U eq. 7 needs. Each
use also gives the share of the nominal cap (the speed over the factor read at `up`), which
the daemon counted its demand at before it read its cgroup's quota (29 Nov 2026).
"""
from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

from testbed import state
from testbed.cluster import Cluster
from testbed.meter import speed_over
from testbed.load.model import available_fraction
from testbed.load.monitor import owner_cpu_ns
from testbed.spec import OwnerLoad


@dataclass(frozen=True)
class OwnerUse:
    """One workstation's owners over one run."""

    workstation: str
    cpu_s: float   # the owner processes' CPU time over the run
    wall_s: float  # the run's wall time
    cores: float   # the workstation's nominal cores (its speed at the factor read at `up`)
    quota_cores: float | None = None  # the mean quota written to its cgroup over the run (None: unrecorded)

    @property
    def utilisation(self) -> float:
        """The fraction of the nominal cap the owners took."""
        return self.cpu_s / (self.wall_s * self.cores) if self.wall_s > 0 and self.cores > 0 else math.nan

    @property
    def of_quota(self) -> float | None:
        """The fraction of the quota the owners took: what a guest shares with them (eq. 7's U)."""
        if self.quota_cores is None or self.quota_cores <= 0 or self.wall_s <= 0:
            return None
        return self.cpu_s / (self.wall_s * self.quota_cores)


@dataclass(frozen=True)
class Snapshot:
    at_s: float
    cpu_ns: dict[str, int]


def model_utilisation(o: OwnerLoad) -> float:
    """U of M/M/1//N for the owner load (0 without owners)."""
    return 0.0 if o.n == 0 else 1.0 - available_fraction(o.n, o.z, o.d)


def snapshot(cluster: Cluster, names: Sequence[str]) -> Snapshot:
    """The owners' CPU time on each named workstation now (one read each, mid-time stamped)."""
    t0 = time.time()
    cpu = {n: owner_cpu_ns(cluster, n) for n in names}
    return Snapshot((t0 + time.time()) / 2, cpu)


def between(cluster: Cluster, before: Snapshot, after: Snapshot) -> list[OwnerUse]:
    """Each workstation's owners over [before, after]."""
    wall = after.at_s - before.at_s
    folder = state.cluster_dir(cluster.name)
    return [OwnerUse(n, (after.cpu_ns[n] - before.cpu_ns[n]) / 1e9, wall, cluster.spec.nominal_cpu(n),
                     speed_over(folder, n, before.at_s, after.at_s).quota_cores if wall > 0 else None)
            for n in before.cpu_ns]


def mean_utilisation(uses: Sequence[OwnerUse]) -> float:
    """The mean U over workstations and runs (NaN if none)."""
    us = [u.utilisation for u in uses if not math.isnan(u.utilisation)]
    return sum(us) / len(us) if us else math.nan


def mean_of_quota(uses: Sequence[OwnerUse]) -> float | None:
    """The mean share of the quota over workstations and runs (None unless every use has one)."""
    shares = [u.of_quota for u in uses]
    if not shares or any(s is None for s in shares):
        return None
    return sum(shares) / len(shares)
