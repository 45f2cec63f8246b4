"""The selection problem as typed data, and the one way every algorithm evaluates a subset.

Machines are handled by index (0..n-1) inside the algorithms: a 1,024-machine search
evaluates millions of subsets, so the link availability is a dense matrix in bit/s with
+inf on the diagonal (a machine is never its own bottleneck link).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from scheduler.availability import link_matrix


@dataclass(frozen=True)
class Workstation:
    """One machine (or core: the paper treats each core as a machine, §4)."""

    name: str
    avail_cpu: float  # AvgAvailCPU: fraction of the machine left to the job, (0, 1]
    speed: float = 1.0  # nominal speed in reference cores (a cluster's "cpu scaling factor", §5.3.5)

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("workstations: a name is empty")
        if not (0.0 < self.avail_cpu <= 1.0):
            raise ValueError(f"avail_cpu of {self.name}: {self.avail_cpu} is not in (0, 1]")
        if not (self.speed > 0.0 and math.isfinite(self.speed)):
            raise ValueError(f"speed of {self.name}: {self.speed} is not > 0")


@dataclass(frozen=True)
class SubsetSummary:
    """What Eq. 1 reads of a subset: its size and its slowest machine and link.

    `min_avail_cpu` is min(avail_cpu x speed), which is the paper's minAvgAvailCPU on a
    homogeneous cluster (speed 1). A one-machine subset has no link; its bandwidth is the
    mean availability of the links to it, as Figs. 1 and 3 rank single machines (lines 2-5).
    """

    procs: int
    min_avail_cpu: float
    min_avail_bw_bit_s: float


Predictor = Callable[[SubsetSummary], float]  # predicted run time in seconds


@dataclass(frozen=True)
class SelectionProblem:
    """Workstations, the available bandwidth between them and a predictor of run time."""

    workstations: tuple[Workstation, ...]
    bw_bit_s: np.ndarray = field(repr=False)  # n x n, symmetric, +inf on the diagonal
    predict_s: Predictor = field(repr=False)

    def __post_init__(self) -> None:
        n = len(self.workstations)
        if n == 0:
            raise ValueError("workstations: name at least one")
        names = [w.name for w in self.workstations]
        if len(set(names)) != n:
            raise ValueError("workstations: a name appears twice")
        if self.bw_bit_s.shape != (n, n):
            raise ValueError(f"bw_bit_s: shape {self.bw_bit_s.shape} is not ({n}, {n})")
        off = self.bw_bit_s[~np.eye(n, dtype=bool)]
        if off.size and not (np.all(off > 0) and np.all(np.isfinite(off))):
            raise ValueError("bw_bit_s: every link's available bandwidth must be a finite value > 0")
        object.__setattr__(self, "_cpu", np.array([w.avail_cpu * w.speed for w in self.workstations]))
        mean_bw = (off.reshape(n, n - 1).mean(axis=1) if n > 1 else np.array([math.inf]))
        object.__setattr__(self, "_mean_bw", mean_bw)

    @classmethod
    def from_links(cls, workstations: Sequence[Workstation], bw_bit_s: Mapping[tuple[str, str], float],
                   predict_s: Predictor) -> SelectionProblem:
        """Build from per-(src, dst) availability, as the monitor reports it; a link's figure is the
        lower of its two directions, and a pair with neither is an error naming it."""
        bw = link_matrix([w.name for w in workstations], bw_bit_s, "bw_bit_s: no available bandwidth for link")
        return cls(tuple(workstations), bw, predict_s)

    # ---- what the algorithms use ---------------------------------------------------------------

    @property
    def size(self) -> int:
        return len(self.workstations)

    @property
    def cpu(self) -> np.ndarray:
        """Effective available CPU per machine (avail_cpu x speed)."""
        return self._cpu  # type: ignore[attr-defined]

    @property
    def mean_bw_bit_s(self) -> np.ndarray:
        """Mean availability of the links to each machine (Figs. 1 and 3, line 4)."""
        return self._mean_bw  # type: ignore[attr-defined]

    def summary(self, subset: Sequence[int] | np.ndarray) -> SubsetSummary:
        idx = np.asarray(subset, dtype=np.intp)
        if idx.size == 0:
            raise ValueError("subset: empty")
        if idx.size == 1:
            i = int(idx[0])
            return SubsetSummary(1, float(self.cpu[i]), float(self.mean_bw_bit_s[i]))
        return SubsetSummary(int(idx.size), float(self.cpu[idx].min()),
                             float(self.bw_bit_s[np.ix_(idx, idx)].min()))

    def predict_subset_s(self, subset: Sequence[int] | np.ndarray) -> float:
        """Eq. 1 (or whatever predictor the problem carries) on a subset of machine indices."""
        return float(self.predict_s(self.summary(subset)))

    def names(self, subset: Iterable[int]) -> tuple[str, ...]:
        return tuple(sorted(self.workstations[i].name for i in subset))


@dataclass(frozen=True)
class Selection:
    """The best subset an algorithm found, and how it got there."""

    algorithm: str
    workstations: tuple[str, ...]
    predicted_s: float
    evaluations: int  # subsets evaluated with the predictor
    elapsed_s: float
    finished: bool  # the search ended on its own, before the budget ran out
