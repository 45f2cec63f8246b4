"""How strictly the paper's words are read, the study's record of a claim, its checks, and lookups in the cells table.

A claim is the shared ``experiments.reporting.claims.Claim``: its checks are signed margins
(> 0: the claim holds there) in the claim's own unit, each with its 95% half-width, and its
verdict is the shared rule. Replication r of every policy in a (workload, load) ran the same
stream of jobs (``workload.stream_seed``), so a comparison between policies is paired by
replication (``paired``: the per-replication figures ride in the cells' ``PER_REP`` column);
a cell without them falls back to the cells' own intervals in quadrature. A saturation is an
observation by the stated criterion (10,000 further arrivals), so it decides outright
(``yes_no``, ``Method.EXACT``); an order of point estimates has no interval and stays unresolved. What is
particular to this paper (key, section, quote, reading, the number) is the ``Record`` in
``Claim.paper``.

The claims themselves are in ``claims_sdf`` (§6.1), ``claims_adaptive``
(§6.2, §6.3) and ``claims_dif`` (§6.4, §6.5, §7); ``claims`` runs them all.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from experiments.reporting import effects
from experiments.reporting.claims import Check, Claim, Method, Verdict, exact, verdict_words
from experiments.reporting.effects import Effect

#: The cells' column holding each unsaturated replication's figures ({replication: {figure: value}});
#: kept in memory for the claims, not written to cells.csv.
PER_REP = "per_replication"
REP_FIGURES = ("response_ks", "wait_ks", "run_ks", "partition")


@dataclass(frozen=True)
class Thresholds:
    """How the paper's words are read; each claim's ``reading`` says which one it uses and why."""

    #: "the same": within the precision every cell is run to (the 5% half-width).
    same_rel: float = 0.05
    #: "almost the same": within twice that.
    almost_same_rel: float = 0.10
    #: "considerable" gain, "no improvement", "negligible": a gain of at least / at most the
    #: study's 5% precision, the smallest difference the study can tell from noise.
    considerable: float = 0.05
    #: "almost all the cases", "tends to": at least three quarters.
    almost_all: float = 0.75
    #: "most cases": more than half.
    most: float = 0.5
    #: "considerably reduced": to at most half of what it was.
    considerably_reduced: float = 0.5
    #: "less than half the response time".
    less_than_half: float = 0.5
    #: "not significantly less than four": above 3, closer to four than to SDF-Max 2's two.
    near_four_min: float = 3.0
    #: "very close" partition sizes: within half a processor (jobs get whole processors).
    very_close_procs: float = 0.5
    #: "within 30%" / "typically about 30%": the median over loads at most 1.30 + 0.05 for "about".
    aep2_typical_over_dyn: float = 1.35
    #: "more than 75% worse at medium load (50%)".
    asp2_over_dyn_medium: float = 1.75
    #: DYN-EQUI "fails to make the waiting time zero": waiting at least 5% of its response.
    nonzero_wait_share: float = 0.05
    #: Loads the paper calls "high", "very high", "very low" and "medium".
    high_loads: tuple[float, ...] = (0.7, 0.9)
    very_high: float = 0.9
    very_low: float = 0.1
    medium: float = 0.5
    #: "the general case as is captured by workload WK4" (§6.5); Figures 4-6 show WK4.
    general: str = "WK4"
    #: The workload with poor speedup, and the load from which the paper saw SDF and
    #: SDF-Max 6 saturate on it.
    poor_speedup: str = "WK3"
    paper_saturation_load: float = 0.5


@dataclass(frozen=True)
class Record:
    """The study's own record of a claim (``Claim.paper``): where it comes from, how it is read, the number.

    ``value`` is the single number the answer leads with (a share, a ratio, a worst case), kept in
    claims.csv; the verdict itself comes from the claim's checks by the shared rule.
    """

    key: str
    section: str  # "§6.4" ...
    quote: str  # the paper's sentence(s), verbatim
    reading: str  # how the threshold follows from the sentence
    value: float  # the single number the answer leads with
    value_label: str  # what ``value`` is
    answer: str  # the measured answer in words, with the supporting numbers
    details: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Source:
    """Where a claim comes from and how it is read; the measured half is added by ``result``."""

    key: str
    section: str
    quote: str
    reading: str
    statement: str

    def result(self, value: float, value_label: str, answer: str, checks: Sequence[Check], what: str,
               details: dict[str, float] | None = None) -> Claim:
        """The claim judged on ``checks`` by the shared rule; ``what`` names a check's unit in the k-of-n count."""
        record = Record(self.key, self.section, self.quote, self.reading, value, value_label, answer, details or {})
        return Claim(self.statement, tuple(checks), words=verdict_words(checks, what), ours=answer,
                     detail=not_holding(checks), paper=record)

    def no_data(self, why: str) -> Claim:
        return self.result(math.nan, "", why, (), "checks")


def not_holding(checks: Sequence[Check], most: int | None = None) -> str:
    """The checks that did not hold, each with its margin and interval ('' when all held); ``most``: at most
    that many, then how many more."""
    texts = [c.text() for c in checks if c.verdict is not Verdict.HOLDS]
    if most is not None and len(texts) > most:
        texts = [*texts[:most], f"and {len(texts) - most} more"]
    return "; ".join(texts)


def yes_no(where: str, ok: bool) -> Check:
    """A check on an outright observation (a cell saturated or not, by the stated criterion): margin +1 or -1, exact."""
    return exact(where, 1.0 if ok else -1.0)


def point(where: str, ok: bool) -> Check:
    """A yes/no on point estimates (an order of noisy means): no interval, so it stays unresolved."""
    return Check(where, 1.0 if ok else -1.0, math.nan, test=Method.NONE)


def margin(where: str, value: float, half_width: float = math.nan) -> Check:
    """A check whose margin may be infinite (a saturated cell's ratio): then it decides outright (``yes_no``)."""
    if math.isinf(value):
        return yes_no(f"{where} (saturated)", value > 0)
    return Check(where, value, half_width)


def at_least(where: str, hits: Sequence[Check] | int, total: int, share_min: float, strictly: bool = False) -> Check:
    """A count against a share: at least (or, ``strictly``, more than) ``share_min`` of ``total``.

    ``hits``: one check per cell (each by its own interval), or a count of outright
    observations. The margin is in cells, how many more hits than the fewest that meet
    the share, plus half a cell (counts are whole; the half keeps it off zero); its
    interval spans the cells still unresolved: the claim holds if the resolved hits
    alone meet the share, fails if even every unresolved cell counted cannot.
    """
    need = math.floor(share_min * total + 1e-9) + 1 if strictly else math.ceil(share_min * total - 1e-9)
    if isinstance(hits, int):
        return exact(where, hits - need + 0.5)
    sure = sum(c.verdict is Verdict.HOLDS for c in hits)
    maybe = sum(c.verdict in (Verdict.UNRESOLVED, Verdict.NO_DATA) for c in hits)
    lo, hi = sure - need + 0.5, sure + maybe - need + 0.5
    return Check(f"{where} ({sure} resolved, {maybe} unresolved of {total})", (lo + hi) / 2, (hi - lo) / 2,
                 test=Method.COUNT)


def rel_hw(*rows: pd.Series | None) -> float:
    """The relative 95% half-width of a ratio of cells' means (their relative half-widths in quadrature);
    NaN when a cell is missing or has no finite interval (saturated, one replication)."""
    hws = [float(r.rel_half_width) if r is not None and "rel_half_width" in r else math.nan for r in rows]
    return math.sqrt(sum(h * h for h in hws)) if all(math.isfinite(h) for h in hws) else math.nan


def _series(row: pd.Series, col: str) -> pd.Series | None:
    """A cell's per-replication figures of ``col`` (unsaturated replications), indexed by replication."""
    per = row.get(PER_REP) if PER_REP in row else None
    if not isinstance(per, dict) or not per:
        return None
    return pd.Series({r: v[col] for r, v in per.items()}, dtype=float)


def _own(row: pd.Series, col: str) -> Effect:
    """A cell's mean of ``col`` with the interval the cells table gives (response only), for the fallback."""
    hw = float(row.response_hw_ks) if col == "response_ks" and "response_hw_ks" in row else math.inf
    n = int(row.replications) if "replications" in row else 0
    return Effect(float(row[col]), hw if math.isfinite(hw) else math.inf, n,
                  Method.ONE_SAMPLE if math.isfinite(hw) else Method.NONE)


def paired_effect(f: Callable[[np.ndarray], float], rows: Sequence[pd.Series],
                  col: str | Sequence[str] = "response_ks") -> Effect:
    """f of the cells' means of ``col`` (one column, or one per row), paired by replication (the cells of one
    workload and load share streams); without per-replication figures, the cells' own intervals in quadrature."""
    cols = [col] * len(rows) if isinstance(col, str) else list(col)
    series = [_series(r, c) for r, c in zip(rows, cols)]
    if all(s is not None for s in series):
        return effects.effect(f, series, paired=True)  # type: ignore[arg-type]
    return effects.propagate(f, [_own(r, c) for r, c in zip(rows, cols)])


def paired(where: str, f: Callable[[np.ndarray], float], rows: Sequence[pd.Series],
           col: str | Sequence[str] = "response_ks") -> Check:
    """The check that f(means of ``col``) > 0, paired by replication."""
    return paired_effect(f, rows, col).check(where)


def faster(where: str, a: pd.Series | None, b: pd.Series | None) -> Check | None:
    """The check that R_a < R_b: margin R_b/R_a - 1 (the relative gap), paired by replication.

    A saturated side decides outright (``yes_no``); both saturated or either missing: None, nothing to compare.
    """
    ra, rb = response(a), response(b)
    if math.isnan(ra) or math.isnan(rb) or (math.isinf(ra) and math.isinf(rb)):
        return None
    if math.isinf(ra) or math.isinf(rb):
        return yes_no(f"{where} (saturated)", math.isinf(rb))
    return paired(where, lambda m: m[1] / m[0] - 1.0, [a, b])  # type: ignore[list-item]


def cell(cells: pd.DataFrame, workload: str, load: float, policy: str) -> pd.Series | None:
    """The row of one cell, or None if it was not run."""
    rows = cells[(cells.workload == workload) & (cells.policy == policy) & (abs(cells.load - load) < 1e-9)]
    return None if rows.empty else rows.iloc[0]


def missing(cells: pd.DataFrame, *policies: str, workloads: tuple[str, ...] = (),
            loads: tuple[float, ...] = ()) -> str | None:
    """Why a claim cannot be evaluated ('not run (needs ...)'), or None if everything is there."""
    need = [p for p in policies if p not in set(cells.policy)]
    need += [w for w in workloads if w not in set(cells.workload)]
    need += [pct(x) for x in loads if not any(abs(x - l) < 1e-9 for l in set(cells.load))]
    return f"not run (needs {', '.join(need)})" if need else None


def pairs(cells: pd.DataFrame, a: str, b: str, load_set: Sequence[float] | None = None):
    """(workload, load, row a, row b) for every cell where both policies were run, workload by
    workload, loads in order (`load_set`: only those loads)."""
    for wk in workloads(cells):
        for load in load_set if load_set is not None else loads(cells):
            ra, rb = cell(cells, wk, load, a), cell(cells, wk, load, b)
            if ra is not None and rb is not None:
                yield wk, load, ra, rb


def response(row: pd.Series | None) -> float:
    """Mean response (ks); inf when saturated, NaN when the cell was not run."""
    if row is None:
        return math.nan
    return math.inf if bool(row.saturated) else float(row.response_ks)


def ratio(cells: pd.DataFrame, wk: str, load: float, pol: str, base: str) -> float:
    """R_pol / R_base in one (workload, load); inf if pol saturated, NaN if either is missing."""
    a, b = response(cell(cells, wk, load, pol)), response(cell(cells, wk, load, base))
    if math.isnan(a) or math.isnan(b):
        return math.nan
    if math.isinf(a):
        return math.inf
    return a / b


def workloads(cells: pd.DataFrame) -> list[str]:
    return sorted(set(cells.workload))


def loads(cells: pd.DataFrame) -> list[float]:
    return sorted(set(cells.load))


def pct(load: float) -> str:
    return f"{round(load * 100)}%"


def share(hits: int, total: int) -> float:
    return hits / total if total else math.nan
