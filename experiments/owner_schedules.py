"""Owner bursts as a description: rendered from the seed, carried out live, replayed by predictions.

With `load.owner_mode = "schedule"` a replication's owners are not processes left running
for the whole run but the same closed M/M/1//N workload (Menascé & Rao's N, Z, D) rendered
ahead as availability steps (testbed.load.caps.onoff_schedule): 0 while an owner computes,
1 otherwise. The runner carries them out from each segment's start, freezing the
workstation for each burst (testbed.load.caps), and the
prediction of a cell replays the very same bursts (scheduler.engine's `schedule`), where
the owners' mean alone left a job that ran through two bursts predicted as one that met
the average (the demo's RA at 0.125/s: CG on four workstations measured 8.6-15.8 s, all
predicted 9.4 or 12.6 s, 24 Nov 2026). Every policy and rate of a replication meets the
same bursts at the same stream times: policies are compared under common random numbers.
"""
from __future__ import annotations

from typing import Sequence

from experiments.config import ExperimentConfig
from testbed.load.caps import Schedule, onoff_schedule

#: Seconds of stream time rendered: longer than any cell (the last step holds after it).
HORIZON_S = 7200.0
#: What a guest keeps of its speed while an owner holds its workstation: nothing (it is
#: frozen, testbed.load.caps), which the engine, that divides by a pace, takes as this.
GUEST_FLOOR = 1e-3


def in_use(config: ExperimentConfig) -> bool:
    """The config has owners, and gives them as a schedule rather than as daemons."""
    return config.load.owner_mode == "schedule" and bool(config.load.owner)


def seed_of(config: ExperimentConfig, replication: int, workstation: str) -> int:
    """A workstation's owner seed in a replication (independent of policy and rate)."""
    index = sorted(config.load.owner).index(workstation)
    return (config.arrivals.seed * 7919 + replication) * 104729 + index


def rendered(config: ExperimentConfig, replication: int) -> dict[str, Schedule]:
    """Each owner workstation's availability steps (fractions 0 or 1) from stream time 0."""
    return {ws: onoff_schedule(load, HORIZON_S, seed_of(config, replication, ws))
            for ws, load in config.load.owner.items() if load.n > 0}


def shifted(schedule: Schedule, offset_s: float) -> Schedule:
    """The schedule from stream time `offset_s` on, on a clock that starts there (a resumed segment)."""
    if offset_s <= 0:
        return list(schedule)
    before = [f for t, f in schedule if t <= offset_s]
    now = before[-1] if before else 1.0
    return [(0.0, now)] + [(t - offset_s, f) for t, f in schedule if t > offset_s]


def for_engine(config: ExperimentConfig, replication: int, hosts: Sequence[str]) -> list[Schedule]:
    """One schedule per host, as the engine takes it: a burst's 0 as GUEST_FLOOR."""
    steps = rendered(config, replication)
    return [[(t, max(f, GUEST_FLOOR)) for t, f in steps.get(ws, [])] for ws in hosts]
