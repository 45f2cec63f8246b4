"""Verdicts of a paper's claims on a run's cells and, where known, its replications.

Every kind reduces to checks (`experiments.reporting.claims.Check`): a signed
effect on the claimed side of its threshold (positive when the claim holds
there) with its 95% interval, the replications behind it and the test that gave
the interval; the claim's verdict is the one rule of
`experiments.reporting.claims` (holds / fails / unresolved / no data / by
construction), and its words keep the k-of-n count.

With the run's replications (`reps`: one row per policy, rate and replication,
`run_stats.summarize`'s columns) each effect is computed by
`experiments.reporting.effects`: paired by replication, since one run's policies
and rates all ran the stream of (seed, replication) (`experiments.arrivals`:
common random numbers), so what the stream drew cancels from a difference.
Without them (a cells table alone) the cells' own t half-widths are added in
quadrature, first order for a ratio (`Method.QUADRATURE`): wider, never decisive
where pairing is not.

A direction is a signed effect, so a reversed sign never holds. A peak needs
an interior point resolvably above both neighbours (`claims.peak`). A claim
that compares a policy against one whose figure is 0 in every replication at
every rate (Folding's synchronisation delay: it never holds a partition) is
true by construction: labelled, not counted.

"about x" holds when ours is within `tolerance` of x (default 0.04, i.e. 4
percentage points of a relative gap): half the smallest step the paper reads
as a real difference between two of its magnitudes (17% with constant demand
against 25% with exponential demand, §3.2), so "about 17%" and "about 25%"
cannot both hold.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from experiments.reporting import effects
from experiments.reporting.claims import Check, Claim, Method, Verdict, interval_words, peak, verdict_words
from experiments.reporting.effects import Effect

#: A claim's metric -> the cells-table statistic it reads.
CLAIM_STAT = {"response": "response", "wait": "wait", "execution": "execution",
              "mean_procs": "mean_procs", "preemptions": "preemptions", "sync_delay": "sync_delay"}

#: The name the tests and the summary have used for an effect.
Estimate = Effect


@dataclass(frozen=True)
class Run:
    """A run's figures: its cells table and, when known, its replications (paired when they share streams)."""

    cells: pd.DataFrame
    reps: pd.DataFrame | None = None
    paired: bool = True

    def series(self, policy: str, rate: float, stat: str) -> pd.Series | None:
        """One cell's per-replication figures, indexed by replication (None without replications)."""
        if self.reps is None or stat not in self.reps:
            return None
        r = self.reps
        rows = r[(r.policy == policy) & np.isclose(r.rate.astype(float), rate, rtol=1e-9, atol=0)]
        if rows.empty:
            return None
        return pd.Series(rows[stat].astype(float).to_numpy(), index=rows.replication.to_numpy())

    def cell(self, policy: str, rate: float, stat: str) -> Effect:
        """The cell's mean of `stat` and its t half-width from the cells table (inf when it has none)."""
        cells = self.cells
        if stat not in cells:
            return Effect(math.nan)
        rows = cells[(cells.policy == policy) & np.isclose(cells.rate.astype(float), rate, rtol=1e-9, atol=0)]
        if rows.empty or pd.isna(rows[stat].iloc[0]):
            return Effect(math.nan)
        ci = rows[f"{stat}_ci"].iloc[0] if f"{stat}_ci" in rows else math.nan
        n = int(rows["replications"].iloc[0]) if "replications" in rows else 0
        known = pd.notna(ci) and math.isfinite(float(ci))
        return Effect(float(rows[stat].iloc[0]), float(ci) if known else math.inf, n,
                      Method.ONE_SAMPLE if known else Method.NONE)

    def effect(self, f: Callable[[np.ndarray], float], keys: Sequence[tuple[str, float, str]]) -> Effect:
        """f of the cells' means with its interval: paired over replications when known, else the cells' in quadrature."""
        series = [self.series(*k) for k in keys]
        if all(s is not None for s in series):
            return effects.effect(f, series, paired=self.paired)  # type: ignore[arg-type]
        return effects.propagate(f, [self.cell(*k) for k in keys])


def _as_run(cells: pd.DataFrame | Run, reps: pd.DataFrame | None = None) -> Run:
    return cells if isinstance(cells, Run) else Run(cells, reps)


def _check(where: str, e: Effect) -> Check:
    return e.check(where)


# ---- reading cells -----------------------------------------------------------------------------

def rate_label(rate: float) -> str:
    return f"{rate:g}/s"


def value_at(cells: pd.DataFrame | Run, policy: str, rate: float, stat: str) -> Effect:
    """The cell's mean of `stat` and its half-width: from the replications when known, else the cells table."""
    run = _as_run(cells)
    s = run.series(policy, rate, stat)
    return effects.mean(s) if s is not None else run.cell(policy, rate, stat)


def _gap_fn(claim: Mapping[str, Any]) -> Callable[[float, float], float]:
    """(lower, than) -> the claim's gap: than - lower (absolute), than/lower - 1 (increase), 1 - lower/than."""
    kind = claim.get("gap", "relative")
    if kind == "absolute":
        return lambda lo, hi: hi - lo
    if kind == "increase":
        return lambda lo, hi: hi / lo - 1.0 if lo != 0 else math.nan
    return lambda lo, hi: 1.0 - lo / hi if hi != 0 else math.nan


def gap_at(cells: pd.DataFrame | Run, claim: Mapping[str, Any], rate: float) -> Effect:
    """How far `lower` is below `than` at `rate`: (than - lower)/than (gap = relative), than/lower - 1
    (gap = increase: how much higher `than` is, as the paper's "increase in the execution time"), or
    than - lower in the metric's unit (gap = absolute); paired by replication when the run has them."""
    run, stat, gap = _as_run(cells), CLAIM_STAT[claim["metric"]], _gap_fn(claim)
    return run.effect(lambda m: gap(m[0], m[1]), [(claim["lower"], rate, stat), (claim["than"], rate, stat)])


def _zero_side(run: Run, claim: Mapping[str, Any], rates: Sequence[float]) -> str | None:
    """The policy of the two whose figure is 0 in every replication at every rate (None if neither):
    a comparison against it is decided by construction, not measured."""
    stat = CLAIM_STAT[claim["metric"]]
    for side in ("lower", "than"):
        cells = [run.cell(claim[side], r, stat) for r in rates]
        if cells and all(c.known and c.value == 0 and c.half_width == 0 and c.n >= 2 for c in cells):
            return str(claim[side])
    return None


def _by_construction(claim: Mapping[str, Any], zero: str, ours: str = "", detail: str = "") -> Claim:
    other = claim["than"] if zero == claim["lower"] else claim["lower"]
    why = claim.get("by_construction") or (
        f"{zero}'s {claim['metric']} is 0 in every replication at every rate, so the claim reduces to "
        f"{other}'s being above 0")
    return Claim(claim.get("text", ""), words=f"by construction (not counted): {why}", ours=ours, detail=detail,
                 by_construction=True)


# ---- formatting --------------------------------------------------------------------------------

def _fmt(x: float, claim: Mapping[str, Any], *, gap: bool = True) -> str:
    if not math.isfinite(x):
        return "n/a"
    if gap and claim.get("gap", "relative") != "absolute":
        return f"{x:.0%}"
    return f"{x:.3g}"


def _pm(e: Effect, claim: Mapping[str, Any], *, gap: bool = True) -> str:
    body = _fmt(e.value, claim, gap=gap)
    return body if not math.isfinite(e.half_width) else f"{body} ± {_fmt(e.half_width, claim, gap=gap)}"


def _tests(checks: Sequence[Check]) -> str:
    """The tests and replications behind the checks: 'paired t, n = 4' (or 'paired t, n = 3-4')."""
    known = [c for c in checks if c.known]
    tests = sorted({str(c.test) for c in known if c.test is not None})
    ns = sorted({c.n for c in known if c.n})
    if not tests and not ns:
        return ""
    n = "" if not ns else f"n = {ns[0]}" if len(ns) == 1 else f"n = {ns[0]}-{ns[-1]}"
    return ", ".join([*tests, *([n] if n else [])])


def _verdict(checks: Sequence[Check], ours: str, detail: str, what: str, statement: str = "") -> Claim:
    """The claim by the one rule, its words keeping the k-of-n count (`what` names a check's unit, e.g. 'rates'),
    its detail the test and replications behind the intervals."""
    claim = Claim(statement, tuple(checks), ours=ours, detail=detail)
    missing = [c.where for c in checks if not c.known]
    verdict = claim.verdict
    if verdict is Verdict.NO_DATA:
        return Claim(statement, tuple(checks), words="no data")
    words = verdict_words(checks, what)
    failed = [c.where for c in checks if c.verdict is Verdict.FAILS]
    open_ = [c.where for c in checks if c.verdict is Verdict.UNRESOLVED and c.has_interval]
    if failed and len(failed) < len(checks):
        words += f"; not at {', '.join(failed)}"
    if open_ and verdict is not Verdict.HOLDS:
        words += f"; within the 95% interval at {', '.join(open_)}"
    if missing:
        words += f" (no data at {', '.join(missing)})"
    if bare := interval_words(checks):
        words += f" ({bare})"
    how = _tests(checks)
    return Claim(statement, tuple(checks), words=words, ours=ours,
                 detail=f"{detail} [{how}]" if how and detail else detail)


def _span(values: Sequence[float]) -> str:
    """'9–21%' (or '12%' for one value), in whole percent."""
    vals = sorted(float(v) * 100 for v in values)
    lo, hi = f"{vals[0]:.0f}", f"{vals[-1]:.0f}"
    return f"{lo}%" if lo == hi else f"{lo}–{hi}%"


# ---- the kinds ---------------------------------------------------------------------------------

def judge(claim: Mapping[str, Any], cells: pd.DataFrame | Run, all_rates: Sequence[float],
          reps: pd.DataFrame | None = None) -> Claim:
    """One claim (a config `[[claim]]` as a dict) judged on one run: its cells and, when given, its replications."""
    if claim.get("metric") not in CLAIM_STAT:
        raise ValueError(f"unknown metric {claim.get('metric')!r}")
    run = cells if isinstance(cells, Run) else Run(cells, reps)
    rates = sorted(float(r) for r in (claim.get("rates") or all_rates))
    kind = claim.get("kind", "below")
    if kind in ("below", "gap_grows"):
        zero = _zero_side(run, claim, rates)
        if zero is not None:
            measured = _below(claim, run, rates) if kind == "below" else _gap_grows(claim, run, rates)
            return _by_construction(claim, zero, measured.ours, measured.detail)
    if kind == "below":
        return _below(claim, run, rates)
    if kind == "gap_grows":
        return _gap_grows(claim, run, rates)
    if kind == "peaks":
        return _peaks(claim, run, rates)
    if kind == "bound":
        return _bound(claim, run, rates)
    raise ValueError(f"unknown kind {kind!r}")


def _below(claim: Mapping[str, Any], run: Run, rates: Sequence[float]) -> Claim:
    """lower below than at every rate; with a magnitude, by at least / up to / about x.

    at_least x: the gap is at least x at every rate. up_to x: the gap is
    positive at every rate and its largest value is at most x (the paper's
    "maximum difference ... approximately x" read as a ceiling). about x:
    positive at every rate and the largest gap within `tolerance` of x.
    """
    gaps = {r: gap_at(run, claim, r) for r in rates}
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
        checks = [g.check(rate_label(r), threshold=x) for r, g in gaps.items()]
        lowest = min(known.values(), key=lambda g: g.value)
        ours = f"smallest gap {_fmt(lowest.value, claim)} (at least {_fmt(x, claim)} asked)"
    elif claim.get("up_to") is not None:
        x = float(claim["up_to"])
        checks += [top.check(f"largest gap at {rate_label(top_rate)} vs {_fmt(x, claim)}", sign=-1.0, threshold=x)]
        ours = largest
    elif claim.get("about") is not None:
        x, tol = float(claim["about"]), float(claim.get("tolerance", 0.04))
        checks += [Check(f"largest gap at {rate_label(top_rate)} within {_fmt(tol, claim)} of {_fmt(x, claim)}",
                         tol - abs(top.value - x), top.half_width, top.n, top.test)]
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


def _gap_grows(claim: Mapping[str, Any], run: Run, rates: Sequence[float]) -> Claim:
    """The gap (than - lower) increases from each rate to the next (every step, not only end to end);
    each step's change is paired by replication across both policies and both rates."""
    stat, gap = CLAIM_STAT[claim["metric"]], _gap_fn(claim)
    lo, hi = claim["lower"], claim["than"]
    gaps = [gap_at(run, claim, r) for r in rates]
    checks = [_check(f"{rate_label(a)} → {rate_label(b)}",
                     run.effect(lambda m: gap(m[2], m[3]) - gap(m[0], m[1]),
                                [(lo, a, stat), (hi, a, stat), (lo, b, stat), (hi, b, stat)]))
              for a, b in zip(rates, rates[1:])]
    ours = " → ".join(_fmt(g.value, claim) for g in gaps)
    detail = ", ".join(f"{rate_label(r)}: {_pm(g, claim)}" for r, g in zip(rates, gaps))
    return _verdict(checks, f"gap {ours}", detail, "steps", claim.get("text", ""))


def _peaks(claim: Mapping[str, Any], run: Run, rates: Sequence[float]) -> Claim:
    """`policy`'s metric peaks inside the range: an interior rate resolvably above both neighbours
    (`claims.peak`); each step between neighbouring rates is paired by replication."""
    stat, pol = CLAIM_STAT[claim["metric"]], claim["policy"]
    values = {r: value_at(run, pol, r, stat) for r in rates}
    detail = ", ".join(f"{rate_label(r)}: {_pm(v, claim, gap=False)}" for r, v in values.items())
    if len(rates) < 3 or not all(v.known for v in values.values()):
        return _verdict([Check("inner rates", math.nan)], "", detail, "steps", claim.get("text", ""))
    checks = [_check(f"{rate_label(a)} → {rate_label(b)}",
                     run.effect(lambda m: m[1] - m[0], [(pol, a, stat), (pol, b, stat)]))
              for a, b in zip(rates, rates[1:])]
    verdict, where = peak(checks)
    inner = {r: values[r] for r in rates[1:-1]}
    top = max(inner, key=lambda r: inner[r].value)
    ours = (f"highest inside the range {_fmt(inner[top].value, claim, gap=False)} at {rate_label(top)}; "
            f"ends {_fmt(values[rates[0]].value, claim, gap=False)}, {_fmt(values[rates[-1]].value, claim, gap=False)}")
    base = _verdict(checks, ours, detail, "steps", claim.get("text", ""))
    steps = "; ".join(f"{c.where} {c.verdict if c.verdict is not Verdict.UNRESOLVED else 'unresolved'}"
                      .replace(" holds", " rises").replace(" fails", " falls") for c in checks)
    return replace(base, decided=verdict, words=f"{verdict}: {where} (steps: {steps})")


def _bound(claim: Mapping[str, Any], run: Run, rates: Sequence[float]) -> Claim:
    """`policy`'s metric below `under` (or above `over`) at every rate."""
    stat = CLAIM_STAT[claim["metric"]]
    values = {r: value_at(run, claim["policy"], r, stat) for r in rates}
    known = [v.value for v in values.values() if v.known]
    if claim.get("under") is not None:
        b = float(claim["under"])
        checks = [v.check(rate_label(r), sign=-1.0, threshold=b) for r, v in values.items()]
        ours = f"at most {max(known):.3g} (bound {b:g})" if known else ""
    else:
        b = float(claim["over"])
        checks = [v.check(rate_label(r), threshold=b) for r, v in values.items()]
        ours = f"at least {min(known):.3g} (bound {b:g})" if known else ""
    detail = ", ".join(f"{rate_label(r)}: {_pm(v, claim, gap=False)}" for r, v in values.items())
    return _verdict(checks, ours, detail, "rates", claim.get("text", ""))


# ---- across figures ----------------------------------------------------------------------------

def largest_gap(claim: Mapping[str, Any], cells: pd.DataFrame | Run, rates: Sequence[float]) -> tuple[float, Effect]:
    """The rate where `lower` is farthest below `than`, and that gap (NaN when no rate has data)."""
    gaps = {float(r): gap_at(cells, claim, float(r)) for r in rates}
    known = {r: g for r, g in gaps.items() if g.known}
    if not known:
        return math.nan, Effect(math.nan)
    r = max(known, key=lambda k: known[k].value)
    return r, known[r]


def judge_across(claim: Mapping[str, Any], figures: Mapping[str, pd.DataFrame | Run],
                 rates: Mapping[str, Sequence[float]]) -> Claim:
    """A claim between two figures: `lower`'s gain over `than` is larger in figure `larger` than in `smaller`.

    The paper compares its figures by their maximum improvements ("maximum 25%
    ... better than the improvement (maximum 17%)", §3.2), so each figure is
    reduced to its largest gap of `lower` under `than` over its own rates. The
    claim is about directions: the gain on the claimed side in both figures (a
    reversed sign never holds) and its change from `smaller` to `larger` in the
    claimed direction, with an interval on the change (the two figures are
    separate runs: their intervals add in quadrature).
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
    change = effects.propagate(lambda m: m[0] - m[1], [ga, gb])
    detail = f"{a}: {_pm(ga, claim)}; {b}: {_pm(gb, claim)}; change {b} → {a}: {_pm(change, claim)}"
    checks = [_check(f"{claim['lower']}'s gain in {a}", ga), _check(f"{claim['lower']}'s gain in {b}", gb),
              _check(f"{a} above {b}", change)]
    return _verdict(checks, ours, detail, "conditions", claim.get("text", ""))
