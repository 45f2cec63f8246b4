"""What the owners and the traffic leave to a guest job now, as a policy may see it.

Sanjay & Vadhiyar (§3) choose machines by AvgAvailCPU per workstation and AvgAvailBW per
link. Policies do no I/O, so these figures reach them through the snapshot
(`Snapshot.availability`): the engine fills them from its speeds and owner schedule, the
live executor from a provider it is given (the monitor's averages). Workstations are the
policy's ids 0..P-1.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

#: A workstation the monitor saw fully held (0 available) is kept just above 0: Eq. 1 then
#: predicts it very slow instead of dividing by zero.
MIN_AVAIL_CPU = 1e-3
MIN_LINK_BIT_S = 1.0  # the same for a link the monitor saw saturated


@dataclass(frozen=True, eq=False)  # eq by identity: an array has no plain ==
class Availability:
    """Per-workstation available CPU and, when known, the available bandwidth of each link.

    `cpu[i]`: the fraction of workstation i's CPU left to a guest, in (0, 1] (AvgAvailCPU).
    `speed[i]`: its speed relative to the one the jobs were profiled on (None: all 1).
    `bw_bit_s`: P x P, symmetric, bit/s available on each link, +inf on the diagonal; None
    when the links are not known (the engine models none): then every link counts alike.
    """

    cpu: tuple[float, ...]
    speed: tuple[float, ...] | None = None
    bw_bit_s: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        n = len(self.cpu)
        if n == 0:
            raise ValueError("availability.cpu: give one value per workstation")
        bad = [(i, c) for i, c in enumerate(self.cpu) if not (0.0 < c <= 1.0)]
        if bad:
            raise ValueError(f"availability.cpu[{bad[0][0]}]: {bad[0][1]} is not in (0, 1]")
        if self.speed is not None:
            if len(self.speed) != n:
                raise ValueError(f"availability.speed: {len(self.speed)} values for {n} workstations")
            slow = [(i, s) for i, s in enumerate(self.speed) if not (s > 0 and math.isfinite(s))]
            if slow:
                raise ValueError(f"availability.speed[{slow[0][0]}]: {slow[0][1]} is not > 0")
        if self.bw_bit_s is not None:
            bw = np.array(self.bw_bit_s, dtype=float)
            if bw.shape != (n, n):
                raise ValueError(f"availability.bw_bit_s: shape {bw.shape} is not ({n}, {n})")
            np.fill_diagonal(bw, math.inf)
            off = bw[~np.eye(n, dtype=bool)]
            if off.size and not (np.all(off > 0) and np.all(np.isfinite(off))):
                raise ValueError("availability.bw_bit_s: every link needs a finite bandwidth > 0")
            if not np.array_equal(bw, bw.T):
                raise ValueError("availability.bw_bit_s: not symmetric (give each link's lower direction)")
            bw.setflags(write=False)
            object.__setattr__(self, "bw_bit_s", bw)

    @property
    def size(self) -> int:
        return len(self.cpu)

    @classmethod
    def from_names(cls, hosts: Sequence[str], avg_avail_cpu: Mapping[str, float],
                   avg_avail_bw_bit_s: Mapping[tuple[str, str], float] | None = None) -> Availability:
        """From the monitor's per-name averages (`testbed.load.monitor.Availability`'s two dicts),
        in the order of `hosts` (processor i = hosts[i]). A link's figure is the lower of its two
        directions; a workstation or link with no figure is an error naming it."""
        missing = [h for h in hosts if h not in avg_avail_cpu]
        if missing:
            raise ValueError(f"availability: no AvgAvailCPU for workstation {missing[0]}")
        cpu = tuple(min(1.0, max(MIN_AVAIL_CPU, float(avg_avail_cpu[h]))) for h in hosts)
        if avg_avail_bw_bit_s is None:
            return cls(cpu)
        bw = link_matrix(hosts, avg_avail_bw_bit_s, "availability: no AvgAvailBW for link", floor_bit_s=MIN_LINK_BIT_S)
        return cls(cpu, None, bw)


def link_matrix(names: Sequence[str], bw_bit_s: Mapping[tuple[str, str], float], missing: str, *,
                floor_bit_s: float = 0.0) -> np.ndarray:
    """P x P bit/s from per-(src, dst) figures, as the monitor reports them: a link's figure is the
    lower of its two directions (at least `floor_bit_s`), +inf on the diagonal; a pair with neither
    is a ValueError, `missing` followed by the pair."""
    index = {name: i for i, name in enumerate(names)}
    n = len(names)
    bw = np.full((n, n), math.inf)
    for (src, dst), value in bw_bit_s.items():
        if src in index and dst in index and src != dst:
            i, j = index[src], index[dst]
            bw[i, j] = bw[j, i] = min(bw[i, j], max(floor_bit_s, float(value)))
    for i in range(n):
        for j in range(i + 1, n):
            if not math.isfinite(bw[i, j]):
                raise ValueError(f"{missing} {names[i]}-{names[j]}")
    return bw
