"""The allocation rule of Zhou & Brent §2: processors from S_d(p) >= γ/β, shares by job size.

Short jobs get a sustained β (their turnaround is predictable: T_e = T_d(p)/β); large jobs
get many processors and a β that is whatever share their processors have left.

Choices the paper leaves open, made here:
- A job is *short* when its dedicated time on one processor T_d(1) is at most `short_t1_s`.
- Short jobs are placed first, in the order given, each on the p least-loaded workstations
  (load: Σβ already given there; ties by the order of the workstations), p the smallest
  with S_d(p) >= γ/β (eq. 6). If no p up to the machine reaches it, the job gets the p with
  the largest S_d and is marked as missing its target.
- Large jobs then get every workstation up to their pmax (the p with the largest S_d), the
  least loaded first, and an equal part of what is left on the busiest of them after the
  short jobs and the owners' reserve `sequential_share`: β = (1 - reserve - short β) / k,
  k the number of large jobs sharing it. That β varies with the load, as the paper asks;
  a large job left with no share is an error naming it (the round is full).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scheduler.model import Model
from scheduler.timeshare.slots import SlotError, check_beta
from scheduler.timeshare.tables import JobShare


@dataclass(frozen=True, slots=True)
class Demand:
    """A job to allocate: its dedicated-time model T_d(p) in seconds."""

    job: str
    model: Model


@dataclass(frozen=True, slots=True)
class AllocationRule:
    gamma: float = 2.0               # target effective speedup (eq. 5)
    short_beta: float = 0.5          # the sustained β of a short job
    short_t1_s: float = 60.0         # T_d(1) at most this: a short job
    sequential_share: float = 0.0    # β_s kept on every workstation for the owners

    def __post_init__(self) -> None:
        if not (math.isfinite(self.gamma) and self.gamma > 0):
            raise SlotError(f"gamma: must be > 0, got {self.gamma}")
        check_beta(self.short_beta, "short_beta")
        if not (math.isfinite(self.short_t1_s) and self.short_t1_s > 0):
            raise SlotError(f"short_t1_s: must be a positive time, got {self.short_t1_s}")
        if not 0 <= self.sequential_share < 1:
            raise SlotError(f"sequential_share: must be in [0, 1), got {self.sequential_share}")


@dataclass(frozen=True, slots=True)
class Allocation:
    share: JobShare
    short: bool
    dedicated_speedup: float     # S_d(p)
    effective_speedup: float     # S_e(p) = β S_d(p), eq. 3
    meets_target: bool           # S_e(p) >= γ, eq. 5


def dedicated_speedup(model: Model, p: int) -> float:
    """S_d(p) = T_d(1) / T_d(p) (eq. 1)."""
    return model.T(1) / model.T(p)


def processors_for(model: Model, gamma: float, beta: float, max_p: int) -> int | None:
    """The smallest p <= max_p with S_d(p) >= γ/β (eq. 6), or None if there is none."""
    check_beta(beta)
    need = gamma / beta
    for p in range(1, max_p + 1):
        if dedicated_speedup(model, p) >= need * (1 - 1e-12):
            return p
    return None


def best_processors(model: Model, max_p: int) -> int:
    """The p <= max_p with the largest S_d (the fewest on a tie): more would not help."""
    return max(range(1, max_p + 1), key=lambda p: (dedicated_speedup(model, p), -p))


def allocate(jobs: Sequence[Demand], workstations: Sequence[str], rule: AllocationRule,
             taken: Mapping[str, float] | None = None,
             fixed_hosts: Mapping[str, tuple[str, ...]] | None = None) -> tuple[Allocation, ...]:
    """Processors and β for each job, in the order given (see the module docstring).

    `taken`: Σβ already given on each workstation to jobs allocated by hand. `fixed_hosts`:
    jobs already running keep their workstations (only their β is decided again).
    """
    fixed = fixed_hosts or {}
    if not workstations:
        raise SlotError("workstations: needs at least one")
    load = {w: rule.sequential_share + (taken or {}).get(w, 0.0) for w in workstations}
    order = {w: i for i, w in enumerate(workstations)}
    out: dict[str, Allocation] = {}

    def least_loaded(p: int) -> tuple[str, ...]:
        chosen = sorted(workstations, key=lambda w: (load[w], order[w]))[:p]
        return tuple(sorted(chosen, key=order.__getitem__))

    short = [j for j in jobs if j.model.T(1) <= rule.short_t1_s]
    large = [j for j in jobs if j.model.T(1) > rule.short_t1_s]
    for j in short:
        p = processors_for(j.model, rule.gamma, rule.short_beta, len(workstations))
        p = p if p is not None else best_processors(j.model, len(workstations))
        hosts = fixed.get(j.job) or least_loaded(p)
        if any(load[w] + rule.short_beta > 1 + 1e-12 for w in hosts):
            raise SlotError(f"job {j.job}: no room for a sustained β = {rule.short_beta:g} on {len(hosts)} workstations")
        for w in hosts:
            load[w] += rule.short_beta
        out[j.job] = _allocation(j, hosts, rule.short_beta, True, rule.gamma)
    large_hosts = {j.job: fixed.get(j.job) or least_loaded(best_processors(j.model, len(workstations)))
                   for j in large}
    for j in large:
        hosts = large_hosts[j.job]
        shares = [(1.0 - load[w]) / sum(1 for k in large if w in large_hosts[k.job]) for w in hosts]
        beta = min(shares)
        if beta <= 1e-12:
            raise SlotError(f"job {j.job}: its workstations have no share left (the round is full)")
        out[j.job] = _allocation(j, hosts, beta, False, rule.gamma)
    return tuple(out[j.job] for j in jobs)


def _allocation(job: Demand, hosts: tuple[str, ...], beta: float, short: bool, gamma: float) -> Allocation:
    s_d = dedicated_speedup(job.model, len(hosts))
    return Allocation(JobShare(job.job, hosts, min(1.0, beta)), short, s_d, beta * s_d, beta * s_d >= gamma * (1 - 1e-12))
