"""How many replications a claim needs to resolve at 95%, and about how long they take.

A check resolves when its 95% interval excludes its threshold (`claims.Check`):
for a paired effect that is the two-sided paired t-test at 5%. With a true
effect delta and a per-replication standard deviation sigma (of the paired
differences, or of the linearised values `effects.effect` pairs), the test
statistic over n replications is noncentral t with n - 1 degrees of freedom and
noncentrality delta·sqrt(n)/sigma, so the chance that n replications resolve
the check (its power) is

    P(|T| > t_{n-1, 0.975}) = 1 - F(t_c; n-1, nc) + F(-t_c; n-1, nc).

`replications_for` finds the smallest n with that chance at least `power`
(80% unless said). From a run's own replications the effect and sigma are
estimated (`from_differences`, or `from_check` from a check's interval, test and
n), so the answer is a plan, not a promise: it assumes the effect is what the
replications so far say. Pure: no I/O.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as st

from experiments.reporting.claims import Check, Claim, Method, Verdict

POWER = 0.80
CONFIDENCE = 0.95
CAP = 100_000  # more than this many replications: not a plan


def resolve_chance(effect: float, sd: float, n: int, confidence: float = CONFIDENCE) -> float:
    """The chance that n paired replications resolve an effect (its 95% interval excludes 0), by noncentral t."""
    if n < 2:
        return 0.0
    if sd == 0:
        return 1.0 if effect != 0 else 0.0
    df, nc = n - 1, effect * math.sqrt(n) / sd
    tc = float(st.t.ppf(0.5 + confidence / 2, df))
    return float(st.nct.sf(tc, df, nc) + st.nct.cdf(-tc, df, nc))


def replications_for(effect: float, sd: float, power: float = POWER, confidence: float = CONFIDENCE,
                     cap: int = CAP) -> int:
    """The fewest replications (at least 2) that resolve `effect` with chance `power`; `cap` when none up to it does.

    The chance rises with n, so a doubling search then bisection finds the first n.
    """
    if not 0 < power < 1:
        raise ValueError(f"power must be in (0, 1) (got {power})")
    if not (math.isfinite(effect) and math.isfinite(sd) and sd >= 0):
        raise ValueError(f"effect and sd must be finite, sd >= 0 (got {effect}, {sd})")
    if effect == 0:
        return cap
    lo, hi = 1, 2  # resolve_chance(lo) < power (n = 1 never resolves)
    while resolve_chance(effect, sd, hi, confidence) < power:
        lo, hi = hi, hi * 2
        if hi >= cap:
            return cap if resolve_chance(effect, sd, cap, confidence) < power else _first(effect, sd, lo, cap,
                                                                                         power, confidence)
    return _first(effect, sd, lo, hi, power, confidence)


def _first(effect: float, sd: float, lo: int, hi: int, power: float, confidence: float) -> int:
    """The first n in (lo, hi] with enough chance (chance(lo) < power <= chance(hi))."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if resolve_chance(effect, sd, mid, confidence) >= power:
            hi = mid
        else:
            lo = mid
    return hi


@dataclass(frozen=True)
class Plan:
    """Replications a check needs, how many it has and about how long the rest take."""

    effect: float
    sd: float
    needed: int  # in all, at `power` (CAP: not reachable)
    have: int
    power: float = POWER
    seconds_per_replication: float = math.nan

    @property
    def more(self) -> int:
        return max(0, self.needed - self.have)

    @property
    def seconds(self) -> float:
        """About how long the further replications take: more × measured seconds per replication."""
        return self.more * self.seconds_per_replication

    def text(self) -> str:
        """'needs 34 replications (has 4: 30 more, about 2.5 h) to resolve at 95% with 80% chance'."""
        if self.needed >= CAP:
            return (f"more than {CAP:,} replications: the effect so far ({self.effect:+.3g}) is too small "
                    f"against its spread (sd {self.sd:.3g} per replication)")
        eta = f", about {_duration(self.seconds)}" if math.isfinite(self.seconds) and self.more else ""
        return (f"needs {self.needed} replications (has {self.have}: {self.more} more{eta}) to resolve at "
                f"{CONFIDENCE:.0%} with {self.power:.0%} chance")


def _duration(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.0f} min"


def from_differences(diffs: Sequence[float], power: float = POWER, seconds_per_replication: float = math.nan,
                     threshold: float = 0.0) -> Plan:
    """The plan from per-replication paired differences (less the claim's threshold): their mean and sd."""
    d = np.asarray(diffs, dtype=float) - threshold
    if d.size < 2:
        raise ValueError("need at least two replications' differences to estimate their spread")
    effect, sd = float(d.mean()), float(d.std(ddof=1))
    return Plan(effect, sd, replications_for(effect, sd, power), int(d.size), power, seconds_per_replication)


def from_check(check: Check, power: float = POWER, seconds_per_replication: float = math.nan) -> Plan | None:
    """The plan for a check from its margin, 95% half-width and n: sd = half-width·sqrt(n)/t_{n-1}.

    Only for a check whose interval is one t interval over n replications (paired or one sample); None otherwise.
    """
    if check.test not in (Method.PAIRED, Method.ONE_SAMPLE) or check.n < 2 or not check.has_interval:
        return None
    sd = abs(check.half_width) * math.sqrt(check.n) / float(st.t.ppf(0.5 + CONFIDENCE / 2, check.n - 1))
    return Plan(check.margin, sd, replications_for(check.margin, sd, power), check.n, power, seconds_per_replication)


def claim_plan(claim: Claim, power: float = POWER, seconds_per_replication: float = math.nan) -> str:
    """What an unresolved claim needs, in words: the most replications any of its unresolved checks needs
    (each from its own margin, interval and n), and about how long the further ones take; '' for a claim
    already resolved, and a reason where a check's interval is not one t interval (no estimate then)."""
    if claim.verdict is not Verdict.UNRESOLVED:
        return ""
    open_ = [c for c in claim.checks if c.verdict is Verdict.UNRESOLVED]
    plans = [from_check(c, power, seconds_per_replication) for c in open_]
    if not open_ or any(p is None for p in plans):
        return "no estimate: an unresolved check has no paired or one-sample interval"
    worst = max(plans, key=lambda p: p.needed)  # type: ignore[union-attr]
    return worst.text()  # type: ignore[union-attr]
