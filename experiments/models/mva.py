"""Several guest tasks on one workstation (Menascé & Rao §3.2): multiclass MVA, eqs. 3 to 7.

Each guest task is its own class of population 1 at one device, the CPU, whose service
demand is the task's *inflated* time t' (eq. 1: the owners, who have preemptive priority,
leave only 1 - U_ow of the CPU; U_ow from the M/M/1//N of `testbed/load/model.py`).
`residence_times_s` solves the closed network by exact MVA over population vectors (eq. 3
and 4); with no think time it gives eq. 6, R_r = P t'_r, which `guest_time_s` uses (eq. 7).
"""
from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from testbed.load.model import available_fraction, inflate
from scheduler.taskgraph.workstations import Workstation


def residence_times_s(inflated_s: Sequence[float], think_s: float = 0.0) -> list[float]:
    """R'_r(N) for N = (1, ..., 1): exact multiclass MVA at one queueing CPU.

    R'_r(N) = t'_r [1 + n(N - 1_r)]                (eq. 3)
    n(N) = sum_r n_r(N),  n_r = X_r R'_r,  X_r = 1 / (Z + R'_r)   (eq. 4, Little)
    A population is a frozenset of the classes present, so there are 2^P of them.
    """
    demands = tuple(float(t) for t in inflated_s)
    if not demands:
        raise ValueError("inflated_s: at least one guest task")
    if any(not t > 0 for t in demands):
        raise ValueError(f"inflated_s: every demand must be > 0 s, got {list(demands)}")
    if len(demands) > 16:
        raise ValueError(f"inflated_s: exact MVA over 2^P populations is limited to 16 tasks, got {len(demands)}")

    @lru_cache(maxsize=None)
    def queue_total(pop: frozenset[int]) -> float:
        """n(pop): the mean number of guest tasks at the CPU with population `pop`."""
        if not pop:
            return 0.0
        total = 0.0
        for r in pop:
            resid = demands[r] * (1.0 + queue_total(pop - {r}))
            total += resid / (think_s + resid)   # n_r = X_r R_r
        return total

    full = frozenset(range(len(demands)))
    return [demands[r] * (1.0 + queue_total(full - {r})) for r in range(len(demands))]


def shared_time_s(inflated_s: float, guests: int) -> float:
    """Eq. 6: with no think time n_r = 1, so n(N - 1_r) = P - 1 (eq. 5) and R'_r = P t'_r."""
    if guests < 1:
        raise ValueError(f"guests: at least one guest task, got {guests}")
    return guests * inflated_s


def dedicated_time_s(demand_ref_s: float, ws: Workstation) -> float:
    """t_j on workstation i with no owners and no other guest: demand / speed."""
    return demand_ref_s / ws.speed_ref_cores


def inflated_time_s(demand_ref_s: float, ws: Workstation) -> float:
    """Eq. 1 with eq. 2: t'_j = t_j / (1 - U_ow), U_ow = 1 - p0 of M/M/1//N (1.0 without owners)."""
    t = dedicated_time_s(demand_ref_s, ws)
    if ws.owners is None or ws.owners.n == 0:
        return t
    o = ws.owners
    return inflate(t, 1.0 - available_fraction(o.n, o.z_s, o.d_s))


def guest_time_s(demand_ref_s: float, ws: Workstation, guests: int) -> float:
    """Eq. 7, t_j^i = P_i t_j [sum_k (D_i/Z_i)^k N_i!/(N_i-k)!]: SD(T_j, w) of TGS."""
    return shared_time_s(inflated_time_s(demand_ref_s, ws), guests)
