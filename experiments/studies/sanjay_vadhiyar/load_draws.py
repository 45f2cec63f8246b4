"""The loads of Sanjay & Vadhiyar §5.1 as seeded draws: which workstations lose how much CPU,
which pairs carry how much traffic, and which workstations each training run gets.

Pure: a draw is a description (`LoadDraw`) that `live.py` carries out with cap mode and
traffic. The paper's ranges: CPU caps that leave 6.5-72% of the CPU on a randomly chosen set
of machines, and 1 to 8 source-destination pairs whose links keep 2-80% of their capacity
("so as to vary the available bandwidths of the links ... from 2 to 80%"; the issue words it
as traffic *taking* 2-80%, the paper as bandwidth *left*: the paper is followed, so a drawn
flow takes 20-98% of its link). Readings where the paper leaves a choice:

- how many machines are loaded: uniform from 1 to all of them (the paper: "a set of cores
  was randomly chosen");
- pairs have distinct sources, so each flow has its source's egress to itself and the
  bandwidth left on the link is the one drawn (two flows out of one 100 Mbit/s egress
  could ask for more than it has);
- a training run's workstations: a uniformly drawn count from 1 to all, then a uniform set
  of that size; every `unloaded_every`-th run per size has no load at all, because the
  regression's first phase needs unloaded runs at several sizes and processor counts
  (`sv_regression.MIN_UNLOADED_RUNS`).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

LinkRate = Callable[[str, str], int]  # bit/s src can send to dst (the spec's egress or link cap)


@dataclass(frozen=True)
class LoadRanges:
    """What a draw may pick; the defaults are §5.1's."""

    cpu_left: tuple[float, float] = (0.065, 0.72)  # fraction of the CPU left to the job
    bw_left: tuple[float, float] = (0.02, 0.80)  # fraction of the link's capacity left
    pairs: tuple[int, int] = (1, 8)  # how many source-destination pairs carry traffic

    def __post_init__(self) -> None:
        for name in ("cpu_left", "bw_left"):
            lo, hi = getattr(self, name)
            if not (0.0 < lo <= hi <= 1.0):
                raise ValueError(f"{name}: ({lo}, {hi}) is not 0 < low <= high <= 1")
        lo, hi = self.pairs
        if not (0 <= lo <= hi):
            raise ValueError(f"pairs: ({lo}, {hi}) is not 0 <= low <= high")


PAPER = LoadRanges()


@dataclass(frozen=True)
class CpuLoad:
    workstation: str
    avail_cpu: float  # fraction of its CPU left: the cap mode schedule's fraction


@dataclass(frozen=True)
class LinkLoad:
    src: str
    dst: str
    bw_left: float  # fraction of the link's capacity left to others
    traffic_bit_s: int  # the flow's rate on the wire: (1 - bw_left) x capacity


@dataclass(frozen=True)
class LoadDraw:
    """One experiment's load, held for its whole length."""

    cpu: tuple[CpuLoad, ...] = ()
    links: tuple[LinkLoad, ...] = ()

    @property
    def loaded_workstations(self) -> tuple[str, ...]:
        return tuple(c.workstation for c in self.cpu)

    @property
    def congested_pairs(self) -> tuple[tuple[str, str], ...]:
        return tuple((link.src, link.dst) for link in self.links)

    def cap_schedules(self) -> dict[str, list[tuple[float, float]]]:
        """Cap mode's schedules: each loaded workstation at its fraction from the start."""
        return {c.workstation: [(0.0, c.avail_cpu)] for c in self.cpu}

    def flows(self) -> list[tuple[str, str, int]]:
        """(src, dst, bit/s) of each background flow."""
        return [(link.src, link.dst, link.traffic_bit_s) for link in self.links]

    def describe(self) -> str:
        cpu = " ".join(f"{c.workstation}:{c.avail_cpu:.1%}" for c in self.cpu) or "-"
        links = " ".join(f"{link.src}>{link.dst}:{link.bw_left:.1%}" for link in self.links) or "-"
        return f"cpu left {cpu}; bw left {links}"


NO_LOAD = LoadDraw()


def _uniform(rng: np.random.Generator, bounds: tuple[float, float]) -> float:
    return float(rng.uniform(bounds[0], bounds[1]))


def draw_load(workstations: Sequence[str], link_rate: LinkRate, rng: np.random.Generator,
              ranges: LoadRanges = PAPER) -> LoadDraw:
    """One load as §5.1 draws it (module docstring)."""
    names = list(workstations)
    n = len(names)
    if n == 0:
        raise ValueError("workstations: name at least one")
    k = int(rng.integers(1, n + 1))
    loaded = sorted(rng.choice(n, size=k, replace=False))
    cpu = tuple(CpuLoad(names[i], _uniform(rng, ranges.cpu_left)) for i in loaded)
    most = min(ranges.pairs[1], n if n > 1 else 0)
    m = int(rng.integers(min(ranges.pairs[0], most), most + 1)) if most else 0
    links = []
    for src in sorted(rng.choice(n, size=m, replace=False)) if m else []:
        dst = int(rng.choice([j for j in range(n) if j != src]))
        left = _uniform(rng, ranges.bw_left)
        capacity = int(link_rate(names[src], names[dst]))
        links.append(LinkLoad(names[src], names[dst], left, int(round((1.0 - left) * capacity))))
    return LoadDraw(cpu, tuple(links))


def draw_subset(workstations: Sequence[str], rng: np.random.Generator, most: int | None = None) -> tuple[str, ...]:
    """A training run's workstations: 1 to `most` (default all) of them, uniformly, in cluster order."""
    names = list(workstations)
    top = len(names) if most is None else min(most, len(names))
    if top < 1:
        raise ValueError("workstations: name at least one")
    k = int(rng.integers(1, top + 1))
    return tuple(names[i] for i in sorted(rng.choice(len(names), size=k, replace=False)))


@dataclass(frozen=True)
class PlannedRun:
    """One training run: a problem size on a set of workstations under a load."""

    index: int
    problem_size: int
    workstations: tuple[str, ...]
    load: LoadDraw


def plan_training(workstations: Sequence[str], sizes: Sequence[int], runs_per_size: int, seed: int,
                  link_rate: LinkRate, ranges: LoadRanges = PAPER, unloaded_every: int = 3,
                  most_procs: int | None = None) -> list[PlannedRun]:
    """`runs_per_size` runs of each size, each on its own drawn set and load, in a seeded
    shuffled order (a slow spell of the host then hits every size alike)."""
    if runs_per_size < 1:
        raise ValueError(f"runs: {runs_per_size} is not >= 1")
    if unloaded_every < 1:
        raise ValueError(f"unloaded_every: {unloaded_every} is not >= 1")
    rng = np.random.default_rng(seed)
    planned = []
    for size in sizes:
        for k in range(runs_per_size):
            subset = draw_subset(workstations, rng, most_procs)
            load = NO_LOAD if k % unloaded_every == 0 else draw_load(workstations, link_rate, rng, ranges)
            planned.append((int(size), subset, load))
    order = rng.permutation(len(planned))
    return [PlannedRun(i, *planned[j]) for i, j in enumerate(order)]


def plan_experiments(workstations: Sequence[str], experiments: int, seed: int, link_rate: LinkRate,
                     ranges: LoadRanges = PAPER) -> list[LoadDraw]:
    """Fig. 7's experiments: one load each (the paper averages 10)."""
    if experiments < 1:
        raise ValueError(f"experiments: {experiments} is not >= 1")
    rng = np.random.default_rng(seed)
    return [draw_load(workstations, link_rate, rng, ranges) for _ in range(experiments)]


# ---- the live test: two workstations loaded, one link congested ---------------------------

def avoidance_load(workstations: Sequence[str], link_rate: LinkRate, cpu_left: float = 0.1,
                   bw_left: float = 0.05) -> LoadDraw:
    """Two workstations at `cpu_left` and one link between two others at `bw_left` of its capacity.

    The second and third workstations are loaded and the fourth sends to the fifth, so the
    first stays clean (a job always has an unloaded place to start)."""
    names = list(workstations)
    if len(names) < 5:
        raise ValueError(f"workstations: the scenario needs 5 or more, got {len(names)}")
    src, dst = names[3], names[4]
    return LoadDraw((CpuLoad(names[1], cpu_left), CpuLoad(names[2], cpu_left)),
                    (LinkLoad(src, dst, bw_left, int(round((1.0 - bw_left) * link_rate(src, dst)))),))


def violations(load: LoadDraw, chosen: Sequence[str]) -> list[str]:
    """What a chosen set fails to avoid: a loaded workstation, or both ends of a congested link."""
    members = set(chosen)
    out = [f"loaded workstation {ws}" for ws in load.loaded_workstations if ws in members]
    out += [f"congested link {src}-{dst}" for src, dst in load.congested_pairs if src in members and dst in members]
    return out
