"""How well the speed governor held a run's workstations on their speeds, from the quotas it set.

The keeper sets each governed workstation's quota to target / factor, under a ceiling that
placement reserved from the factor it read on an idle host (testbed/placement.py). When the
cores run slower under the cluster's own load, the quota sits at its ceiling and the
workstation gets less than its speed: quota x factor / target below 1. The meter still
records what each job got, so speed-normalised errors allow for it; raw errors do not. This
says how often that happened, over the cells only (the profiles before them are the
reference the predictions take).

Seen on 29 Nov 2026: Fig. 4, at 0.3 reference cores on a host whose cores read 1.74-1.77 at
placement and a median 1.26 in the keeper over the run, sat at its ceiling in 51% of the
quota settings and held a mean 0.93 of the speed; the demo, scaled to 0.55x on a slower
host, 0.2% and 1.00.
"""
from __future__ import annotations

import io
from collections.abc import Iterable
from dataclasses import dataclass, field

import pandas as pd

AT_CEILING_TOL = 1e-4  # cores: a quota this close to the workstation's largest counts as at its ceiling


@dataclass(frozen=True)
class GovernorHold:
    settings: int          # quota settings of governed workstations during the cells
    at_ceiling: float      # fraction of them at the workstation's ceiling (its largest quota in the run)
    held_median: float     # quota x factor / target: 1 is the speed asked
    held_mean: float
    held_p10: float
    factor_median: float   # the keeper's reading of the cores, reference cores a core
    core_factors: dict[int, float] = field(default_factory=dict)  # the same, per core

    def text(self) -> str:
        return (f"Governor, diagnostic: over the cells, {self.settings} quota settings of governed workstations; "
                f"{self.at_ceiling:.0%} were at the workstation's ceiling (the cap placement reserved: the "
                f"largest quota it was set to), where the governor cannot make up a slower core. Quota x "
                f"factor / speed asked: median {self.held_median:.3f}, mean {self.held_mean:.3f}, 10th "
                f"percentile {self.held_p10:.3f}. The keeper read the cores at a median factor of "
                f"{self.factor_median:.2f} reference cores a core.")


def governor_hold(quota_csvs: Iterable[str], start: float | None, end: float | None = None) -> GovernorHold | None:
    """From the run's quotas CSVs (`testbed.meter` QUOTAS_CSV: t, workstation, quota_cores, factor,
    target, ...), the settings from `start` to `end` (epoch s; the cells' span). None without any
    governed workstation's setting in it."""
    frames = [pd.read_csv(io.StringIO(text)) for text in quota_csvs if text.strip()]
    if not frames:
        return None
    q = pd.concat(frames, ignore_index=True)
    need = {"t", "workstation", "quota_cores", "factor", "target"}
    if not need <= set(q.columns):
        return None
    q = q.dropna(subset=["factor", "target"])
    q = q[q.target > 0]
    ceiling = q.groupby("workstation").quota_cores.transform("max")  # over the whole run, profiles included
    q = q.assign(ceiling=ceiling)
    if start is not None:
        q = q[q.t >= start]
    if end is not None:
        q = q[q.t <= end]
    if q.empty:
        return None
    held = q.quota_cores * q.factor / q.target
    return GovernorHold(settings=len(q), at_ceiling=float((q.quota_cores >= q.ceiling - AT_CEILING_TOL).mean()),
                        held_median=float(held.median()), held_mean=float(held.mean()),
                        held_p10=float(held.quantile(0.1)), factor_median=float(q.factor.median()),
                        core_factors={int(c): float(f) for c, f in q.groupby("core").factor.median().items()}
                        if "core" in q else {})
