"""§6.2 (ASP, AP1, AEP; Figure 4) and §6.3 (the same with SDF order; Figure 5)."""
from __future__ import annotations

import math
import statistics

import numpy as np
import pandas as pd

from experiments.reporting import effects
from experiments.reporting.claims import Check, Claim
from experiments.studies.anastasiadis_sevcik.claim import (
    Source,
    Thresholds,
    at_least,
    cell,
    faster,
    loads,
    missing,
    paired,
    paired_effect,
    pairs,
    pct,
    response,
    share,
    workloads,
    yes_no,
)

BASES = ("ASP", "AP1", "AEP")


def asp_equals_ap1(cells: pd.DataFrame, th: Thresholds) -> Claim:
    src = Source(
        "asp_eq_ap1", "§6.2, §7",
        "An important observation is that the policies ASP and AP1 have almost the same response time for all "
        "workload types. [§7:] No differences are found between the performance of ASP and AP1.",
        f"'Almost the same': |R_ASP/R_AP1 - 1| <= {th.almost_same_rel:.0%} (twice the {th.same_rel:.0%} "
        "precision each cell is run to) in every cell where both finished, on every workload: one check per "
        "cell, margin the threshold minus the gap, with the ratio's 95% half-width.",
        "ASP and AP1 have almost the same response time on every workload")
    if why := missing(cells, "ASP", "AP1"):
        return src.no_data(why)
    both = [(wk, load, a, b) for wk, load, a, b in pairs(cells, "ASP", "AP1") if not (a.saturated or b.saturated)]
    diffs = [(abs(a.response_ks / b.response_ks - 1.0), wk, load) for wk, load, a, b in both]
    checks = [paired(f"{wk} {pct(load)}", lambda m: th.almost_same_rel - abs(m[0] / m[1] - 1.0), [a, b])
              for wk, load, a, b in both]
    if not diffs:
        return src.no_data("no unsaturated cell pair")
    worst = max(diffs)
    answer = (f"largest |R_ASP/R_AP1 - 1| = {worst[0]:.1%} ({worst[1]}, {pct(worst[2])}) over {len(diffs)} cells; "
              f"median {statistics.median(d[0] for d in diffs):.1%}; threshold {th.almost_same_rel:.0%}")
    return src.result(worst[0], "max |R_ASP/R_AP1 - 1|", answer, checks, "cells")


def asp_ap1_same_partitions(cells: pd.DataFrame, th: Thresholds) -> Claim:
    src = Source(
        "asp_ap1_same_partitions", "§6.2",
        "The respective partition sizes of ASP and AP1 are the same.",
        f"'The same': |P_ASP/P_AP1 - 1| <= {th.same_rel:.0%}, the precision the study is run to, in every cell "
        "(saturated ones too: their partitions are finite); one check per cell, paired by replication over the "
        "unsaturated replications (a saturated cell has none: unresolved there).",
        "ASP and AP1 have the same mean partition sizes")
    if why := missing(cells, "ASP", "AP1"):
        return src.no_data(why)
    diffs = [(abs(a.partition / b.partition - 1.0), wk, load) for wk, load, a, b in pairs(cells, "ASP", "AP1")]
    worst = max(diffs)
    answer = (f"largest |P_ASP/P_AP1 - 1| = {worst[0]:.1%} ({worst[1]}, {pct(worst[2])}) over {len(diffs)} cells; "
              f"median {statistics.median(d[0] for d in diffs):.1%}")
    checks = [paired(f"{wk} {pct(load)}", lambda m: th.same_rel - abs(m[0] / m[1] - 1.0), [a, b], "partition")
              for wk, load, a, b in pairs(cells, "ASP", "AP1")]
    return src.result(worst[0], "max |P_ASP/P_AP1 - 1|", answer, checks, "cells")


def aep_smaller_partitions(cells: pd.DataFrame, th: Thresholds) -> Claim:
    src = Source(
        "aep_smaller_partitions", "§6.2",
        "In almost all the cases, AEP correctly decides to provide smaller partition sizes relative to ASP and "
        "AP1, since this improves the mean response time of the system.",
        "About partition sizes, not response time: the share of cells (every workload and load) with "
        f"P_AEP < min(P_ASP, P_AP1) is at least {th.almost_all:.0%} ('almost all').",
        "AEP gives smaller partitions than ASP and AP1 in almost all cases")
    if why := missing(cells, *BASES):
        return src.no_data(why)
    hits, total, not_in, per_cell = 0, 0, [], []
    for wk in workloads(cells):
        for load in loads(cells):
            r = {p: cell(cells, wk, load, p) for p in BASES}
            if any(v is None for v in r.values()):
                continue
            total += 1
            per_cell.append(paired(f"{wk} {pct(load)}", lambda m: min(m[1], m[2]) - m[0],
                                   [r["AEP"], r["ASP"], r["AP1"]], "partition"))
            if r["AEP"].partition < min(r["ASP"].partition, r["AP1"].partition):
                hits += 1
            else:
                not_in.append(f"{wk} {pct(load)}")
    s = share(hits, total)
    answer = (f"AEP's partitions smallest in {hits}/{total} cells ({s:.0%}; threshold {th.almost_all:.0%})"
              + (f"; not in: {', '.join(not_in)}" if not_in else ""))
    return src.result(s, "share of cells with P_AEP < min(P_ASP, P_AP1)", answer,
                      [at_least("cells with smaller partitions", per_cell, total, th.almost_all)], "checks")


def aep_less_waiting(cells: pd.DataFrame, th: Thresholds) -> Claim:
    src = Source(
        "aep_less_waiting", "§6.2, §7",
        "The waiting time tends to be smaller with AEP, as was predicted in Section 4. [§7:] Comparison of the "
        "three adaptive policies verifies that AEP tends to allocate fewer processors and to decrease the "
        "waiting time at higher loads, as was expected from our analysis.",
        f"At the high loads ({', '.join(pct(x) for x in th.high_loads)}) on every workload, W_AEP < "
        f"min(W_ASP, W_AP1) in at least {th.almost_all:.0%} ('tends to') of the cells where AEP finished.",
        "AEP waits less than ASP and AP1 at high loads")
    if why := missing(cells, *BASES):
        return src.no_data(why)
    hits, total, ratios, per_cell = 0, 0, [], []
    for wk in workloads(cells):
        for load in th.high_loads:
            r = {p: cell(cells, wk, load, p) for p in BASES}
            if any(v is None for v in r.values()) or r["AEP"].saturated:
                continue
            other = min(math.inf if r[p].saturated else r[p].wait_ks for p in ("ASP", "AP1"))
            total += 1
            rivals = [r[p] for p in ("ASP", "AP1") if not r[p].saturated]
            per_cell.append(paired(f"{wk} {pct(load)}", lambda m: min(m[1:]) - m[0], [r["AEP"], *rivals], "wait_ks")
                            if rivals else yes_no(f"{wk} {pct(load)} (ASP and AP1 saturated)", True))
            hits += r["AEP"].wait_ks < other
            if math.isfinite(other) and other > 0:
                ratios.append(r["AEP"].wait_ks / other)
    s = share(hits, total)
    answer = (f"W_AEP lowest in {hits}/{total} high-load cells ({s:.0%})"
              + (f"; W_AEP/min(W_ASP, W_AP1) from {min(ratios):.2f} to {max(ratios):.2f}" if ratios else ""))
    return src.result(s, "share of high-load cells with W_AEP < min(W_ASP, W_AP1)", answer,
                      [at_least("high-load cells with less waiting", per_cell, total, th.almost_all)], "checks")


def aep_beats_asp_ap1(cells: pd.DataFrame, th: Thresholds) -> Claim:
    src = Source(
        "aep_beats", "§6.2, §7",
        "Another important observation from figure 4(a) is the advantage of AEP over the other two policies. "
        "[§7:] This behavior makes AEP perform better in the general case.",
        f"Figure 4 shows {th.general} ('We concentrate on the workload WK4'), which §6.5 calls 'the general "
        f"case': R_AEP < min(R_ASP, R_AP1) at every {th.general} load, one check per load (the relative gap "
        "with its 95% half-width). The other workloads are reported.",
        f"AEP has lower response time than ASP and AP1 ({th.general})")
    if why := missing(cells, *BASES, workloads=(th.general,)):
        return src.no_data(why)
    per_wk: dict[str, tuple[int, int, list[str]]] = {}
    checks: list[Check] = []
    for wk in workloads(cells):
        wins, total, losses = 0, 0, []
        for load in loads(cells):
            r = {p: response(cell(cells, wk, load, p)) for p in BASES}
            other = min(r["ASP"], r["AP1"])
            if math.isinf(r["AEP"]) and math.isinf(other):
                continue  # all saturated: nothing to compare
            total += 1
            if wk == th.general:
                rival = "ASP" if r["ASP"] <= r["AP1"] else "AP1"
                check = faster(pct(load), cell(cells, wk, load, "AEP"), cell(cells, wk, load, rival))
                checks += [check] if check is not None else []
            if r["AEP"] < other:
                wins += 1
            else:
                losses.append(f"{pct(load)} ({r['AEP'] / other:.2f}x)")
        per_wk[wk] = (wins, total, losses)
    wins, total, losses = per_wk[th.general]
    answer = "; ".join(f"{wk} {w}/{t}" + (f" (not at {', '.join(l)})" if l else "")
                       for wk, (w, t, l) in per_wk.items())
    return src.result(share(wins, total), f"share of {th.general} loads where AEP < min(ASP, AP1)",
                      "AEP lowest at: " + answer, checks, f"{th.general} loads")


def sdf_helps_adaptive(cells: pd.DataFrame, th: Thresholds) -> Claim:
    src = Source(
        "sdf_helps", "§6.3, §7",
        "At high loads, we get a decreased response time, which in some cases is less than half the response "
        "time of the corresponding pure adaptive policies.",
        f"At {', '.join(pct(x) for x in th.high_loads)} on every workload, R_X(1) < R_X for X = ASP, AP1, AEP in "
        f"every comparison (one check each: the relative gap with its 95% half-width), and below "
        f"{th.less_than_half:g}x in at least one (one check: {th.less_than_half:g} minus the lowest ratio).",
        "SDF order lowers ASP's, AP1's and AEP's response at high load, sometimes below half")
    pols = [p for b in BASES for p in (b, f"{b}(1)")]
    if why := missing(cells, *pols):
        return src.no_data(why)
    ratios, both_saturated, checks, lowest = [], 0, [], None
    for b in BASES:
        for wk, load, a, s in pairs(cells, b, f"{b}(1)", list(th.high_loads)):
            ra, rs = response(a), response(s)
            if math.isinf(ra) and math.isinf(rs):
                both_saturated += 1
                continue
            ratios.append(rs / ra if math.isfinite(ra) else 0.0)
            checks.append(faster(f"{b} {wk} {pct(load)}", s, a))
            if lowest is None or ratios[-1] < lowest[0]:
                lowest = (ratios[-1], f"{b} {wk} {pct(load)}", s, a)
    if not ratios:
        return src.no_data("no comparable cells")
    lower = sum(1 for x in ratios if x < 1)
    s = share(lower, len(ratios))
    below_half = sum(1 for x in ratios if x < th.less_than_half)
    q, where, with_sdf, without = lowest
    half = f"below half somewhere (lowest: {where})"
    checks.append(paired(half, lambda m: th.less_than_half - m[0] / m[1], [with_sdf, without])
                  if math.isfinite(response(without)) else yes_no(f"{half}, without SDF saturated", True))
    answer = (f"R(with SDF)/R(without) < 1 in {lower}/{len(ratios)} comparisons, ratio from {min(ratios):.2f} "
              f"to {max(ratios):.2f}, below half in {below_half}"
              + (f"; {both_saturated} pairs with both saturated not counted" if both_saturated else ""))
    return src.result(s, "share of high-load comparisons improved by SDF", answer, checks, "checks",
                      {"min_ratio": min(ratios)})


def sdf_no_gain_low_load(cells: pd.DataFrame, th: Thresholds) -> Claim:
    src = Source(
        "sdf_no_gain_low", "§6.3",
        "At very low loads, there is no improvement because most arriving jobs find an almost empty system.",
        f"At {pct(th.very_low)}, the gain 1 - R_X(1)/R_X is at most {th.considerable:.0%} (no larger than the "
        "study's precision) for X = ASP, AP1, AEP on every workload.",
        f"SDF order gives no gain at very low load ({pct(th.very_low)})")
    pols = [p for b in BASES for p in (b, f"{b}(1)")]
    if why := missing(cells, *pols, loads=(th.very_low,)):
        return src.no_data(why)
    both = [(b, wk, a, s) for b in BASES for wk, _l, a, s in pairs(cells, b, f"{b}(1)", [th.very_low])
            if not (a.saturated or s.saturated)]
    gains = [(1 - response(s) / response(a), f"{b} {wk}") for b, wk, a, s in both]
    checks = [paired(where, lambda m: th.considerable - (1 - m[0] / m[1]), [s, a])
              for (g, where), (_b, _w, a, s) in zip(gains, both)]
    best = max(gains)
    answer = (f"gain at {pct(th.very_low)} from {min(g for g, _ in gains):+.1%} to {best[0]:+.1%} ({best[1]}); "
              f"threshold {th.considerable:.0%}")
    return src.result(best[0], f"largest gain 1 - R(1)/R at {pct(th.very_low)}", answer, checks, "pairs")


def sdf_keeps_partitions(cells: pd.DataFrame, th: Thresholds) -> Claim:
    src = Source(
        "sdf_keeps_partitions", "§6.3",
        "Its comparison with that of the previous section (fig. 4(b)) shows that SDF does not restrict the "
        "adaptability of the policies ASP, AP1 and AEP.",
        f"Partition sizes with SDF almost the same as without: |P_X(1)/P_X - 1| <= {th.almost_same_rel:.0%} "
        "in every cell, for X = ASP, AP1, AEP (one check per pair, paired by replication).",
        "SDF order leaves the adaptive policies' partition sizes unchanged")
    pols = [p for b in BASES for p in (b, f"{b}(1)")]
    if why := missing(cells, *pols):
        return src.no_data(why)
    diffs = [(abs(s.partition / a.partition - 1), f"{b} {wk} {pct(load)}") for b in BASES
             for wk, load, a, s in pairs(cells, b, f"{b}(1)")]
    worst = max(diffs)
    answer = (f"largest |P(1)/P - 1| = {worst[0]:.1%} ({worst[1]}); median "
              f"{statistics.median(d for d, _ in diffs):.1%} over {len(diffs)} pairs")
    checks = [paired(f"{b} {wk} {pct(load)}", lambda m: th.almost_same_rel - abs(m[0] / m[1] - 1), [s, a], "partition")
              for b in BASES for wk, load, a, s in pairs(cells, b, f"{b}(1)")]
    return src.result(worst[0], "max |P_X(1)/P_X - 1|", answer, checks, "pairs")


def _advantage(cells: pd.DataFrame, wk: str, load: float, suffix: str) -> float:
    """1 - R_AEP/min(R_ASP, R_AP1) with the given suffix ('' or '(1)'); NaN if AEP saturated or missing."""
    r = {b: response(cell(cells, wk, load, f"{b}{suffix}")) for b in BASES}
    if any(math.isnan(v) for v in r.values()) or math.isinf(r["AEP"]):
        return math.nan
    return 1 - r["AEP"] / min(r["ASP"], r["AP1"])


def aep1_advantage_reduced(cells: pd.DataFrame, th: Thresholds) -> Claim:
    src = Source(
        "aep1_advantage_reduced", "§6.3, §7",
        "Although the response times of the last two policies remain nearly identical to each other, it seems "
        "that the improvement previously demonstrated by AEP(1) is considerably reduced. [§7:] For the same "
        "reason, the advantage of AEP of keeping waiting time low is much less important than before.",
        f"AEP's advantage a = 1 - R_AEP/min(R_ASP, R_AP1), averaged over {th.general}'s loads (Figure 5 shows "
        f"{th.general}); 'considerably reduced': with SDF it is at most {th.considerably_reduced:g} of the "
        "advantage without.",
        f"With SDF, AEP's advantage over ASP and AP1 is considerably reduced ({th.general})")
    pols = [p for b in BASES for p in (b, f"{b}(1)")]
    if why := missing(cells, *pols, workloads=(th.general,)):
        return src.no_data(why)
    parts, value = [], math.nan
    for wk in workloads(cells):
        a0 = [x for x in (_advantage(cells, wk, l, "") for l in loads(cells)) if math.isfinite(x)]
        a1 = [x for x in (_advantage(cells, wk, l, "(1)") for l in loads(cells)) if math.isfinite(x)]
        if not a0 or not a1:
            continue
        m0, m1 = statistics.fmean(a0), statistics.fmean(a1)
        parts.append(f"{wk} {m0:+.1%} -> {m1:+.1%}")
        if wk == th.general:
            value = m1 / m0 if m0 > 0 else math.inf
    if math.isnan(value):
        return src.no_data(f"no finite AEP cells on {th.general}")
    return src.result(value, f"mean advantage with SDF / without, {th.general}",
                      "mean advantage of AEP without -> with SDF: " + "; ".join(parts)
                      + f"; {th.general} ratio {value:.2f} (threshold {th.considerably_reduced:g})",
                      [_reduced(cells, th) if math.isfinite(value)
                       else yes_no(f"{th.general}: no advantage without SDF to reduce", False)], "checks")


def _reduced(cells: pd.DataFrame, th: Thresholds) -> Check:
    """threshold - (mean advantage with SDF / without) on the general workload, its interval from the cells' own
    (the loads' streams differ, so the cells are propagated in quadrature, each pair paired where it can be)."""
    wk = th.general
    use = [l for l in loads(cells) if all(math.isfinite(_advantage(cells, wk, l, s)) for s in ("", "(1)"))]
    parts = [paired_effect(lambda m: 1 - m[0] / min(m[1], m[2]),
                           [cell(cells, wk, l, f"AEP{s}"), cell(cells, wk, l, f"ASP{s}"), cell(cells, wk, l, f"AP1{s}")])
             for s in ("", "(1)") for l in use]
    k = len(use)
    return effects.propagate(lambda m: th.considerably_reduced - float(np.mean(m[k:])) / float(np.mean(m[:k])),
                             parts).check(f"{wk} advantage ratio")


CLAIMS = (asp_equals_ap1, asp_ap1_same_partitions, aep_smaller_partitions, aep_less_waiting, aep_beats_asp_ap1,
          sdf_helps_adaptive, sdf_no_gain_low_load, sdf_keeps_partitions, aep1_advantage_reduced)
