"""The §6 sentences about the four placement policies as claims, judged on the comparison's numbers
(predicted: the Monte Carlo at the pinned placement; measured: the median of the live runs).

A policy *beats* another when its time is at most (1 - BEAT) of the other's. BEAT = 0.05: two
runs of one row of Table 2 differed by up to ±4.7%, so a smaller gap is not told apart from noise.
Each claim lists the cases it is judged on, and holds only if it holds in every one of them:
- PVM default "very inefficient": every other policy beats it, in every case;
- workstation speed "poor when the initial tasks have smaller computational demands": on
  small-then-large without owners, parallel load/speed (the same speed order, with the demands)
  beats it (the sentence is about demands; with owners on the fast hosts neither sees the load);
- parallel load/speed, the largest task to the fastest host: it beats workstation speed on every
  graph without owners (the text offers it as the better of the two, for the demands);
- workstation load/speed "an improvement over the previous policy in that the current load ... is
  taken into account": it beats parallel load/speed in every case with owners.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from experiments.reporting.claims import Check, Claim
from experiments.studies.menasce_rao.claims import Remark, judged
from experiments.studies.menasce_rao.paper import POLICY_QUOTES
from experiments.studies.menasce_rao.placements import Case, CaseResult

BEAT = 0.05
SMALL_FIRST = "small-then-large"

Times = Callable[[Case], "float | None"]


def _beats(times: Times, winner: str, loser: str, cases: Sequence[tuple[str, bool]]) -> Claim | None:
    """`winner` at most (1 - BEAT) x `loser` in each (graph, owners) case; value: loser / winner."""
    parts, checks = [], []
    for graph, owners in cases:
        w, l_ = times(Case(graph, winner, owners)), times(Case(graph, loser, owners))
        if w is None or l_ is None:
            return None
        where = f"{graph}{' + owners' if owners else ''}"
        parts.append(f"{where}: {l_ / w:.2f}x")
        checks.append(Check(where, (1 - BEAT) * l_ - w))
    return judged("; ".join(parts), checks) if parts else None


def _beaten_by_all(times: Times, loser: str, others: Sequence[str],
                   cases: Sequence[tuple[str, bool]]) -> Claim | None:
    """Every one of `others` beats `loser` in every case; value: loser / the closest other."""
    parts, checks = [], []
    for graph, owners in cases:
        lt = times(Case(graph, loser, owners))
        got = [times(Case(graph, o, owners)) for o in others]
        if lt is None or any(t is None for t in got):
            return None
        worst = max(t for t in got if t is not None)
        where = f"{graph}{' + owners' if owners else ''}"
        parts.append(f"{where}: {lt / worst:.2f}x")
        checks.append(Check(where, (1 - BEAT) * lt - worst))
    return judged("; ".join(parts), checks) if parts else None


def section6(results: Sequence[CaseResult]) -> list[Remark]:
    by = {r.case: r for r in results}
    graphs = sorted({c.graph for c in by}, key=lambda g: (g == SMALL_FIRST, g))
    every = [(g, o) for g in graphs for o in (False, True)]
    loaded = [(g, True) for g in graphs]
    bare = [(g, False) for g in graphs]
    small = [(SMALL_FIRST, False)] if SMALL_FIRST in graphs else []

    def predicted(c: Case) -> float | None:
        return by[c].prediction.mc_s if c in by else None

    def measured(c: Case) -> float | None:
        return by[c].median_s if c in by else None

    def claim(key: str, test: str, judge: Callable[[Times], Claim | None]) -> Remark:
        return Remark(key, POLICY_QUOTES[key], "-", test, judge(predicted), judge(measured))

    others = ("workstation-speed", "parallel-load-speed", "workstation-load-speed")
    pct = f"{BEAT:.0%}"
    out = [claim("pvm-default", f"each of the other three at least {pct} faster than PVM default, in every case "
                 "(value: PVM / the slowest other)", lambda t: _beaten_by_all(t, "pvm-default", others, every))]
    if small:
        out.append(claim("workstation-speed", f"on {SMALL_FIRST} without owners, parallel load/speed at least {pct} faster "
                         "(value: workstation speed / parallel load/speed)",
                         lambda t: _beats(t, "parallel-load-speed", "workstation-speed", small)))
    out += [claim("parallel-load-speed", f"at least {pct} faster than workstation speed on every graph without "
                  "owners (value: workstation speed / parallel load/speed)",
                  lambda t: _beats(t, "parallel-load-speed", "workstation-speed", bare)),
            claim("workstation-load-speed", f"at least {pct} faster than parallel load/speed in every case with "
                  "owners (value: parallel / workstation load/speed)",
                  lambda t: _beats(t, "workstation-load-speed", "parallel-load-speed", loaded))]
    return out
