"""Per-workstation speeds for the engine, relative to where the jobs were profiled.

Two effects, multiplied:
- calibration: a workstation delivering d cores runs a profiled job's work
  d / reference times as fast, reference being what the profiling
  workstations delivered (so a cluster profiled on itself gives about 1);
- owner load (Menascé & Rao §3.1): owners have preemptive priority, so a guest
  sees only the CPU they leave and a task of t seconds takes
  t' = t / (1 - U_ow) (eq. 1): its speed is multiplied by 1 - U_ow.

1 - U_ow comes either from the monitor (its mean AvailCPU per workstation,
`testbed.load.monitor.summarize(...).avg_avail_cpu`, passed as `availability`) or
from the M/M/1//N formula (`owner_availability`, eq. 2).

Approximation: these are time averages. A coupled job waits at each step for
whichever member an owner holds just then, so with owners on several members
and bursts shorter than a step it runs slower than its slowest member's mean
speed (what the engine uses). §3.2 (P guests on one workstation take P·t')
does not arise: space-sharing policies give a workstation to one job at a time.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from testbed.load.model import available_fraction


def owner_availability(owners: Mapping[str, tuple[int, float, float]], order: Sequence[str]) -> dict[str, float]:
    """1 - U_ow = p0 of M/M/1//N for each workstation of `order`, owners[ws] = (n, z, d).

    A workstation without an entry has no owner processes (1.0). An entry for a
    workstation not in `order` is refused: it is more likely a typo than intended.
    """
    extra = sorted(set(owners) - set(order))
    if extra:
        raise ValueError(f"owners: workstations not in the order: {', '.join(extra)}")
    return {ws: available_fraction(*owners[ws]) if ws in owners else 1.0 for ws in order}


def workstation_speeds(delivered: Mapping[str, float], reference: float,
                       availability: Mapping[str, float] | None, order: Sequence[str]) -> list[float]:
    """speed_i = delivered_i / reference × avail_i, for the workstations in `order`
    (the engine's processors 0..P-1).

    delivered: cores each workstation delivered at calibration; reference: cores
    delivered where the profile was measured; availability: 1 - U_ow per
    workstation, in (0, 1]; a workstation it leaves out (all, for None) has
    no owner load.
    """
    if not (math.isfinite(reference) and reference > 0):
        raise ValueError(f"reference must be a finite number of cores > 0, got {reference}")
    speeds = []
    for ws in order:
        if ws not in delivered:
            raise ValueError(f"delivered: no calibration for workstation {ws!r}")
        d = float(delivered[ws])
        if not (math.isfinite(d) and d > 0):
            raise ValueError(f"delivered[{ws!r}] must be a finite number of cores > 0, got {d}")
        a = 1.0
        if availability is not None and ws in availability:
            a = float(availability[ws])
            if not (math.isfinite(a) and 0 < a <= 1):
                raise ValueError(f"availability[{ws!r}] must be a fraction in (0, 1], got {a}")
        speeds.append(d / reference * a)
    return speeds
