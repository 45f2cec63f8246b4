"""The largest uniform scale of a cluster's speeds that this host's cores can hold.

A spec asks its speeds in reference cores, and hosts of one kind differ: `now8-governed`
needs a core factor of 1.67 (four workstations of 0.3 on a core), placed on hosts that read
1.7-2.4, while one read 0.8-1.7, mostly 1.05, for an hour (29 Nov 2026) and refused it at
every try. Scaling every speed by the same k keeps the cluster's shape (who is how much
faster, the links, the owners) and the work sized in reference-seconds: its jobs take 1/k as
long, and the report says k. What a run compares (policies, measured against predicted from
profiles taken on the same scaled cluster) is unchanged; the balance of work to the fixed
launch and resize costs is not, so a figure's claims at k < 1 are a different condition.

The fit reads each core for FIT_READ_S and takes the median (`meter.quick_factors`), not
the best of short readings as placement does: placed on a lucky reading, the governor would
start without the headroom it needs for the host's usual speed.
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass

from testbed.placement import SpeedRefused, place
from testbed.spec import ClusterSpec

SCALE_STEP = 0.05  # scales tried: 1, 0.95, 0.9, ... (a round k in the report, and a profile cache key reused)
MIN_SCALE = 0.05
FIT_READ_S = 8.0   # seconds read per core: the 4-16 s windows' noise is 5-17% here


@dataclass(frozen=True)
class SpeedFit:
    scale: float | None            # None: not even MIN_SCALE fits
    factors: dict[int, float]      # core -> the factor read (reference cores per core)

    def describe(self, spec: ClusterSpec) -> str:
        """One line: what was read, and what the cluster runs at."""
        read = ", ".join(f"{f:.2f}" for _, f in sorted(self.factors.items()))
        speeds = sorted({s for n in spec.names if (s := spec.speed(n)) is not None})
        asked = "/".join(f"{s:g}" for s in speeds)
        if self.scale is None:
            return (f"{spec.name}: this host's cores read factors {read}: too slow for its speeds ({asked} "
                    f"reference cores) even at {MIN_SCALE:g}x")
        if self.scale == 1:
            return f"{spec.name}: this host's cores read factors {read}: its speeds ({asked} reference cores) fit"
        got = "/".join(f"{s * self.scale:.3g}" for s in speeds)
        return (f"{spec.name}: this host's cores read factors {read}, too slow for its speeds ({asked} reference "
                f"cores): running them at {self.scale:g}x ({got}), so its jobs take {1 / self.scale:.2g}x as long")


def fitting_scale(spec: ClusterSpec, cores: list[int], taken: dict[int, float],
                  factors: dict[int, float], step: float = SCALE_STEP) -> float | None:
    """The largest k in 1, 1 - step, ... (down to MIN_SCALE) at which `place` takes `spec.scaled(k)`."""
    n = int(round(1 / step))
    for i in range(n, 0, -1):
        k = round(i * step, 6)
        if k < MIN_SCALE - 1e-9:
            break
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "thin headroom" is placement's to say, once, for the k chosen
                place(spec.scaled(k), cores, taken, factors)
        except SpeedRefused:
            continue
        return k
    return None


def fit(spec: ClusterSpec, cores: list[int], taken: dict[int, float],
        read: Callable[[list[int], float], dict[int, float]]) -> SpeedFit:
    """Read the cores once (`read(cores, seconds)`, FIT_READ_S each) and fit; a spec with no speeds is 1."""
    if not any(spec.speed(n) is not None for n in spec.names):
        return SpeedFit(1.0, {})
    factors = read(cores, FIT_READ_S * len(cores))
    if not factors or any(not math.isfinite(f) or f <= 0 for f in factors.values()):
        raise SpeedRefused(f"speed_scale: the meter read no usable factor for cores {cores}: {factors}")
    return SpeedFit(fitting_scale(spec, cores, taken, factors), factors)
