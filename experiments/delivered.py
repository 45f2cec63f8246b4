"""The reference speed a live job was delivered, read from its cluster's meter.

Measured times are only comparable when the host gave the same amount of work per second:
this host's speed wanders by 5-22% (docs/speed.md). The speed keeper records each core's
factor and each workstation's quota (testbed/meter.py); a job's delivered speed is the
mean of its workstations' over its own span. A profile stores the same figure for its runs,
so a job's ratio to it says how much faster or slower the host was than when the class was
profiled.

Why the mean, not the slowest member, though the slowest member sets a coupled job's pace:
each member's figure is a short average of noisy core readings, and the least of several
noisy figures lies under all of them. Over 13 stored runs (the job speed statistic
analysis, 30 Nov 2026) the minimum read a median 0.98 of the mean on 2
workstations, 0.96 on 8 and 0.956 on 16, where a job on 1 reads 1.0, so predictions brought to
one reference speed came out about 4% fast on 8; and time x mean varied less than time x
minimum among a class's jobs that did the same work on the same p (31 of 41 groups).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from testbed.meter import QUOTAS_CSV, SAMPLES_CSV, delivered_speed, read_window


def monotonic_to_epoch(t_monotonic: float) -> float:
    """The executor clocks in time.monotonic(); the meter stamps in epoch seconds."""
    return time.time() - time.monotonic() + t_monotonic


STATISTIC = "mean of the workstations"  # part of a profile's cache key (experiments/profiles.py)


@dataclass(frozen=True)
class JobSpeed:
    speed: float | None  # reference cores, the mean of the job's workstations'; None: not metered
    status: str          # "metered", or why not


def job_speed(cluster_dir: Path | None, hosts: Iterable[str], t0: float, t1: float) -> JobSpeed:
    """Delivered reference speed of a job on `hosts` over epoch span [t0, t1]."""
    hosts = sorted(set(hosts))
    if cluster_dir is None:
        return JobSpeed(None, "no meter")
    if not hosts or t1 <= t0:
        return JobSpeed(None, "no span")
    if not (cluster_dir / SAMPLES_CSV).exists() or not (cluster_dir / QUOTAS_CSV).exists():
        return JobSpeed(None, "no meter")
    try:  # the job's own span (and a margin), not the whole run's series
        samples, quotas = read_window(cluster_dir, hosts, t0)
    except (OSError, ValueError, KeyError) as exc:
        return JobSpeed(None, f"meter unreadable: {exc}")
    found = [delivered_speed(samples, quotas, h, t0, t1) for h in hosts]
    missing = [d for d in found if d.speed is None]
    if missing:
        return JobSpeed(None, f"{missing[0].workstation}: {missing[0].status}")
    return JobSpeed(sum(d.speed for d in found) / len(found), "metered")


def relative(speed: float | None, reference: float | None) -> float | None:
    """A job's speed as a fraction of the profile's (None unless both are known)."""
    if speed is None or not reference:
        return None
    return speed / reference
