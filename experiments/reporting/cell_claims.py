"""Verdicts of a paper's claims on cells tables (`run_stats.cell_table`'s columns).

Every kind reduces to a list of checks (`experiments.reporting.claims.Check`): a
signed margin (positive when the claim holds there) and its 95% half-width; the
claim's verdict is the one rule of `experiments.reporting.claims` (holds / fails /
unresolved / no data), and its words keep the k-of-n count.

Half-widths come from the cells' replication intervals (`{stat}_ci`, Student's
t over replications). A margin built from two cells adds their half-widths in
quadrature, as for a difference of independent means; a relative gap
1 - lower/than uses the first-order (delta-method) propagation,
sqrt((h_lower/than)² + (lower·h_than/than²)²). Policies run on the same
seeded streams, so the cells are positively correlated and these half-widths
are on the wide side: a verdict called clear is clear.

"about x" holds when ours is within `tolerance` of x (default 0.04, i.e. 4
percentage points of a relative gap): half the smallest step the paper reads
as a real difference between two of its magnitudes (17% with constant demand
against 25% with exponential demand, §3.2), so "about 17%" and "about 25%"
cannot both hold.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from experiments.reporting.claims import Check, Claim, Verdict, interval_words, verdict_words

#: A claim's metric -> the cells-table statistic it reads.
CLAIM_STAT = {"response": "response", "wait": "wait", "execution": "execution",
              "mean_procs": "mean_procs", "preemptions": "preemptions", "sync_delay": "sync_delay"}


@dataclass(frozen=True)
class Estimate:
    """A figure and its 95% half-width (NaN: not known, e.g. one replication)."""

    value: float
    hw: float = math.nan

    @property
    def known(self) -> bool:
        return math.isfinite(self.value)


def _check(where: str, e: Estimate) -> Check:
    return Check(where, e.value, e.hw)


# ---- reading cells -----------------------------------------------------------------------------

def rate_label(rate: float) -> str:
    return f"{rate:g}/s"


def value_at(cells: pd.DataFrame, policy: str, rate: float, stat: str) -> Estimate:
    """The cell's mean of `stat` and its half-width (NaN when the cell or column is missing)."""
    if stat not in cells:
        return Estimate(math.nan)
    rows = cells[(cells.policy == policy) & np.isclose(cells.rate.astype(float), rate, rtol=1e-9, atol=0)]
    if rows.empty or pd.isna(rows[stat].iloc[0]):
        return Estimate(math.nan)
    ci = rows[f"{stat}_ci"].iloc[0] if f"{stat}_ci" in rows else math.nan
    return Estimate(float(rows[stat].iloc[0]), float(ci) if pd.notna(ci) else math.nan)


def gap_at(cells: pd.DataFrame, claim: Mapping[str, Any], rate: float) -> Estimate:
    """How far `lower` is below `than` at `rate`: (than - lower)/than (gap = relative), than/lower - 1
    (gap = increase: how much higher `than` is, as the paper's "increase in the execution time"), or
    than - lower in the metric's unit (gap = absolute)."""
    stat = CLAIM_STAT[claim["metric"]]
    lo, hi = value_at(cells, claim["lower"], rate, stat), value_at(cells, claim["than"], rate, stat)
    if not (lo.known and hi.known):
        return Estimate(math.nan)
    if claim.get("gap", "relative") == "absolute":
        return Estimate(hi.value - lo.value, math.hypot(lo.hw, hi.hw))
    if claim.get("gap") == "increase":
        return _ratio_gap(hi, lo, -1.0)
    return _ratio_gap(lo, hi, 1.0)


def _ratio_gap(num: Estimate, den: Estimate, sign: float) -> Estimate:
    """sign·(1 - num/den) and its first-order half-width, sqrt((h_num/den)² + (num·h_den/den²)²)
    (defined when num is 0 too: a policy that never waits or never resizes)."""
    if den.value == 0:
        return Estimate(math.nan)
    hw = math.hypot(num.hw / den.value, num.value * den.hw / den.value ** 2)
    return Estimate(sign * (1.0 - num.value / den.value), abs(hw))


def _diff(a: Estimate, b: Estimate) -> Estimate:
    """a - b, half-widths in quadrature."""
    return Estimate(a.value - b.value, math.hypot(a.hw, b.hw))


# ---- formatting --------------------------------------------------------------------------------

def _fmt(x: float, claim: Mapping[str, Any], *, gap: bool = True) -> str:
    if not math.isfinite(x):
        return "n/a"
    if gap and claim.get("gap", "relative") != "absolute":
        return f"{x:.0%}"
    return f"{x:.3g}"


def _pm(e: Estimate, claim: Mapping[str, Any], *, gap: bool = True) -> str:
    body = _fmt(e.value, claim, gap=gap)
    return body if not math.isfinite(e.hw) else f"{body} ± {_fmt(e.hw, claim, gap=gap)}"


def _verdict(checks: Sequence[Check], ours: str, detail: str, what: str, statement: str = "") -> Claim:
    """The claim by the one rule, its words keeping the k-of-n count (`what` names a check's unit, e.g. 'rates')."""
    claim = Claim(statement, tuple(checks), ours=ours, detail=detail)
    missing = [c.where for c in checks if not c.known]
    verdict = claim.verdict
    if verdict is Verdict.NO_DATA:
        return Claim(statement, tuple(checks), words="no data")
    words = verdict_words(checks, what)
    failed = [c.where for c in checks if c.verdict is Verdict.FAILS]
    open_ = [c.where for c in checks if c.verdict is Verdict.UNRESOLVED]
    if failed and len(failed) < len(checks):
        words += f"; not at {', '.join(failed)}"
    if open_ and verdict is not Verdict.HOLDS:
        words += f"; within the 95% interval at {', '.join(open_)}"
    if missing:
        words += f" (no data at {', '.join(missing)})"
    if bare := interval_words(checks):
        words += f" ({bare})"
    return Claim(statement, tuple(checks), words=words, ours=ours, detail=detail)


def _span(values: Sequence[float]) -> str:
    """'9–21%' (or '12%' for one value), in whole percent."""
    vals = sorted(float(v) * 100 for v in values)
    lo, hi = f"{vals[0]:.0f}", f"{vals[-1]:.0f}"
    return f"{lo}%" if lo == hi else f"{lo}–{hi}%"


# ---- the kinds ---------------------------------------------------------------------------------

def judge(claim: Mapping[str, Any], cells: pd.DataFrame, all_rates: Sequence[float]) -> Claim:
    """One claim (a config `[[claim]]` as a dict) judged on one cells table."""
    if claim.get("metric") not in CLAIM_STAT:
        raise ValueError(f"unknown metric {claim.get('metric')!r}")
    rates = sorted(float(r) for r in (claim.get("rates") or all_rates))
    kind = claim.get("kind", "below")
    if kind == "below":
        return _below(claim, cells, rates)
    if kind == "gap_grows":
        return _gap_grows(claim, cells, rates)
    if kind == "peaks":
        return _peaks(claim, cells, rates)
    if kind == "bound":
        return _bound(claim, cells, rates)
    raise ValueError(f"unknown kind {kind!r}")


def _below(claim: Mapping[str, Any], cells: pd.DataFrame, rates: Sequence[float]) -> Claim:
    """lower below than at every rate; with a magnitude, by at least / up to / about x.

    at_least x: the gap is at least x at every rate. up_to x: the gap is
    positive at every rate and its largest value is at most x (the paper's
    "maximum difference ... approximately x" read as a ceiling). about x:
    positive at every rate and the largest gap within `tolerance` of x.
    """
    gaps = {r: gap_at(cells, claim, r) for r in rates}
    known = {r: g for r, g in gaps.items() if g.known}
    detail = ", ".join(f"{rate_label(r)}: {_pm(g, claim)}" for r, g in gaps.items())
    checks = [_check(rate_label(r), g) for r, g in gaps.items()]
    if not known:
        return _verdict(checks, "", "", "rates", claim.get("text", ""))
    top_rate = max(known, key=lambda r: known[r].value)
    top = known[top_rate]
    largest = f"largest gap {_fmt(top.value, claim)} at {rate_label(top_rate)}"
    if claim.get("at_least") is not None:
        x = float(claim["at_least"])
        checks = [Check(rate_label(r), g.value - x, g.hw) for r, g in gaps.items()]
        lowest = min(known.values(), key=lambda g: g.value)
        ours = f"smallest gap {_fmt(lowest.value, claim)} (at least {_fmt(x, claim)} asked)"
    elif claim.get("up_to") is not None:
        x = float(claim["up_to"])
        checks += [Check(f"largest gap at {rate_label(top_rate)} vs {_fmt(x, claim)}", x - top.value, top.hw)]
        ours = largest
    elif claim.get("about") is not None:
        x, tol = float(claim["about"]), float(claim.get("tolerance", 0.04))
        checks += [Check(f"largest gap at {rate_label(top_rate)} within {_fmt(tol, claim)} of {_fmt(x, claim)}",
                         tol - abs(top.value - x), top.hw)]
        ours = largest
    else:
        pos = [g.value for g in known.values() if g.value > 0]
        ours = (f"by {_span(pos)}" if claim.get("gap", "relative") != "absolute" and pos
                else largest if pos else f"{claim['lower']} is higher")
    v = _verdict(checks, ours, detail, "conditions" if len(checks) > len(rates) else "rates", claim.get("text", ""))
    if v.verdict is Verdict.FAILS and not claim.get("at_least") and all(not g.value > 0 for g in known.values()):
        words = f"fails: {claim['lower']} is higher by {_span([-g.value for g in known.values()])}" \
            if claim.get("gap", "relative") != "absolute" else f"fails: {claim['lower']} is higher"
        v = replace(v, words=words)
    elif v.verdict is Verdict.HOLDS:
        v = replace(v, words=f"holds, {ours}")
    return v


def _gap_grows(claim: Mapping[str, Any], cells: pd.DataFrame, rates: Sequence[float]) -> Claim:
    """The gap (than - lower) increases from each rate to the next (every step, not only end to end)."""
    gaps = [gap_at(cells, claim, r) for r in rates]
    checks = [_check(f"{rate_label(a)} → {rate_label(b)}", _diff(gaps[i + 1], gaps[i]))
              for i, (a, b) in enumerate(zip(rates, rates[1:]))]
    ours = " → ".join(_fmt(g.value, claim) for g in gaps)
    detail = ", ".join(f"{rate_label(r)}: {_pm(g, claim)}" for r, g in zip(rates, gaps))
    return _verdict(checks, f"gap {ours}", detail, "steps", claim.get("text", ""))


def _peaks(claim: Mapping[str, Any], cells: pd.DataFrame, rates: Sequence[float]) -> Claim:
    """`policy`'s metric is highest strictly inside the range: the inner maximum above both ends."""
    stat = CLAIM_STAT[claim["metric"]]
    values = {r: value_at(cells, claim["policy"], r, stat) for r in rates}
    detail = ", ".join(f"{rate_label(r)}: {_pm(v, claim, gap=False)}" for r, v in values.items())
    inner = {r: v for r, v in list(values.items())[1:-1] if v.known}
    if not inner:
        return _verdict([Check("inner rates", math.nan)], "", detail, "ends", claim.get("text", ""))
    peak_rate = max(inner, key=lambda r: inner[r].value)
    ends = (rates[0], rates[-1])
    checks = [_check(f"{rate_label(peak_rate)} above {rate_label(e)}", _diff(inner[peak_rate], values[e]))
              for e in ends]
    ours = f"highest inside the range {_fmt(inner[peak_rate].value, claim, gap=False)} at {rate_label(peak_rate)}; " \
           f"ends {_fmt(values[ends[0]].value, claim, gap=False)}, {_fmt(values[ends[1]].value, claim, gap=False)}"
    return _verdict(checks, ours, detail, "ends", claim.get("text", ""))


def _bound(claim: Mapping[str, Any], cells: pd.DataFrame, rates: Sequence[float]) -> Claim:
    """`policy`'s metric below `under` (or above `over`) at every rate."""
    stat = CLAIM_STAT[claim["metric"]]
    values = {r: value_at(cells, claim["policy"], r, stat) for r in rates}
    if claim.get("under") is not None:
        b = float(claim["under"])
        checks = [Check(rate_label(r), b - v.value, v.hw) for r, v in values.items()]
        known = [v.value for v in values.values() if v.known]
        ours = f"at most {max(known):.3g} (bound {b:g})" if known else ""
    else:
        b = float(claim["over"])
        checks = [Check(rate_label(r), v.value - b, v.hw) for r, v in values.items()]
        known = [v.value for v in values.values() if v.known]
        ours = f"at least {min(known):.3g} (bound {b:g})" if known else ""
    detail = ", ".join(f"{rate_label(r)}: {_pm(v, claim, gap=False)}" for r, v in values.items())
    return _verdict(checks, ours, detail, "rates", claim.get("text", ""))


# ---- across figures ----------------------------------------------------------------------------

def largest_gap(claim: Mapping[str, Any], cells: pd.DataFrame, rates: Sequence[float]) -> tuple[float, Estimate]:
    """The rate where `lower` is farthest below `than`, and that gap (NaN when no rate has data)."""
    gaps = {float(r): gap_at(cells, claim, float(r)) for r in rates}
    known = {r: g for r, g in gaps.items() if g.known}
    if not known:
        return math.nan, Estimate(math.nan)
    r = max(known, key=lambda k: known[k].value)
    return r, known[r]


def judge_across(claim: Mapping[str, Any], figures: Mapping[str, pd.DataFrame],
                 rates: Mapping[str, Sequence[float]]) -> Claim:
    """A claim between two figures: the largest gap in figure `larger` is above that in figure `smaller`.

    The paper compares its figures by their maximum improvements ("maximum 25%
    ... better than the improvement (maximum 17%)", §3.2), so each figure is
    reduced to its largest gap of `lower` under `than` over its own rates.
    """
    sides = []
    for key in ("larger", "smaller"):
        name = claim[key]
        if name not in figures:
            return Claim(claim.get("text", ""), words=f"no results for figure {name!r}")
        sides.append((name, *largest_gap(claim, figures[name], rates[name])))
    (a, ra, ga), (b, rb, gb) = sides
    ours = f"{a} {_fmt(ga.value, claim)}" + (f" at {rate_label(ra)}" if math.isfinite(ra) else "") + \
           f" vs {b} {_fmt(gb.value, claim)}" + (f" at {rate_label(rb)}" if math.isfinite(rb) else "")
    detail = f"{a}: {_pm(ga, claim)}; {b}: {_pm(gb, claim)}"
    return _verdict([_check(f"{a} above {b}", _diff(ga, gb))], ours, detail, "figures", claim.get("text", ""))
