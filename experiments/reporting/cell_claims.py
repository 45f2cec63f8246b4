"""Verdicts of a paper's claims on cells tables (`run_stats.cell_table`'s columns).

Every kind reduces to a list of checks: a signed margin (positive when the
claim holds there) and its 95% half-width. The verdict is yes when every
check holds, no when none does, partly otherwise; it stands outside the 95%
interval when every margin is farther from zero than its half-width.

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
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

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


@dataclass(frozen=True)
class Check:
    """One condition of a claim: `where` it is checked, its margin (> 0: holds) and the margin's half-width."""

    where: str
    margin: Estimate

    @property
    def holds(self) -> bool:
        return self.margin.known and self.margin.value > 0

    @property
    def clear(self) -> bool | None:
        """True: outside the 95% interval; False: inside; None: no interval."""
        if not math.isfinite(self.margin.hw):
            return None
        return abs(self.margin.value) > self.margin.hw


@dataclass(frozen=True)
class Verdict:
    """A claim judged on one cells table (or, across figures, on several)."""

    verdict: str  # "yes", "no", "partly (k of n ...)", "no data"
    ours: str  # our number(s), in the claim's terms
    words: str  # the verdict in a sentence
    detail: str  # per rate (or per step) figures
    interval: str  # whether it stands outside the 95% interval, in plain words
    checks: tuple[Check, ...] = ()

    @property
    def holds(self) -> bool | None:
        return {"yes": True, "no": False}.get(self.verdict)


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


def interval_text(checks: Sequence[Check]) -> str:
    """Whether the verdict stands outside the 95% interval, in plain words."""
    known = [c for c in checks if c.margin.known]
    if not known:
        return "no data"
    unknown = [c.where for c in known if c.clear is None]
    inside = [c for c in known if c.clear is False]
    if unknown:
        return f"not known: no 95% interval at {', '.join(unknown)} (a single replication)"
    if inside:
        return "no: within the 95% interval at " + "; ".join(
            f"{c.where} (margin {c.margin.value:+.3g} ± {c.margin.hw:.2g})" for c in inside)
    return "yes: outside the 95% interval everywhere"


def _verdict(checks: Sequence[Check], ours: str, detail: str, what: str) -> Verdict:
    """yes / no / partly from the checks; `what` names a check's unit in the partly text (e.g. 'rates')."""
    known = [c for c in checks if c.margin.known]
    missing = [c.where for c in checks if not c.margin.known]
    if not known:
        return Verdict("no data", "", "no data", "", "no data", tuple(checks))
    held = [c for c in known if c.holds]
    if len(held) == len(checks):
        verdict = "yes"
    elif not held:
        verdict = "no"
    else:
        verdict = f"partly ({len(held)} of {len(checks)} {what})"
    words = verdict
    failed = [c.where for c in known if not c.holds]
    if held and failed:
        words += f": not at {', '.join(failed)}"
    if missing:
        words += f" (no data at {', '.join(missing)})"
    return Verdict(verdict, ours, words, detail, interval_text(checks), tuple(checks))


def _span(values: Sequence[float]) -> str:
    """'9–21%' (or '12%' for one value), in whole percent."""
    vals = sorted(float(v) * 100 for v in values)
    lo, hi = f"{vals[0]:.0f}", f"{vals[-1]:.0f}"
    return f"{lo}%" if lo == hi else f"{lo}–{hi}%"


# ---- the kinds ---------------------------------------------------------------------------------

def judge(claim: Mapping[str, Any], cells: pd.DataFrame, all_rates: Sequence[float]) -> Verdict:
    """Verdict of one claim (a config `[[claim]]` as a dict) on one cells table."""
    if claim.get("metric") not in CLAIM_STAT:
        return Verdict(f"unknown metric {claim.get('metric')!r}", "", "", "", "")
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
    return Verdict(f"unknown kind {kind!r}", "", "", "", "")


def _below(claim: Mapping[str, Any], cells: pd.DataFrame, rates: Sequence[float]) -> Verdict:
    """lower below than at every rate; with a magnitude, by at least / up to / about x.

    at_least x: the gap is at least x at every rate. up_to x: the gap is
    positive at every rate and its largest value is at most x (the paper's
    "maximum difference ... approximately x" read as a ceiling). about x:
    positive at every rate and the largest gap within `tolerance` of x.
    """
    gaps = {r: gap_at(cells, claim, r) for r in rates}
    known = {r: g for r, g in gaps.items() if g.known}
    detail = ", ".join(f"{rate_label(r)}: {_pm(g, claim)}" for r, g in gaps.items())
    checks = [Check(rate_label(r), g) for r, g in gaps.items()]
    if not known:
        return _verdict(checks, "", "", "rates")
    top_rate = max(known, key=lambda r: known[r].value)
    top = known[top_rate]
    largest = f"largest gap {_fmt(top.value, claim)} at {rate_label(top_rate)}"
    if claim.get("at_least") is not None:
        x = float(claim["at_least"])
        checks = [Check(rate_label(r), Estimate(g.value - x, g.hw)) for r, g in gaps.items()]
        lowest = min(known.values(), key=lambda g: g.value)
        ours = f"smallest gap {_fmt(lowest.value, claim)} (at least {_fmt(x, claim)} asked)"
    elif claim.get("up_to") is not None:
        x = float(claim["up_to"])
        checks += [Check(f"largest gap at {rate_label(top_rate)} vs {_fmt(x, claim)}",
                         Estimate(x - top.value, top.hw))]
        ours = largest
    elif claim.get("about") is not None:
        x, tol = float(claim["about"]), float(claim.get("tolerance", 0.04))
        checks += [Check(f"largest gap at {rate_label(top_rate)} within {_fmt(tol, claim)} of {_fmt(x, claim)}",
                         Estimate(tol - abs(top.value - x), top.hw))]
        ours = largest
    else:
        pos = [g.value for g in known.values() if g.value > 0]
        ours = (f"by {_span(pos)}" if claim.get("gap", "relative") != "absolute" and pos
                else largest if pos else f"{claim['lower']} is higher")
    v = _verdict(checks, ours, detail, "conditions" if len(checks) > len(rates) else "rates")
    if v.verdict == "no" and not claim.get("at_least") and all(not g.value > 0 for g in known.values()):
        words = f"no: {claim['lower']} is higher by {_span([-g.value for g in known.values()])}" \
            if claim.get("gap", "relative") != "absolute" else f"no: {claim['lower']} is higher"
        v = Verdict(v.verdict, v.ours, words, v.detail, v.interval, v.checks)
    elif v.verdict == "yes":
        v = Verdict("yes", v.ours, f"yes, {ours}", v.detail, v.interval, v.checks)
    return v


def _gap_grows(claim: Mapping[str, Any], cells: pd.DataFrame, rates: Sequence[float]) -> Verdict:
    """The gap (than - lower) increases from each rate to the next (every step, not only end to end)."""
    gaps = [gap_at(cells, claim, r) for r in rates]
    checks = [Check(f"{rate_label(a)} → {rate_label(b)}", _diff(gaps[i + 1], gaps[i]))
              for i, (a, b) in enumerate(zip(rates, rates[1:]))]
    ours = " → ".join(_fmt(g.value, claim) for g in gaps)
    detail = ", ".join(f"{rate_label(r)}: {_pm(g, claim)}" for r, g in zip(rates, gaps))
    return _verdict(checks, f"gap {ours}", detail, "steps")


def _peaks(claim: Mapping[str, Any], cells: pd.DataFrame, rates: Sequence[float]) -> Verdict:
    """`policy`'s metric is highest strictly inside the range: the inner maximum above both ends."""
    stat = CLAIM_STAT[claim["metric"]]
    values = {r: value_at(cells, claim["policy"], r, stat) for r in rates}
    detail = ", ".join(f"{rate_label(r)}: {_pm(v, claim, gap=False)}" for r, v in values.items())
    inner = {r: v for r, v in list(values.items())[1:-1] if v.known}
    if not inner:
        return _verdict([Check("inner rates", Estimate(math.nan))], "", detail, "ends")
    peak_rate = max(inner, key=lambda r: inner[r].value)
    ends = (rates[0], rates[-1])
    checks = [Check(f"{rate_label(peak_rate)} above {rate_label(e)}", _diff(inner[peak_rate], values[e]))
              for e in ends]
    ours = f"highest inside the range {_fmt(inner[peak_rate].value, claim, gap=False)} at {rate_label(peak_rate)}; " \
           f"ends {_fmt(values[ends[0]].value, claim, gap=False)}, {_fmt(values[ends[1]].value, claim, gap=False)}"
    return _verdict(checks, ours, detail, "ends")


def _bound(claim: Mapping[str, Any], cells: pd.DataFrame, rates: Sequence[float]) -> Verdict:
    """`policy`'s metric below `under` (or above `over`) at every rate."""
    stat = CLAIM_STAT[claim["metric"]]
    values = {r: value_at(cells, claim["policy"], r, stat) for r in rates}
    if claim.get("under") is not None:
        b = float(claim["under"])
        checks = [Check(rate_label(r), Estimate(b - v.value, v.hw)) for r, v in values.items()]
        known = [v.value for v in values.values() if v.known]
        ours = f"at most {max(known):.3g} (bound {b:g})" if known else ""
    else:
        b = float(claim["over"])
        checks = [Check(rate_label(r), Estimate(v.value - b, v.hw)) for r, v in values.items()]
        known = [v.value for v in values.values() if v.known]
        ours = f"at least {min(known):.3g} (bound {b:g})" if known else ""
    detail = ", ".join(f"{rate_label(r)}: {_pm(v, claim, gap=False)}" for r, v in values.items())
    return _verdict(checks, ours, detail, "rates")


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
                 rates: Mapping[str, Sequence[float]]) -> Verdict:
    """A claim between two figures: the largest gap in figure `larger` is above that in figure `smaller`.

    The paper compares its figures by their maximum improvements ("maximum 25%
    ... better than the improvement (maximum 17%)", §3.2), so each figure is
    reduced to its largest gap of `lower` under `than` over its own rates.
    """
    sides = []
    for key in ("larger", "smaller"):
        name = claim[key]
        if name not in figures:
            return Verdict("no data", "", f"no results for figure {name!r}", "", "no data")
        sides.append((name, *largest_gap(claim, figures[name], rates[name])))
    (a, ra, ga), (b, rb, gb) = sides
    ours = f"{a} {_fmt(ga.value, claim)}" + (f" at {rate_label(ra)}" if math.isfinite(ra) else "") + \
           f" vs {b} {_fmt(gb.value, claim)}" + (f" at {rate_label(rb)}" if math.isfinite(rb) else "")
    detail = f"{a}: {_pm(ga, claim)}; {b}: {_pm(gb, claim)}"
    v = _verdict([Check(f"{a} above {b}", _diff(ga, gb))], ours, detail, "figures")
    return v
