"""Simulated clusters as §5.2 and §5.3.5 build them.

Per cluster: the largest link bandwidth is one of 100 Mbit/s, 1, 5 or 10 Gbit/s, and each
link gets 20-80% of it; machines are lightly (AvailCPU 0.701-1.0), medium (0.351-0.7) or
heavily (0.05-0.35) loaded, in a given mix or in a random one where each share is 10-80%.
A multi-cluster setup (§5.3.5) has U[4, 15] clusters of U[32, 1024] processors, each with a
cpu scaling factor from {0.6, 0.8, 1.0, 1.2, 1.4}. The paper multiplies the computational
coefficients by the factor, yet calls clusters with a larger factor stronger (their weight);
we read the factor as speed (computation time divided by it), which matches the weight.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scheduler.selection import SelectionProblem, Workstation
from scheduler.selection.problem import Predictor

MAX_BW_BIT_S = (100e6, 1e9, 5e9, 10e9)
LINK_SHARE = (0.2, 0.8)
LOAD_CPU = {"light": (0.701, 1.0), "medium": (0.351, 0.7), "heavy": (0.05, 0.35)}
SCALING_FACTORS = (0.6, 0.8, 1.0, 1.2, 1.4)


@dataclass(frozen=True)
class LoadMix:
    """Shares of lightly, medium and heavily loaded machines (they sum to 1)."""

    light: float
    medium: float
    heavy: float

    def __post_init__(self) -> None:
        if min(self.light, self.medium, self.heavy) < 0 or abs(self.light + self.medium + self.heavy - 1) > 1e-9:
            raise ValueError(f"load_mix: shares {self.light}, {self.medium}, {self.heavy} are not >= 0 summing to 1")

    @classmethod
    def random(cls, rng: np.random.Generator) -> LoadMix:
        """Each share 10-80% (§5.2), drawn until the third falls in range too."""
        while True:
            light, medium = rng.uniform(10, 80, 2)
            heavy = 100 - light - medium
            if 10 <= heavy <= 80:
                return cls(light / 100, medium / 100, heavy / 100)


PAPER_MIX = LoadMix(0.3, 0.4, 0.3)  # Figs. 8-11: 30% light, 40% medium, 30% heavy


@dataclass(frozen=True)
class Cluster:
    """A generated cluster's machines and links, before a model is attached."""

    cpu: np.ndarray  # AvailCPU per machine
    bw_bit_s: np.ndarray  # n x n, +inf diagonal
    max_bw_bit_s: float
    mix: LoadMix
    speed: float = 1.0

    @property
    def size(self) -> int:
        return int(self.cpu.size)

    def weight(self) -> float:
        """§5.3.5: machines x cpu scaling factor x share of lightly and medium loaded machines."""
        return self.size * self.speed * (self.mix.light + self.mix.medium)

    def problem(self, predict_s: Predictor, prefix: str = "p") -> SelectionProblem:
        machines = tuple(Workstation(f"{prefix}{i:04d}", float(c), self.speed) for i, c in enumerate(self.cpu))
        return SelectionProblem(machines, self.bw_bit_s, predict_s)


def make_cluster(procs: int, mix: LoadMix, rng: np.random.Generator, speed: float = 1.0,
                 max_bw_bit_s: float | None = None) -> Cluster:
    """`max_bw_bit_s` None draws it from MAX_BW_BIT_S; a study pins it to compare sizes on one class."""
    max_bw = float(rng.choice(MAX_BW_BIT_S)) if max_bw_bit_s is None else max_bw_bit_s
    counts = np.floor(np.array([mix.light, mix.medium, mix.heavy]) * procs).astype(int)
    counts[0] += procs - counts.sum()
    cpu = np.concatenate([rng.uniform(*LOAD_CPU[k], c) for k, c in zip(LOAD_CPU, counts)])
    rng.shuffle(cpu)
    upper = rng.uniform(*LINK_SHARE, (procs, procs)) * max_bw
    bw = np.triu(upper, 1)
    bw = bw + bw.T
    np.fill_diagonal(bw, np.inf)
    return Cluster(cpu, bw, max_bw, mix, speed)


def make_setup(rng: np.random.Generator, clusters: tuple[int, int] = (4, 15),
               procs: tuple[int, int] = (32, 1024)) -> list[Cluster]:
    """One multi-cluster setup of §5.3.5."""
    return [make_cluster(int(rng.integers(procs[0], procs[1] + 1)), LoadMix.random(rng), rng,
                         float(rng.choice(SCALING_FACTORS)))
            for _ in range(int(rng.integers(clusters[0], clusters[1] + 1)))]
