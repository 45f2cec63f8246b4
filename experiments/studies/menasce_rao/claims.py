"""The §5 remarks on Figs. 4-6 as claims, judged on our numbers: predicted and measured apart.

Predicted is the Monte Carlo of Fig. 2 (the paper's §5 curves come from its validated model,
the whole loop); measured is the median of the live runs. Each claim quotes its sentence
(`paper.FIGURE_QUOTES`) and says how it is judged; the thresholds are here, in one place:

- CONVEX_MIN = 1.2: "non-linear" is read as convex, the time's slope over a curve's last step at
  least 1.2x its slope over the first. Medians of two runs are within about ±2-3% (Table 2's
  ranges), which moves a straight line's slope ratio by about ±15%: 1.2 is above that.
- RATIO_TOL = 0.10: a quoted LX / SPARC20 ratio is reproduced when ours is within 10% of it,
  about the paper's own largest model error (11%).
- GROWTH_MIN = 0.05: the LX / SPARC20 ratio "increases" with N when it is at least 5% larger at
  the largest N than at the smallest (the paper's grows 9.4%, 2.65 -> 2.9; a ratio of two
  medians moves by about ±4%).
- RELATIVE_MIN = 0.05: slower workstations suffer a bigger *relative* impact when LX's time
  grows by a factor at least 5% larger than SPARC20's over the same sweep.
- DRAMATIC_MIN = 1.5: the "dramatic decrease" with Z is a fall of at least 1.5x from the
  smallest Z to the largest, falling at every step.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from experiments.reporting.claims import Check, Claim, Verdict, verdict_words
from experiments.studies.menasce_rao.figures import PointResult
from experiments.studies.menasce_rao.paper import CLASSES, FIG5_RATIO_N1, FIG5_RATIO_N5, FIGURE_QUOTES
from experiments.studies.menasce_rao.sweeps import Point, curve, point

CONVEX_MIN = 1.2
RATIO_TOL = 0.10
GROWTH_MIN = 0.05
RELATIVE_MIN = 0.05
DRAMATIC_MIN = 1.5

SLOW, FAST = "LX", "SPARC20"


@dataclass(frozen=True)
class Remark:
    """One §5/§6 sentence of the paper, judged twice with the shared vocabulary: on the model and live.

    `predicted` and `measured` are `experiments.reporting.claims.Claim`s (None: a point they need was
    not predicted / not run live); the verdict is the measured one, the model's being shown beside it.
    """

    key: str
    sentence: str               # the paper's, quoted
    paper: str                  # the paper's number, or "-" where the sentence has none
    test: str                   # how it is judged
    predicted: Claim | None
    measured: Claim | None

    @property
    def verdict(self) -> Verdict:
        return self.measured.verdict if self.measured is not None else Verdict.NO_DATA

    @property
    def words(self) -> str:
        if self.measured is not None:
            return str(self.measured.verdict)
        if self.predicted is not None:
            return f"not measured (model: {self.predicted.verdict})"
        return "not run"


def judged(ours: str, checks: Sequence[Check]) -> Claim:
    """Our number(s) and the checks behind them, as one side's claim. The checks carry no interval (medians of
    a few live runs, a Monte Carlo mean), so by the shared rule each is unresolved; the words keep which side
    each point estimate falls on."""
    return Claim("", tuple(checks), words=verdict_words(checks), ours=ours)


Times = Callable[[Point], "float | None"]


def _curve(times: Times, figure: int, kind: str) -> list[tuple[float, float]] | None:
    out = []
    for x, p in curve(figure, kind):
        t = times(p)
        if t is None:
            return None
        out.append((x, t))
    return out


def _curves(times: Times, figure: int) -> dict[str, list[tuple[float, float]]] | None:
    out = {kind: _curve(times, figure, kind) for kind in CLASSES}
    return None if any(c is None for c in out.values()) else out  # type: ignore[return-value]


def _slope_ratio(c: Sequence[tuple[float, float]]) -> float:
    """Slope over the last step / slope over the first; nan when the first step does not rise."""
    (x0, t0), (x1, t1) = c[0], c[1]
    (y0, s0), (y1, s1) = c[-2], c[-1]
    first = (t1 - t0) / (x1 - x0)
    return ((s1 - s0) / (y1 - y0)) / first if first > 0 else math.nan


def _convex(times: Times, figure: int) -> Claim | None:
    cs = _curves(times, figure)
    if cs is None:
        return None
    ratios = {k: _slope_ratio(c) for k, c in cs.items()}
    # a flat first step has no slope ratio: convexity cannot be read, the check has no figure
    return judged(", ".join(f"{k} {r:.2f}x" if not math.isnan(r) else f"{k}: first step flat" for k, r in ratios.items()),
                  [Check(k, r - CONVEX_MIN) for k, r in ratios.items()])


def _absolute_impact(times: Times) -> Claim | None:
    cs = _curves(times, 4)
    if cs is None:
        return None
    rise = {k: c[-1][1] - c[0][1] for k, c in cs.items()}
    return judged(", ".join(f"{k} +{r:.1f} s" for k, r in rise.items()),
                  [Check(f"{a} above {b}", rise[a] - rise[b]) for a, b in zip(CLASSES, list(CLASSES)[1:])])


def _relative_impact(times: Times) -> Claim | None:
    cs = _curves(times, 4)
    if cs is None:
        return None
    grow = {k: c[-1][1] / c[0][1] for k, c in cs.items()}
    return judged(", ".join(f"{k} {g:.2f}x" for k, g in grow.items()),
                  [Check(f"{SLOW} over {FAST}", grow[SLOW] - (1 + RELATIVE_MIN) * grow[FAST])])


def _ratio_at(times: Times, n: int) -> float | None:
    """LX / SPARC20 at N = n (the other knobs at the baseline); None where either is missing."""
    slow, fast = times(point(SLOW, "N", n)), times(point(FAST, "N", n))
    return None if slow is None or fast is None else slow / fast


def _ratio_claim(times: Times, n: int, paper: float) -> Claim | None:
    r = _ratio_at(times, n)
    if r is None:
        return None
    return judged(f"{r:.2f}x ({(r - paper) / paper:+.0%})", [Check(f"N = {n}", RATIO_TOL * paper - abs(r - paper))])


def _growing(times: Times) -> Claim | None:
    lo, hi = min(int(x) for x, _ in curve(5, SLOW)), max(int(x) for x, _ in curve(5, SLOW))
    a, b = _ratio_at(times, lo), _ratio_at(times, hi)
    if a is None or b is None:
        return None
    return judged(f"{a:.2f}x at N = {lo}, {b:.2f}x at N = {hi} ({b / a - 1:+.1%})",
                  [Check(f"N = {lo} to {hi}", b / a - 1 - GROWTH_MIN)])


def _dramatic(times: Times) -> Claim | None:
    cs = _curves(times, 6)
    if cs is None:
        return None
    fall = {k: c[0][1] / c[-1][1] for k, c in cs.items()}
    every_step = all(b < a for c in cs.values() for (_x, a), (_y, b) in zip(c, c[1:]))
    steps = [Check(f"{k} from Z = {x:g} to {y:g}", a - b) for k, c in cs.items() for (x, a), (y, b) in zip(c, c[1:])]
    return judged(", ".join(f"{k} {f:.2f}x" for k, f in fall.items()) + ("" if every_step else "; not at every step"),
                  steps + [Check(f"{k} overall", f - DRAMATIC_MIN) for k, f in fall.items()])


def section5(results: Sequence[PointResult], chosen: Sequence[int]) -> list[Remark]:
    """The claims of the chosen figures, each judged on the Monte Carlo and on the measured medians."""
    by = {r.point: r for r in results}

    def predicted(p: Point) -> float | None:
        return by[p].prediction.mc_s if p in by else None

    def measured(p: Point) -> float | None:
        return by[p].median_s if p in by else None

    def claim(key: str, paper: str, test: str, judge: Callable[[Times], Claim | None]) -> Remark:
        return Remark(key, FIGURE_QUOTES[key], paper, test, judge(predicted), judge(measured))

    lo, hi = min(int(x) for x, _ in curve(5, SLOW)), max(int(x) for x, _ in curve(5, SLOW))
    out = []
    if 4 in chosen:
        out += [claim("fig4-nonlinear", "-", f"every class's slope over the last step of D >= {CONVEX_MIN:g}x "
                      "that over the first", lambda t: _convex(t, 4)),
                claim("fig4-slower", "-", "in seconds: the time's rise over the D sweep is largest on LX, "
                      "then SPARC5, then SPARC20", _absolute_impact),
                Remark("fig4-slower-relative", FIGURE_QUOTES["fig4-slower"], "-",
                      f"relative: LX's time grows by a factor >= {1 + RELATIVE_MIN:g}x SPARC20's over the D sweep",
                      _relative_impact(predicted), _relative_impact(measured))]
    if 5 in chosen:
        out += [claim("fig5-similar", "-", f"every class's slope over the last step of N >= {CONVEX_MIN:g}x "
                      "that over the first", lambda t: _convex(t, 5)),
                claim("fig5-n5", f"{FIG5_RATIO_N5:g}x", f"LX / SPARC20 at N = 5 within {RATIO_TOL:.0%}",
                      lambda t: _ratio_claim(t, 5, FIG5_RATIO_N5)),
                claim("fig5-n1", f"{FIG5_RATIO_N1:g}x", f"LX / SPARC20 at N = 1 within {RATIO_TOL:.0%}",
                      lambda t: _ratio_claim(t, 1, FIG5_RATIO_N1)),
                claim("fig5-growing", f"{FIG5_RATIO_N1:g}x -> {FIG5_RATIO_N5:g}x "
                      f"({FIG5_RATIO_N5 / FIG5_RATIO_N1 - 1:+.1%})",
                      f"LX / SPARC20 at N = {hi} at least {GROWTH_MIN:.0%} above N = {lo}", _growing)]
    if 6 in chosen:
        out += [claim("fig6-dramatic", "-", f"every class falls at every step of Z, by >= {DRAMATIC_MIN:g}x "
                      "from the smallest Z to the largest", _dramatic)]
    return out
