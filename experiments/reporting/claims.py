"""One vocabulary for a paper's claims: `Check`, `Verdict`, `Claim`, and one rule combining them.

A claim is judged on checks. A `Check` says where it is checked, a signed margin
(> 0: the claim holds there) and the margin's 95% half-width (NaN when the study
has no interval). The rule, the same for every paper (issue 47):

- a check HOLDS when its margin's interval lies wholly above 0, FAILS when wholly
  below, and is UNRESOLVED when the interval spans 0; with no interval the point
  estimate decides (above 0 holds, else fails) and the check says it had none;
- a claim FAILS if any check fails, HOLDS if every check holds, else it is
  UNRESOLVED; a claim with no checks (or none with a figure) has NO_DATA;
- a claim true by construction is BY_CONSTRUCTION: labelled, never counted as evidence.

There is no "partly": a claim that holds at 2 of 3 rates and fails at the third
fails, and its words keep the count ("holds at 2 of 3 rates"). What is particular
to a paper (its quote, section, thresholds) rides in `Claim.paper`, not in a new class.
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


@dataclass(frozen=True)
class Check:
    """One condition of a claim: `where` it is checked, its margin (> 0: holds) and the margin's 95% half-width."""

    where: str
    margin: float
    half_width: float = math.nan

    @property
    def known(self) -> bool:
        """The check has a figure (a missing cell gives a NaN margin)."""
        return math.isfinite(self.margin)

    @property
    def has_interval(self) -> bool:
        return math.isfinite(self.half_width)

    @property
    def verdict(self) -> Verdict:
        """HOLDS / FAILS / UNRESOLVED by the margin's interval; by the point estimate when there is none."""
        if not self.known:
            return Verdict.NO_DATA
        if not self.has_interval:
            return Verdict.HOLDS if self.margin > 0 else Verdict.FAILS
        if self.margin - abs(self.half_width) > 0:
            return Verdict.HOLDS
        if self.margin + abs(self.half_width) < 0:
            return Verdict.FAILS
        return Verdict.UNRESOLVED

    def text(self) -> str:
        """'at 0.03/s: margin +0.12 ± 0.05, holds' (or '..., no interval: point estimate')."""
        if not self.known:
            return f"{self.where}: no data"
        body = f"{self.where}: margin {self.margin:+.3g}"
        if self.has_interval:
            return f"{body} ± {abs(self.half_width):.2g}, {self.verdict}"
        return f"{body}, {self.verdict} (no interval: point estimate)"


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
    return count if verdict is Verdict.HOLDS else f"{verdict}: {count}"


def interval_words(checks: Sequence[Check]) -> str:
    """Which checks had no interval (so their point estimate decided), in plain words; '' when all had one."""
    bare = [c.where for c in checks if c.known and not c.has_interval]
    return f"no 95% interval at {', '.join(bare)}: the point estimate decides there" if bare else ""


@dataclass(frozen=True)
class Claim:
    """A paper's claim judged: what it says, its checks, the one verdict and its words.

    `verdict` is `combine(checks)` unless the claim is true by construction
    (`by_construction=True`) or set by `judged` from a rule a study states.
    `paper` holds what is particular to one paper (its key, quote, section,
    thresholds) as that study's own record; the shared fields read the same for every paper.
    """

    statement: str
    checks: tuple[Check, ...] = ()
    words: str = ""  # the verdict in a sentence, keeping the k-of-n count
    ours: str = ""  # our number(s), in the claim's terms
    detail: str = ""  # the figures behind the checks (per rate, per step), in words
    by_construction: bool = False
    paper: Any = None  # the study's own record of where the claim comes from (a small frozen dataclass)

    @property
    def verdict(self) -> Verdict:
        return Verdict.BY_CONSTRUCTION if self.by_construction else combine(self.checks)

    @property
    def held(self) -> int:
        return sum(c.verdict is Verdict.HOLDS for c in self.checks)

    @property
    def interval(self) -> str:
        """Whether every check stands outside its 95% interval, in plain words."""
        known = [c for c in self.checks if c.known]
        if not known:
            return "no data"
        bare = [c.where for c in known if not c.has_interval]
        if bare:
            return f"not known: no 95% interval at {', '.join(bare)}"
        inside = [c for c in known if c.verdict is Verdict.UNRESOLVED]
        if inside:
            return "no: within the 95% interval at " + "; ".join(
                f"{c.where} (margin {c.margin:+.3g} ± {abs(c.half_width):.2g})" for c in inside)
        return "yes: outside the 95% interval everywhere"


def tally(verdicts: Iterable[Verdict | Claim]) -> dict[Verdict, int]:
    """How many claims came to each verdict, every kind listed (zeros too), in the enum's order."""
    counts = Counter(v.verdict if isinstance(v, Claim) else v for v in verdicts)
    return {v: counts.get(v, 0) for v in Verdict}


def tally_text(counts: Mapping[Verdict, int]) -> str:
    """'3 holds, 1 fails, 2 unresolved, 0 no data, 1 by construction'."""
    return ", ".join(f"{n} {v}" for v, n in counts.items())
