"""One vocabulary for a paper's claims: `Check`, `Verdict`, `Claim`, and one rule combining them.

A claim is judged on checks. A `Check` says where it is checked, a signed margin
(> 0: the claim holds there: the measured effect on the claimed side of its
threshold), the margin's 95% half-width, the replications behind it and the
test that gave the interval (`Method`). The rule, the same for every paper (issue 47):

- a check HOLDS when its margin's 95% interval lies wholly above 0, FAILS when
  wholly below, and is UNRESOLVED when the interval spans 0. An infinite or
  undefined half-width (one replication, or a study that gives none) is
  UNRESOLVED: a point estimate alone never decides. A figure with no sampling
  noise (an analytic model, an observation by a stated criterion) says so with
  `Method.EXACT` and a zero half-width;
- a claim FAILS if any check fails, HOLDS if every check holds, else it is
  UNRESOLVED; a claim with no checks (or none with a figure) has NO_DATA;
- a claim about a direction is a check on the signed effect, so a reversed
  sign never holds; a claim about a peak needs a peak (`peak`);
- a claim true by construction is BY_CONSTRUCTION: labelled, never counted as evidence.

The interval comes from a stated test at 95%: paired by replication where the
compared policies ran the same arrival streams (same seed and replication),
else Welch's (`experiments.reporting.effects`). There is no "partly": a claim
that holds at 2 of 3 rates and is unresolved at the third is unresolved, and
its words keep the count. What is particular to a paper (its quote, section,
thresholds) rides in `Claim.paper`, not in a new class.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any


class Verdict(Enum):
    """What a claim (or one check of it) came to."""

    HOLDS = "holds"
    FAILS = "fails"
    UNRESOLVED = "unresolved"
    NO_DATA = "no data"
    BY_CONSTRUCTION = "by construction"

    def __str__(self) -> str:
        return self.value


class Method(Enum):
    """The test a check's 95% interval comes from (named Method, not Test, which pytest would collect)."""

    PAIRED = "paired t"  # per-replication differences: the policies ran the same arrival streams
    WELCH = "Welch t"  # independent samples, unequal variances (Welch-Satterthwaite df)
    ONE_SAMPLE = "t"  # one figure's replications (a bound, one policy's level)
    QUADRATURE = "intervals in quadrature"  # separate runs, or only the cells' own t half-widths at hand
    COUNT = "count of cells, each by its own interval"  # a share of cells: resolved ones, the rest spanning it
    EXACT = "exact"  # no sampling noise: an analytic model, or an observation by a stated criterion
    NONE = "none"  # no interval: unresolved whatever the point estimate

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Check:
    """One condition of a claim: `where` it is checked, its margin (> 0: holds), the margin's 95% half-width,
    the replications `n` behind it (0: not stated) and the `test` that gave the interval."""

    where: str
    margin: float
    half_width: float = math.nan
    n: int = 0
    test: Method | None = None

    @property
    def known(self) -> bool:
        """The check has a figure (a missing cell gives a NaN margin)."""
        return math.isfinite(self.margin)

    @property
    def has_interval(self) -> bool:
        return math.isfinite(self.half_width) and self.test is not Method.NONE

    @property
    def verdict(self) -> Verdict:
        """HOLDS / FAILS / UNRESOLVED by the margin's 95% interval; UNRESOLVED without one (n < 2)."""
        if not self.known:
            return Verdict.NO_DATA
        if not self.has_interval:
            return Verdict.UNRESOLVED
        if self.margin - abs(self.half_width) > 0:
            return Verdict.HOLDS
        if self.margin + abs(self.half_width) < 0:
            return Verdict.FAILS
        return Verdict.UNRESOLVED

    @property
    def how(self) -> str:
        """'paired t, n = 4' (the test and the replications), '' when neither is stated."""
        parts = [str(self.test)] if self.test is not None else []
        if self.n:
            parts.append(f"n = {self.n}")
        return ", ".join(parts)

    def text(self) -> str:
        """'at 0.03/s: margin +0.12 ± 0.05 (paired t, n = 4), holds' (or '..., no interval: unresolved')."""
        if not self.known:
            return f"{self.where}: no data"
        body = f"{self.where}: margin {self.margin:+.3g}"
        how = f" ({self.how})" if self.how else ""
        if self.has_interval:
            return f"{body} ± {abs(self.half_width):.2g}{how}, {self.verdict}"
        return f"{body}{how}, {self.verdict} (no interval)"


def exact(where: str, margin: float) -> Check:
    """A check on a figure with no sampling noise (an analytic model, an outright observation): zero half-width."""
    return Check(where, margin, 0.0, test=Method.EXACT)


def combine(checks: Sequence[Check]) -> Verdict:
    """The one rule: FAILS if any check fails, HOLDS if every check holds, else UNRESOLVED; NO_DATA without checks.

    A check without a figure cannot make a claim hold: with some checks known it
    leaves the claim UNRESOLVED (unless another check fails), with none NO_DATA.
    """
    verdicts = [c.verdict for c in checks]
    if not verdicts or all(v is Verdict.NO_DATA for v in verdicts):
        return Verdict.NO_DATA
    if Verdict.FAILS in verdicts:
        return Verdict.FAILS
    if all(v is Verdict.HOLDS for v in verdicts):
        return Verdict.HOLDS
    return Verdict.UNRESOLVED


def peak(steps: Sequence[Check]) -> tuple[Verdict, str]:
    """A claim about a peak, on the steps of a series (step j: value[j+1] - value[j], with its interval).

    A peak is an interior point whose both neighbours are lower, resolved at 95%:
    the step into it holds (rises) and the step out of it fails (falls). An
    interior point is ruled out when a neighbour is resolvably higher. HOLDS if
    some interior point is a resolved peak, FAILS if every interior point is ruled
    out (a resolvably monotone series among them), else UNRESOLVED. Returns the
    verdict and where the peak is (or why there is none).
    """
    if len(steps) < 2:
        return Verdict.NO_DATA, "fewer than three points: no interior point"
    if any(not s.known for s in steps):
        return Verdict.NO_DATA, "a point has no figure"
    v = [s.verdict for s in steps]
    ruled_out = []
    for i in range(1, len(steps)):  # interior point i sits between step i-1 (into it) and step i (out of it)
        if v[i - 1] is Verdict.HOLDS and v[i] is Verdict.FAILS:
            return Verdict.HOLDS, f"peak at point {i + 1} of {len(steps) + 1}"
        if v[i - 1] is Verdict.FAILS or v[i] is Verdict.HOLDS:
            ruled_out.append(i)
    if len(ruled_out) == len(steps) - 1:
        if all(x is Verdict.HOLDS for x in v) or all(x is Verdict.FAILS for x in v):
            return Verdict.FAILS, "resolvably monotone: no peak"
        return Verdict.FAILS, "every interior point has a resolvably higher neighbour"
    return Verdict.UNRESOLVED, "no interior point resolvably above both neighbours"


def count_words(checks: Sequence[Check], what: str = "checks") -> str:
    """The k-of-n count in words: 'holds at 2 of 3 rates' (`what` names a check's unit)."""
    held = sum(c.verdict is Verdict.HOLDS for c in checks)
    return f"holds at {held} of {len(checks)} {what}"


def verdict_words(checks: Sequence[Check], what: str = "checks") -> str:
    """The combined verdict with its k-of-n count: 'holds at 3 of 3 sizes', 'fails: holds at 2 of 3 rates', 'no data'."""
    verdict = combine(checks)
    if verdict is Verdict.NO_DATA:
        return str(verdict)
    count = count_words(checks, what)
    bare = [c for c in checks if c.known and not c.has_interval]
    if bare:
        side = sum(c.margin > 0 for c in bare)
        count += (f"; no interval at {len(bare)}, the point estimate on the claimed side at {side} of them"
                  if len(bare) < len(checks) else
                  f"; no interval: the point estimate on the claimed side at {side} of {len(bare)}")
    return count if verdict is Verdict.HOLDS else f"{verdict}: {count}"


def interval_words(checks: Sequence[Check]) -> str:
    """Which checks had no interval (so they stay unresolved), in plain words; '' when all had one."""
    bare = [c.where for c in checks if c.known and not c.has_interval]
    return f"no 95% interval at {', '.join(bare)}: unresolved there" if bare else ""


@dataclass(frozen=True)
class Claim:
    """A paper's claim judged: what it says, its checks, the one verdict and its words.

    `verdict` is `combine(checks)` unless the claim is true by construction
    (`by_construction=True`, the reason in `words`) or `decided` by a stated rule
    over its checks (`peak`). `paper` holds what is particular to one paper (its
    key, quote, section, thresholds) as that study's own record; the shared fields
    read the same for every paper.
    """

    statement: str
    checks: tuple[Check, ...] = ()
    words: str = ""  # the verdict in a sentence, keeping the k-of-n count
    ours: str = ""  # our number(s), in the claim's terms
    detail: str = ""  # the figures behind the checks (per rate, per step), in words
    by_construction: bool = False
    paper: Any = None  # the study's own record of where the claim comes from (a small frozen dataclass)
    decided: Verdict | None = None  # set by a stated rule over the checks (a peak), else combine(checks)

    @property
    def verdict(self) -> Verdict:
        if self.by_construction:
            return Verdict.BY_CONSTRUCTION
        return self.decided if self.decided is not None else combine(self.checks)

    @property
    def held(self) -> int:
        return sum(c.verdict is Verdict.HOLDS for c in self.checks)

    @property
    def effect(self) -> str:
        """Each check's effect with its 95% interval, test and n: '0.1/s: +0.12 ± 0.05 (paired t, n = 4); ...'."""
        parts = []
        for c in self.checks:
            if not c.known:
                parts.append(f"{c.where}: no data")
                continue
            hw = f" ± {abs(c.half_width):.2g}" if c.has_interval else " (no interval)"
            parts.append(f"{c.where}: {c.margin:+.3g}{hw}" + (f" ({c.how})" if c.how else ""))
        return "; ".join(parts)

    @property
    def interval(self) -> str:
        """Whether every check stands outside its 95% interval, in plain words."""
        if self.by_construction:
            return "not counted: true by construction"
        known = [c for c in self.checks if c.known]
        if not known:
            return "no data"
        bare = [c.where for c in known if not c.has_interval]
        if bare:
            return f"no: no 95% interval at {', '.join(bare)}"
        inside = [c for c in known if c.verdict is Verdict.UNRESOLVED]
        if inside:
            return "no: within the 95% interval at " + "; ".join(
                f"{c.where} (margin {c.margin:+.3g} ± {abs(c.half_width):.2g})" for c in inside)
        return "yes: outside the 95% interval everywhere"


#: The kinds a tally counts, in order; NO_DATA is added only when a claim has it.
COUNTED = (Verdict.HOLDS, Verdict.FAILS, Verdict.UNRESOLVED, Verdict.BY_CONSTRUCTION)


def tally(verdicts: Iterable[Verdict | Claim]) -> dict[Verdict, int]:
    """How many claims came to each verdict, every kind listed (zeros too), in the enum's order."""
    counts = Counter(v.verdict if isinstance(v, Claim) else v for v in verdicts)
    return {v: counts.get(v, 0) for v in Verdict}


def tally_text(counts: Mapping[Verdict, int]) -> str:
    """'3 holds, 1 fails, 2 unresolved, 1 by construction' (and 'n no data' when some claim had none)."""
    kinds = [*COUNTED, *([Verdict.NO_DATA] if counts.get(Verdict.NO_DATA) else [])]
    return ", ".join(f"{counts.get(v, 0)} {v}" for v in kinds)
