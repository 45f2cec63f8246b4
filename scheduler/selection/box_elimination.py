"""Box Elimination, Figs. 4 and 5: search hypothetical (cpu, bw, P) points, not schedules.

The box spans [cpu_min, cpu_max] in steps of 0.1, [bw_min, bw_max] in steps of 10, 50 or
100 Mbit/s (for a largest link of up to 1, 5 or more Gbit/s), and P from 1 to max_procs
(§4.4). Each searched point is mapped to a schedule (Fig. 6), the schedule back to its
closest grid point g, and the two sub-boxes at or below and at or above g are dropped
(lines 6-10 and 18-22). New points are drawn from the six other sub-boxes around the first
mapped point, by a roulette wheel whose sector grows each time a draw improves on the best
schedule, and which loses a sector once its sub-box is fully explored.

Two choices the paper leaves open:
- the drawn point itself is marked explored, as line 19 does for its mapped point: Fig. 6
  ignores P, so a point above the mapped schedule's size can lie in neither dropped box,
  and without this the loop could draw it forever;
- the mapping depends only on (cpu, bw), so its result is kept per (cpu, bw) grid cell: a
  second draw in the same cell eliminates the same boxes without mapping or evaluating again.
"""
from __future__ import annotations

import numpy as np

from scheduler.selection.mapping import Mapped, find_schedule_with_constraints
from scheduler.selection.search import Search

CPU_STEP = 0.1
MBIT = 1e6
GBIT = 1e9
DRAW_TRIES = 8  # random draws in a sub-box's bounds before listing its unexplored points


def bw_step_bit_s(bw_max_bit_s: float) -> float:
    """§4.4: 10 Mbit/s up to 1 Gbit/s, 50 Mbit/s up to 5 Gbit/s, 100 Mbit/s beyond."""
    if bw_max_bit_s <= 1 * GBIT:
        return 10 * MBIT
    if bw_max_bit_s <= 5 * GBIT:
        return 50 * MBIT
    return 100 * MBIT


def _axis(lo: float, hi: float, step: float) -> np.ndarray:
    return lo + step * np.arange(int(np.floor((hi - lo) / step + 1e-9)) + 1)


def _closest(axis: np.ndarray, value: float) -> int:
    return int(np.clip(np.rint((value - axis[0]) / (axis[1] - axis[0])) if axis.size > 1 else 0, 0, axis.size - 1))


class _Box:
    """The grid's unexplored points as a boolean array, with the two eliminations of Fig. 4."""

    def __init__(self, shape: tuple[int, int, int]) -> None:
        self.unexplored = np.ones(shape, dtype=bool)
        self.remaining = int(self.unexplored.size)

    def clear(self, region: tuple[slice, slice, slice]) -> None:
        self.remaining -= int(np.count_nonzero(self.unexplored[region]))
        self.unexplored[region] = False

    def eliminate_two_sub_boxes(self, g: tuple[int, int, int]) -> None:
        self.clear((slice(0, g[0] + 1), slice(0, g[1] + 1), slice(0, g[2] + 1)))  # SB1: poorer
        self.clear((slice(g[0], None), slice(g[1], None), slice(g[2], None)))  # SB8: few schedules


def box_elimination(search: Search, seed: int) -> None:
    problem, rng = search.problem, np.random.default_rng(seed)
    n = problem.size
    cpu = problem.cpu
    off = problem.bw_bit_s[~np.eye(n, dtype=bool)]
    bw_lo, bw_hi = (float(off.min()), float(off.max())) if off.size else (1.0, 1.0)
    cpu_axis = _axis(float(cpu.min()), float(cpu.max()), CPU_STEP)
    bw_axis = _axis(bw_lo, bw_hi, bw_step_bit_s(bw_hi))
    box = _Box((cpu_axis.size, bw_axis.size, n))
    cells: dict[tuple[int, int], tuple[Mapped, float]] = {}

    def explore(i: int, j: int) -> tuple[tuple[int, int, int], float]:
        """Lines 16-22: map, evaluate, find the closest grid point, eliminate around it."""
        if (i, j) not in cells:
            mapped = find_schedule_with_constraints(problem, float(cpu_axis[i]), float(bw_axis[j]), search.check)
            search.check()
            t_s = search.offer(mapped.schedule, float(problem.predict_s(mapped.summary)))
            cells[(i, j)] = (mapped, t_s)
        mapped, t_s = cells[(i, j)]
        s = mapped.summary
        g = (_closest(cpu_axis, s.min_avail_cpu), _closest(bw_axis, s.min_avail_bw_bit_s), s.procs - 1)
        box.eliminate_two_sub_boxes(g)
        return g, t_s

    centre = (cpu_axis.size // 2, bw_axis.size // 2, n // 2)  # line 3
    g0, current_s = explore(centre[0], centre[1])  # lines 4-10
    box.clear((slice(centre[0], centre[0] + 1), slice(centre[1], centre[1] + 1), slice(centre[2], centre[2] + 1)))
    sectors = [(c, b, p) for c in (0, 1) for b in (0, 1) for p in (0, 1) if 0 < c + b + p < 3]
    regions = [tuple(slice(0, g0[a] + 1) if hi == 0 else slice(g0[a] + 1, None) for a, hi in enumerate(code))
               for code in sectors]
    counters = np.ones(len(sectors))  # line 11
    live = np.ones(len(sectors), dtype=bool)
    while box.remaining > 0 and live.any():  # line 12
        search.check()
        weights = np.where(live, counters, 0.0)
        k = int(rng.choice(len(sectors), p=weights / weights.sum()))  # lines 13-14
        point = _draw(box.unexplored, regions[k], rng)  # line 15
        if point is None:
            live[k] = False  # its sub-box is explored: its sector leaves the wheel
            continue
        _, new_s = explore(point[0], point[1])
        box.clear(tuple(slice(x, x + 1) for x in point))
        if new_s < current_s:  # lines 23-27
            counters[k] += 1
            current_s = new_s


def _draw(unexplored: np.ndarray, region: tuple[slice, ...], rng: np.random.Generator) -> tuple[int, ...] | None:
    """A uniformly random unexplored point of `region`, or None when it has none."""
    bounds = [s.indices(dim)[:2] for s, dim in zip(region, unexplored.shape)]
    if any(lo >= hi for lo, hi in bounds):
        return None
    for _ in range(DRAW_TRIES):
        point = tuple(int(rng.integers(lo, hi)) for lo, hi in bounds)
        if unexplored[point]:
            return point
    left = np.argwhere(unexplored[region])
    if left.size == 0:
        return None
    pick = left[int(rng.integers(len(left)))]
    return tuple(int(pick[a] + bounds[a][0]) for a in range(3))
