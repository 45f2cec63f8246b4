"""`nowlab run --until-resolved`: which cells to run next and when to stop, decided without running anything.

Replications are added as whole rounds: one replication of every policy at
every rate (rate, then policy: `runner.cells`'s order), so a round's cells share
the host's drift, and replication r is one arrival stream for every policy
(`arrivals` seeds it by (seed, r) alone), so the claims' effects pair by
replication.

A replication counts only when every one of its cells is `done` in the store.
The lowest replication not complete is always the next round (only its cells
not yet done), so a round a killed runner left half-done is completed on
resume, never restarted, and the complete replications stay 0..k-1: none is
lost, none repeated.

The stops, checked before each round: a `failed` cell (a policy that broke a
rule: more replications repeat it); every claim resolved (holds, fails or by
construction, by the one rule of `reporting.claims`) once the config's own
replications are complete; the cap of replications; the budget, when the
round's estimate (the slowest round measured in this sitting, else the stored
run's seconds per replication) would take the elapsed time past it. A
half-done round is completed before any stop but a failed cell's, the cap's
and the budget's, so the report never mixes in a partial replication it need
not.

Pure: the caller reads the store and the clock, and runs the cells.
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

from experiments.reporting.claims import Claim, Method, Verdict
from experiments.reporting.power import CAP, from_check

CellKey = tuple[str, float, int]  # (policy, rate, replication), as experiments.runner.cells gives them
RESOLVED = (Verdict.HOLDS, Verdict.FAILS, Verdict.BY_CONSTRUCTION)
MAX_REPLICATIONS = 30

_UNITS_S = {"h": 3600.0, "m": 60.0, "s": 1.0}


def parse_budget(text: str) -> float:
    """'3h', '90m', '45s', '1h30m' (or a plain number of seconds) -> seconds; anything else a one-line error."""
    t = text.strip().lower()
    parts = re.fullmatch(r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s?)?", t)
    if not t or parts is None or not any(parts.groups()):
        raise ValueError(f"--budget: a wall-clock time such as 3h, 90m or 45s, got {text!r}")
    seconds = sum(float(v) * _UNITS_S[u] for v, u in zip(parts.groups(), "hms") if v)
    if not seconds > 0:
        raise ValueError(f"--budget: must be more than 0 s, got {text!r}")
    return seconds


def round_cells(policies: Sequence[str], rates: Sequence[float], replication: int) -> list[CellKey]:
    """One replication of every policy at every rate: rate, then policy, as the runner orders them."""
    return [(p, float(r), replication) for r in rates for p in policies]


def complete(policies: Sequence[str], rates: Sequence[float], status: Mapping[CellKey, str]) -> list[int]:
    """The replications whose every cell is `done`, lowest first."""
    reps = sorted({k[2] for k in status})
    return [r for r in reps if all(status.get(k) == "done" for k in round_cells(policies, rates, r))]


def next_replication(policies: Sequence[str], rates: Sequence[float], status: Mapping[CellKey, str]) -> int:
    """The lowest replication not complete (a half-done one before any new one)."""
    done = set(complete(policies, rates, status))
    r = 0
    while r in done:
        r += 1
    return r


class Stop(Enum):
    """Why the rounds stopped."""

    RESOLVED = "every claim is resolved"
    BUDGET = "the budget would be exceeded by another round"
    CAP = "the cap of replications is reached"
    FAILED = "a cell failed"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Decision:
    """What to run next (`cells`, empty when stopping) or why to stop, in words."""

    cells: tuple[CellKey, ...]
    stop: Stop | None
    why: str


@dataclass(frozen=True)
class Limits:
    """What the command line set: the wall-clock budget, the cap, and the config's own replications (a floor)."""

    budget_s: float
    max_replications: int = MAX_REPLICATIONS
    min_replications: int = 1

    def __post_init__(self) -> None:
        if not self.budget_s > 0:
            raise ValueError(f"--budget: must be more than 0 s, got {self.budget_s}")
        if self.max_replications < 2:
            raise ValueError(f"--max-replications: at least 2 (an interval needs two), got {self.max_replications}")


def resolved(verdicts: Sequence[Verdict]) -> bool:
    return all(v in RESOLVED for v in verdicts)


def decide(policies: Sequence[str], rates: Sequence[float], status: Mapping[CellKey, str],
           verdicts: Sequence[Verdict], limits: Limits, *, elapsed_s: float, round_s: float) -> Decision:
    """The next round's cells, or the stop. `status`: every stored cell's status; `verdicts`: the claims'
    on the complete replications; `round_s`: a whole round's estimated seconds (NaN: not known yet)."""
    failed = sorted(k for k, s in status.items() if s == "failed")
    if failed:
        p, r, rep = failed[0]
        return Decision((), Stop.FAILED, f"{Stop.FAILED} ({p} at {r:g}/s, replication {rep}): more replications "
                                         "would repeat it; the report names the rule it broke")
    have = len(complete(policies, rates, status))
    rep = next_replication(policies, rates, status)
    todo = tuple(k for k in round_cells(policies, rates, rep) if status.get(k) != "done")
    half_done = len(todo) < len(policies) * len(rates)
    if not half_done and have >= limits.min_replications and resolved(verdicts):
        return Decision((), Stop.RESOLVED, f"{Stop.RESOLVED} at {have} replications")
    cap = max(limits.max_replications, limits.min_replications)
    if rep >= cap:
        return Decision((), Stop.CAP, f"{Stop.CAP} ({cap}); still unresolved")
    estimate = round_s * len(todo) / (len(policies) * len(rates))
    if math.isfinite(estimate) and elapsed_s + estimate > limits.budget_s:
        return Decision((), Stop.BUDGET, f"{Stop.BUDGET} (about {_duration(estimate)} more against "
                                         f"{_duration(max(0.0, limits.budget_s - elapsed_s))} left)")
    if not math.isfinite(estimate) and elapsed_s >= limits.budget_s:
        return Decision((), Stop.BUDGET, f"the budget ({_duration(limits.budget_s)}) is spent")
    what = f"completing replication {rep} ({len(todo)} cell{'s' if len(todo) > 1 else ''} left)" if half_done else f"replication {rep}"
    return Decision(todo, None, what)


def round_estimate(measured_rounds_s: Sequence[float], stored_s_per_replication: float) -> float:
    """A round's seconds: the slowest round measured in this sitting (a budget is a limit), else the stored run's."""
    return max(measured_rounds_s) if measured_rounds_s else stored_s_per_replication


# ---- what the claims need, in words ------------------------------------------------------------

@dataclass(frozen=True)
class Need:
    """A claim's replications needed in all (None: cannot tell, `why` says why)."""

    claim: Claim
    needed: int | None
    why: str = ""


def need(claim: Claim, have: int) -> Need:
    """The replications an unresolved claim needs to resolve at 95% with 80% chance: the most any of its
    unresolved checks needs, each from its paired (or one-sample) interval over the replications so far."""
    if claim.verdict in RESOLVED:
        return Need(claim, have)
    if have < 2:
        return Need(claim, None, "cannot tell yet: fewer than 2 complete replications")
    missing = [c.where for c in claim.checks if not c.known]
    if missing:
        return Need(claim, None, f"cannot tell: no figure at {', '.join(missing)}")
    open_ = [c for c in claim.checks if c.verdict is Verdict.UNRESOLVED]
    if not open_:
        return Need(claim, None, "cannot tell: no check to resolve")
    plans = []
    for c in open_:
        plan = from_check(c)
        if plan is None:
            test = c.test if c.test is not None else Method.NONE
            return Need(claim, None, f"cannot tell: {c.where} has no paired or one-sample interval ({test})")
        plans.append(plan)
    return Need(claim, max(p.needed for p in plans))


def plan_lines(claims: Sequence[Claim], have: int, seconds_per_replication: float, limits: Limits,
               elapsed_s: float = 0.0) -> list[str]:
    """Before the rounds: per claim, its verdict or what it needs and whether the budget covers it."""
    left_s = max(0.0, limits.budget_s - elapsed_s)
    cap = max(limits.max_replications, limits.min_replications)
    spr = seconds_per_replication
    per = f"about {_duration(spr)} a replication" if math.isfinite(spr) else "no replication timed yet"
    lines = [f"power analysis at {have} complete replications ({per}; budget {_duration(left_s)} left, "
             f"cap {cap} replications):"]
    for n in (need(c, have) for c in claims):
        head = f"- {_short(n.claim.statement)}: "
        if n.claim.verdict in RESOLVED:
            lines.append(head + f"{n.claim.verdict} already")
        elif n.needed is None:
            lines.append(head + f"{n.claim.verdict}; {n.why}")
        else:
            lines.append(head + f"{n.claim.verdict}; " + _covered(n.needed, have, spr, left_s, cap))
    return lines


def _covered(needed: int, have: int, spr: float, left_s: float, cap: int) -> str:
    if needed >= CAP:
        return f"needs more than {CAP:,} replications: the effect so far is too small against its spread"
    more = max(0, needed - have)
    body = f"needs {needed} replications ({more} more"
    if not math.isfinite(spr):
        return body + "; their time cannot be told before one is timed)"
    body += f", about {_duration(more * spr)})"
    if needed > cap:
        return body + f": past the cap of {cap}"
    return body + ("; the budget covers it" if more * spr <= left_s
                   else f"; the budget does not (room for about {int(left_s // spr) if spr > 0 else 0} more)")


def verdict_lines(claims: Sequence[Claim], have: int) -> list[str]:
    """After a round: each claim's verdict at `have` replications, then what is still unresolved."""
    lines = [f"after {have} complete replications:"]
    lines += [f"- {_short(c.statement)}: {c.verdict}" for c in claims]
    open_ = [c for c in claims if c.verdict not in RESOLVED]
    lines.append(f"still unresolved: {len(open_)} of {len(claims)}" if open_ else "every claim is resolved")
    return lines


def _short(text: str, width: int = 70) -> str:
    one = " ".join(text.split())
    return one if len(one) <= width else one[:width - 1] + "…"


def _duration(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"
