"""The paper's claims, each answered from the measured cells.

Every number in the table is computed here from the cells table (the same
rows written to cells.csv); nothing is typed in.  The thresholds that turn a
number into a verdict are the paper's own words made precise, and they are
all in ``Thresholds`` so a reader sees in one place how strict we are.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd


@dataclass(frozen=True)
class Thresholds:
    """How the paper's words are read."""

    #: "ASP and AP1 have almost the same response time": within 10%.
    asp_ap1_rel: float = 0.10
    #: "AEP(2) ... within 30% of DYN-EQUI" (elsewhere "typically about 30%").
    aep2_over_dyn: float = 1.30
    #: "ASP(2) ... more than 75% worse at medium load (50%)".
    asp2_over_dyn_medium: float = 1.75
    #: "AEP correctly decides ... in almost all the cases": at least this share.
    almost_all: float = 0.75
    #: Loads the paper calls "high".
    high_loads: tuple[float, ...] = (0.7, 0.9)
    #: The workload with poor speedup, and the load from which the paper saw
    #: SDF and SDF-Max 6 saturate on it.
    poor_speedup: str = "WK3"
    paper_saturation_load: float = 0.5
    #: "the gain of AEP(2) is considerable at high loads": at least 5% lower response.
    considerable_gain: float = 0.05


@dataclass(frozen=True)
class Claim:
    """One row of the claims table."""

    key: str
    statement: str  # the paper's claim, paraphrased, with its section
    value: float  # the single number the verdict rests on
    value_label: str  # what ``value`` is
    answer: str  # the measured answer in words, with the supporting numbers
    verdict: str  # "reproduced", "not reproduced", "partly" or "no data"
    details: dict[str, float] = field(default_factory=dict)


def evaluate(cells: pd.DataFrame, th: Thresholds | None = None) -> list[Claim]:
    """All claims whose policies are in ``cells`` (others are reported as 'no data')."""
    th = th or Thresholds()
    return [
        _sdf_saturates_poor_speedup(cells, th),
        _asp_equals_ap1(cells, th),
        _aep_beats_asp_ap1(cells, th),
        _sdf_helps_adaptive(cells, th),
        _dif_helps_aep(cells, th),
        _aep2_near_dyn(cells, th),
        _asp2_far_from_dyn(cells, th),
        _dif_beats_dyn_at_90(cells),
        _sdf_max1_never_saturates(cells),
        _sdf_family_saturates_wk1(cells),
    ]


def cell(cells: pd.DataFrame, workload: str, load: float, policy: str) -> pd.Series | None:
    """The row of one cell, or None if it was not run."""
    rows = cells[(cells.workload == workload) & (cells.policy == policy) & (abs(cells.load - load) < 1e-9)]
    return None if rows.empty else rows.iloc[0]


def _have(cells: pd.DataFrame, *policies: str) -> bool:
    return all(p in set(cells.policy) for p in policies)


def _no_data(key: str, statement: str, *policies: str) -> Claim:
    return Claim(key, statement, math.nan, "", f"not run (needs {', '.join(policies)})", "no data")


def _pct(load: float) -> str:
    return f"{round(load * 100)}%"


def _sdf_saturates_poor_speedup(cells: pd.DataFrame, th: Thresholds) -> Claim:
    statement = (f"SDF and SDF-Max 6 saturate at high load with poor speedup ({th.poor_speedup}); "
                 "the paper finds both saturated from 50% (§6.1)")
    pols = ("SDF", "SDF-MAX6")
    if not _have(cells, *pols) or th.poor_speedup not in set(cells.workload):
        return _no_data("sdf_saturates_poor", statement, *pols)
    lowest: dict[str, float] = {}
    for pol in pols:
        rows = cells[(cells.workload == th.poor_speedup) & (cells.policy == pol) & cells.saturated]
        lowest[pol] = float(rows.load.min()) if not rows.empty else math.nan
    top = max(cells.load)
    both_at_top = all(bool(cell(cells, th.poor_speedup, top, p).saturated) for p in pols)
    words = "; ".join(f"{p}: saturated from {_pct(v)}" if not math.isnan(v) else f"{p}: never saturated"
                      for p, v in lowest.items())
    value = max(lowest.values()) if not any(math.isnan(v) for v in lowest.values()) else math.nan
    as_early = all(v <= th.paper_saturation_load + 1e-9 for v in lowest.values())
    verdict = ("reproduced" if both_at_top and as_early else "partly" if both_at_top else "not reproduced")
    words += f" (paper: both from {_pct(th.paper_saturation_load)})"
    return Claim("sdf_saturates_poor", statement, value,
                 f"highest of the two lowest saturating loads on {th.poor_speedup}", words, verdict, lowest)


def _asp_equals_ap1(cells: pd.DataFrame, th: Thresholds) -> Claim:
    statement = "ASP and AP1 have almost the same response time on every workload (§6.2)"
    if not _have(cells, "ASP", "AP1"):
        return _no_data("asp_eq_ap1", statement, "ASP", "AP1")
    diffs = []
    for (wk, load), group in cells[cells.policy.isin(["ASP", "AP1"])].groupby(["workload", "load"]):
        a, b = cell(cells, wk, load, "ASP"), cell(cells, wk, load, "AP1")
        if a is None or b is None or a.saturated or b.saturated:
            continue
        diffs.append((abs(a.response_ks / b.response_ks - 1.0), wk, load))
    if not diffs:
        return Claim("asp_eq_ap1", statement, math.nan, "", "no unsaturated cell pair", "no data")
    worst = max(diffs)
    verdict = "reproduced" if worst[0] <= th.asp_ap1_rel else "not reproduced"
    answer = (f"largest |R_ASP/R_AP1 - 1| = {worst[0]:.1%} ({worst[1]}, {_pct(worst[2])}) over "
              f"{len(diffs)} cells; median {pd.Series([d[0] for d in diffs]).median():.1%}; "
              f"threshold {th.asp_ap1_rel:.0%}")
    return Claim("asp_eq_ap1", statement, worst[0], "max |R_ASP/R_AP1 - 1|", answer, verdict)


def _aep_beats_asp_ap1(cells: pd.DataFrame, th: Thresholds) -> Claim:
    statement = "AEP has lower response time than ASP and AP1 in almost all cases (§6.2)"
    if not _have(cells, "AEP", "ASP", "AP1"):
        return _no_data("aep_beats", statement, "AEP", "ASP", "AP1")
    wins, total, losses, all_saturated = 0, 0, [], []
    for wk in sorted(set(cells.workload)):
        for load in sorted(set(cells.load)):
            r = {p: cell(cells, wk, load, p) for p in ("AEP", "ASP", "AP1")}
            if any(v is None for v in r.values()):
                continue
            aep = math.inf if r["AEP"].saturated else r["AEP"].response_ks
            other = min(math.inf if r[p].saturated else r[p].response_ks for p in ("ASP", "AP1"))
            if math.isinf(aep) and math.isinf(other):
                all_saturated.append(f"{wk} {_pct(load)}")
                continue  # no finite response to compare
            total += 1
            if aep < other:
                wins += 1
            else:
                losses.append(f"{wk} {_pct(load)} ({aep / other:.2f}x)")
    share = wins / total if total else math.nan
    verdict = "reproduced" if share >= th.almost_all else "not reproduced"
    answer = (f"AEP lowest in {wins}/{total} cells ({share:.0%}; threshold {th.almost_all:.0%})"
              + (f"; not in: {', '.join(losses)}" if losses else "")
              + (f"; all three saturated (not counted): {', '.join(all_saturated)}" if all_saturated else ""))
    return Claim("aep_beats", statement, share, "share of cells where AEP < min(ASP, AP1)", answer, verdict)


def _sdf_helps_adaptive(cells: pd.DataFrame, th: Thresholds) -> Claim:
    statement = ("Queueing in SDF order lowers the response time of ASP, AP1 and AEP at high load, "
                 "in some cases to less than half (§6.3)")
    pairs = (("ASP", "ASP(1)"), ("AP1", "AP1(1)"), ("AEP", "AEP(1)"))
    if not _have(cells, *(p for pair in pairs for p in pair)):
        return _no_data("sdf_helps", statement, *(p for pair in pairs for p in pair))
    ratios, both_saturated = [], 0
    for wk in sorted(set(cells.workload)):
        for load in th.high_loads:
            for base, sdf in pairs:
                a, b = cell(cells, wk, load, base), cell(cells, wk, load, sdf)
                if a is None or b is None:
                    continue
                ra = math.inf if a.saturated else a.response_ks
                rb = math.inf if b.saturated else b.response_ks
                if math.isinf(ra) and math.isinf(rb):
                    both_saturated += 1  # nothing to compare
                    continue
                ratios.append(rb / ra if math.isfinite(ra) else 0.0)
    lower = sum(1 for x in ratios if x < 1)
    share = lower / len(ratios) if ratios else math.nan
    finite = [x for x in ratios if math.isfinite(x)]
    verdict = "reproduced" if ratios and lower == len(ratios) else (
        "partly" if share >= th.almost_all else "not reproduced")
    answer = (f"R(with SDF)/R(without) < 1 in {lower}/{len(ratios)} comparisons at "
              f"{', '.join(_pct(x) for x in th.high_loads)}; ratio from {min(finite):.2f} to {max(finite):.2f}"
              if finite else "no comparable cells")
    if both_saturated:
        answer += f"; {both_saturated} pairs with both saturated not counted"
    return Claim("sdf_helps", statement, share, "share of high-load comparisons improved by SDF",
                 answer, verdict, {"min_ratio": min(finite) if finite else math.nan})


def _dif_helps_aep(cells: pd.DataFrame, th: Thresholds) -> Claim:
    statement = ("Adding DIF gives AEP(2) a considerable gain over AEP(1) at high loads, "
                 "and a negligible one to ASP(2) and AP1(2) (§6.4, §7)")
    pols = ("AEP(1)", "AEP(2)", "ASP(1)", "ASP(2)", "AP1(1)", "AP1(2)")
    if not _have(cells, *pols):
        return _no_data("dif_helps_aep", statement, *pols)
    gains: dict[str, list[float]] = {"AEP": [], "ASP": [], "AP1": []}
    for wk in sorted(set(cells.workload)):
        for load in th.high_loads:
            for base, found in gains.items():
                a, b = cell(cells, wk, load, f"{base}(1)"), cell(cells, wk, load, f"{base}(2)")
                if a is None or b is None or a.saturated or b.saturated:
                    continue
                found.append(1.0 - b.response_ks / a.response_ks)
    if not gains["AEP"]:
        return Claim("dif_helps_aep", statement, math.nan, "", "no unsaturated cell pair", "no data")
    best = max(gains["AEP"])
    mean = {k: sum(v) / len(v) for k, v in gains.items() if v}
    verdict = "reproduced" if best >= th.considerable_gain else "not reproduced"
    answer = (f"1 - R(2)/R(1) at {', '.join(_pct(x) for x in th.high_loads)}, mean over workloads: "
              + ", ".join(f"{k} {v:+.1%}" for k, v in mean.items())
              + f"; best AEP gain {best:+.1%} (threshold {th.considerable_gain:.0%})")
    return Claim("dif_helps_aep", statement, best, "largest high-load 1 - R_AEP(2)/R_AEP(1)", answer, verdict)


def _ratio_to_dyn(cells: pd.DataFrame, wk: str, load: float, pol: str) -> float:
    a, d = cell(cells, wk, load, pol), cell(cells, wk, load, "DYN-EQUI")
    if a is None or d is None:
        return math.nan
    if a.saturated:
        return math.inf
    return float(a.response_ks / d.response_ks)


def _aep2_near_dyn(cells: pd.DataFrame, th: Thresholds) -> Claim:
    statement = "On the mixed workload WK4, AEP(2) stays within about 30% of DYN-EQUI (§6.5, §7)"
    if not _have(cells, "AEP(2)", "DYN-EQUI") or "WK4" not in set(cells.workload):
        return _no_data("aep2_near_dyn", statement, "AEP(2)", "DYN-EQUI", "WK4")
    ratios = {load: _ratio_to_dyn(cells, "WK4", load, "AEP(2)") for load in sorted(set(cells.load))}
    worst_load = max(ratios, key=lambda k: ratios[k])
    worst = ratios[worst_load]
    verdict = "reproduced" if worst <= th.aep2_over_dyn else "not reproduced"
    answer = ("R_AEP(2)/R_DYN-EQUI on WK4: " + ", ".join(f"{_pct(k)} {v:.2f}" for k, v in ratios.items())
              + f"; worst {worst:.2f} at {_pct(worst_load)} (threshold {th.aep2_over_dyn:.2f})")
    return Claim("aep2_near_dyn", statement, worst, "max over loads of R_AEP(2)/R_DYN-EQUI on WK4",
                 answer, verdict, {f"{k:g}": v for k, v in ratios.items()})


def _asp2_far_from_dyn(cells: pd.DataFrame, th: Thresholds) -> Claim:
    statement = "On WK4, ASP(2) is more than 75% worse than DYN-EQUI at medium load (50%) (§6.5)"
    if not _have(cells, "ASP(2)", "DYN-EQUI") or "WK4" not in set(cells.workload) or 0.5 not in set(cells.load):
        return _no_data("asp2_far_from_dyn", statement, "ASP(2)", "DYN-EQUI", "WK4 at 50%")
    ratio = _ratio_to_dyn(cells, "WK4", 0.5, "ASP(2)")
    verdict = "reproduced" if ratio > th.asp2_over_dyn_medium else "not reproduced"
    answer = f"R_ASP(2)/R_DYN-EQUI on WK4 at 50% = {ratio:.2f} (paper: > {th.asp2_over_dyn_medium:.2f})"
    return Claim("asp2_far_from_dyn", statement, ratio, "R_ASP(2)/R_DYN-EQUI, WK4, 50%", answer, verdict)


def _dif_beats_dyn_at_90(cells: pd.DataFrame) -> Claim:
    statement = "At 90% load ASP(2), AP1(2) and AEP(2) all beat DYN-EQUI (§6.5, §7)"
    pols = ("ASP(2)", "AP1(2)", "AEP(2)")
    if not _have(cells, *pols, "DYN-EQUI") or 0.9 not in set(cells.load):
        return _no_data("dif_beats_dyn_90", statement, *pols, "DYN-EQUI at 90%")
    ratios = {(wk, p): _ratio_to_dyn(cells, wk, 0.9, p) for wk in sorted(set(cells.workload)) for p in pols}
    wins = sum(1 for v in ratios.values() if v < 1)
    # Paired by replication (same jobs): is the advantage larger than its noise?
    sure = 0
    for wk in sorted(set(cells.workload)):
        for p in pols:
            c = cell(cells, wk, 0.9, p)
            if c is not None and "vs_dyn_rel" in c and c.vs_dyn_rel + c.vs_dyn_rel_hw < 0:
                sure += 1
    wk4 = {p: ratios[("WK4", p)] for p in pols if ("WK4", p) in ratios}
    verdict = "reproduced" if wins == len(ratios) else ("partly" if wk4 and all(v < 1 for v in wk4.values())
                                                        else "not reproduced")
    answer = (f"R/R_DYN-EQUI < 1 in {wins}/{len(ratios)} (workload, policy) pairs at 90%; "
              + "; ".join(f"{wk} " + "/".join(f"{ratios[(wk, p)]:.2f}" for p in pols)
                          for wk in sorted(set(cells.workload)))
              + f" (ASP(2)/AP1(2)/AEP(2)); {sure} of the {wins} wins exceed the paired 95% half-width")
    return Claim("dif_beats_dyn_90", statement, wins / len(ratios),
                 "share of (workload, policy) pairs at 90% with R < R_DYN-EQUI", answer, verdict,
                 {f"{wk}|{p}": v for (wk, p), v in ratios.items()})


def _sdf_max1_never_saturates(cells: pd.DataFrame) -> Claim:
    statement = "Of the SDF family only SDF-Max 1 avoids saturation at all loads (§6.1)"
    pols = ("SDF-MAX1", "SDF-MAX2", "SDF-MAX6", "SDF")
    if not _have(cells, *pols):
        return _no_data("sdf_max1_only", statement, *pols)
    sat = {p: int(cells[(cells.policy == p)].saturated.sum()) for p in pols}
    ok = sat["SDF-MAX1"] == 0 and all(sat[p] > 0 for p in pols[1:])
    answer = "saturated cells: " + ", ".join(f"{p} {n}" for p, n in sat.items())
    return Claim("sdf_max1_only", statement, float(sat["SDF-MAX1"]), "saturated SDF-MAX1 cells", answer,
                 "reproduced" if ok else "not reproduced", {p: float(n) for p, n in sat.items()})


def _sdf_family_saturates_wk1(cells: pd.DataFrame) -> Claim:
    statement = "With good speedup (WK1), SDF, SDF-Max 2 and SDF-Max 6 saturate at 90% (§6.1)"
    pols = ("SDF", "SDF-MAX2", "SDF-MAX6")
    if not _have(cells, *pols) or "WK1" not in set(cells.workload) or 0.9 not in set(cells.load):
        return _no_data("sdf_wk1_90", statement, *pols, "WK1 at 90%")
    sat = {p: bool(cell(cells, "WK1", 0.9, p).saturated) for p in pols}
    n = sum(sat.values())
    answer = "at WK1 90%: " + ", ".join(f"{p} {'saturated' if s else 'not saturated'}" for p, s in sat.items())
    return Claim("sdf_wk1_90", statement, float(n), "of the three, how many saturate", answer,
                 "reproduced" if n == len(pols) else ("partly" if n else "not reproduced"))


def to_frame(claims: list[Claim]) -> pd.DataFrame:
    """The claims as a table (claims.csv)."""
    return pd.DataFrame([{"key": c.key, "statement": c.statement, "value": c.value,
                          "value_label": c.value_label, "answer": c.answer, "verdict": c.verdict}
                         for c in claims])
