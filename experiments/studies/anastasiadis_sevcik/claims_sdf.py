"""§6.1, "The Inadequacy of Fixed Allocation Limits": SDF and SDF-Max k (Figure 3)."""
from __future__ import annotations

import math

import pandas as pd

from experiments.reporting.claims import Check, Claim, exact
from experiments.studies.anastasiadis_sevcik.claim import (
    Source,
    Thresholds,
    at_least,
    cell,
    loads,
    missing,
    paired,
    pct,
    point,
    response,
    share,
    workloads,
    yes_no,
)

#: The SDF family with its allocation limit k (SDF itself is limited only by P = 32).
LIMITS = {"SDF-MAX1": 1, "SDF-MAX2": 2, "SDF-MAX6": 6, "SDF": 32}

QUOTE_MAX1 = ("However only the SDF-Max=1 avoids saturation at all loads, although it performs badly in most "
              "cases (except the level 90%). Larger allocation limits cannot provide the necessary adaptability "
              "to the policies to keep the response time bounded; this holds even for Max=2.")


def sdf_saturates_poor_speedup(cells: pd.DataFrame, th: Thresholds) -> Claim:
    src = Source(
        "sdf_saturates_poor", "§6.1",
        "For poor speedup (WK3), even a load of 50% makes the mean response time of SDF-Max=6 and SDF infinite.",
        f"Each of the two saturated on {th.poor_speedup} at every load from {pct(th.paper_saturation_load)} "
        "up: one check per policy and load, each a yes/no observation.",
        f"SDF and SDF-Max 6 saturate on {th.poor_speedup} from {pct(th.paper_saturation_load)}")
    pols = ("SDF", "SDF-MAX6")
    if why := missing(cells, *pols, workloads=(th.poor_speedup,)):
        return src.no_data(why)
    lowest: dict[str, float] = {}
    for pol in pols:
        rows = cells[(cells.workload == th.poor_speedup) & (cells.policy == pol) & cells.saturated]
        lowest[pol] = float(rows.load.min()) if not rows.empty else math.nan
    words = "; ".join(f"{p}: saturated from {pct(v)}" if not math.isnan(v) else f"{p}: never saturated"
                      for p, v in lowest.items())
    value = max(lowest.values()) if not any(math.isnan(v) for v in lowest.values()) else math.nan
    checks = [yes_no(f"{p} {pct(load)}", bool(c.saturated)) for p in pols for load in loads(cells)
              if load >= th.paper_saturation_load - 1e-9 and (c := cell(cells, th.poor_speedup, load, p)) is not None]
    return src.result(value, f"highest of the two lowest saturating loads on {th.poor_speedup}",
                      words + f" (paper: both from {pct(th.paper_saturation_load)})", checks, "cells", lowest)


def sdf_family_saturates_wk1(cells: pd.DataFrame, th: Thresholds) -> Claim:
    src = Source(
        "sdf_wk1_90", "§6.1",
        "In particular, for good speedup (WK1), the policies SDF, SDF-Max=2, SDF-Max=6 saturate at load 90%.",
        "Each of the three saturated on WK1 at 90%: one yes/no check per policy.",
        "With good speedup (WK1), SDF, SDF-Max 2 and SDF-Max 6 saturate at 90%")
    pols = ("SDF", "SDF-MAX2", "SDF-MAX6")
    if why := missing(cells, *pols, workloads=("WK1",), loads=(th.very_high,)):
        return src.no_data(why)
    sat = {p: bool(cell(cells, "WK1", th.very_high, p).saturated) for p in pols}
    n = sum(sat.values())
    answer = "at WK1 90%: " + ", ".join(f"{p} {'saturated' if s else 'not saturated'}" for p, s in sat.items())
    return src.result(float(n), "of the three, how many saturate", answer,
                      [yes_no(p, s) for p, s in sat.items()], "policies")


def sdf_max1_only(cells: pd.DataFrame, th: Thresholds) -> Claim:
    src = Source("sdf_max1_only", "§6.1", QUOTE_MAX1,
                 "SDF-Max 1 saturated in no cell, and each of SDF-Max 2, SDF-Max 6 and SDF in at least one.",
                 "Of the SDF family only SDF-Max 1 avoids saturation at all loads")
    if why := missing(cells, *LIMITS):
        return src.no_data(why)
    sat = {p: int(cells[cells.policy == p].saturated.sum()) for p in LIMITS}
    checks = [yes_no(f"{p} {'never' if p == 'SDF-MAX1' else 'somewhere'} saturated",
                     (n == 0) if p == "SDF-MAX1" else (n > 0)) for p, n in sat.items()]
    return src.result(float(sat["SDF-MAX1"]), "saturated SDF-MAX1 cells",
                      "saturated cells: " + ", ".join(f"{p} {n}" for p, n in sat.items()),
                      checks, "policies", {p: float(n) for p, n in sat.items()})


def sdf_max1_bad_except_90(cells: pd.DataFrame, th: Thresholds) -> Claim:
    src = Source(
        "sdf_max1_bad", "§6.1", QUOTE_MAX1,
        "'Badly' is read against the rest of the family in the same cell, as Figure 3 shows them: below 90% "
        f"SDF-Max 1 has the highest response of the family's unsaturated members in most cells (more than "
        f"{th.most:.0%}; one check, in cells); at 90% it has the lowest of the family on every workload (one check "
        "per workload: the relative gap to the family's next best, with its 95% half-width).",
        "SDF-Max 1 performs badly in most cases, except at 90%")
    if why := missing(cells, *LIMITS, loads=(th.very_high,)):
        return src.no_data(why)
    worst, below, best90, where_not, at90, worst_checks = 0, 0, 0, [], [], []
    for wk in workloads(cells):
        for load in loads(cells):
            r = {p: response(cell(cells, wk, load, p)) for p in LIMITS}
            finite = {p: v for p, v in r.items() if math.isfinite(v)}
            if not finite:
                continue
            if load < th.very_high - 1e-9:
                below += 1
                worst += r["SDF-MAX1"] >= max(finite.values())
                worst_checks.append(_worst(cells, wk, load, finite))
            elif abs(load - th.very_high) < 1e-9:
                is_best = r["SDF-MAX1"] <= min(r.values())
                best90 += is_best
                if not is_best:
                    where_not.append(wk)
                at90.append(_best_at_90(cells, wk, load, r))
    bad = share(worst, below)
    n_wk = len(workloads(cells))
    answer = (f"worst of the family in {worst}/{below} cells below 90% ({bad:.0%}); best of the family at 90% "
              f"on {best90}/{n_wk} workloads" + (f" (not on {', '.join(where_not)})" if where_not else ""))
    checks = [at_least("worst below 90%", worst_checks, below, th.most, strictly=True), *at90]
    return src.result(bad, "share of cells below 90% where SDF-MAX1 is the family's worst", answer, checks,
                      "checks")


def _worst(cells: pd.DataFrame, wk: str, load: float, finite: dict[str, float]) -> Check:
    """SDF-Max 1 the highest of the family's unsaturated members: R_SDF-MAX1 - max(the others), paired."""
    where = f"{wk} {pct(load)}"
    if "SDF-MAX1" not in finite:
        return yes_no(f"{where} (SDF-MAX1 saturated)", False)
    others = [p for p in finite if p != "SDF-MAX1"]
    if not others:
        return yes_no(f"{where} (the others saturated)", True)
    rows = [cell(cells, wk, load, p) for p in ("SDF-MAX1", *others)]
    return paired(where, lambda m: m[0] - max(m[1:]), rows)  # type: ignore[arg-type]


def _best_at_90(cells: pd.DataFrame, wk: str, load: float, r: dict[str, float]) -> Check:
    """SDF-Max 1 the family's lowest at ``load`` on ``wk``: margin R_next/R_SDF-MAX1 - 1 with its half-width."""
    rival = min((p for p in LIMITS if p != "SDF-MAX1"), key=lambda p: r[p])
    own, other = r["SDF-MAX1"], r[rival]
    if math.isinf(own) or math.isinf(other):
        return yes_no(f"{wk} 90% (saturated)", own <= other)
    return paired(f"{wk} 90%", lambda m: m[1] / m[0] - 1.0,
                  [cell(cells, wk, load, "SDF-MAX1"), cell(cells, wk, load, rival)])  # type: ignore[list-item]


def best_limit_shrinks(cells: pd.DataFrame, th: Thresholds) -> Claim:
    src = Source(
        "best_max_shrinks", "§6.1, §7",
        "In figure 3(a) notice that the higher the system load, the smaller the Max parameter must be to obtain "
        "the best performance. [§7:] They just optimize the performance for some particular workload and "
        "arrival rate.",
        "Per workload, the best limit k*(load) is the family member (k = 1, 2, 6, or 32 for SDF) with the lowest "
        "response at that load. One yes/no check per workload: k* never grows with load and is smaller at the top "
        "load than at the bottom. The order is of point estimates (no interval on an argmin), so each check is "
        "unresolved whichever way it points.",
        "The higher the load, the smaller the best SDF-Max limit")
    if why := missing(cells, *LIMITS):
        return src.no_data(why)
    ok, parts, checks = 0, [], []
    for wk in workloads(cells):
        best = []
        for load in loads(cells):
            r = {p: response(cell(cells, wk, load, p)) for p in LIMITS}
            best.append(LIMITS[min(r, key=lambda p: r[p])])
        shrinks = all(a >= b for a, b in zip(best, best[1:])) and best[-1] < best[0]
        ok += shrinks
        checks.append(point(wk, shrinks))
        parts.append(f"{wk} " + "/".join(str(k) for k in best))
    n = len(parts)
    answer = (f"best limit at {', '.join(pct(l) for l in loads(cells))}: {'; '.join(parts)} "
              f"(32 = SDF); shrinking on {ok}/{n} workloads")
    return src.result(share(ok, n), "share of workloads whose best limit shrinks with load", answer, checks,
                      "workloads")


def sdf_partitions_near_four(cells: pd.DataFrame, th: Thresholds) -> Claim:
    src = Source(
        "sdf_partitions_near_4", "§6.1",
        "While the SDF-Max=1 and SDF-Max=2 keep the partition size at constant values of 1 and 2, respectively, "
        "the other policies fail to lower their mean partition size at levels significantly less than four "
        "across the different speedup types and loads.",
        "'Not significantly less than four': every reported (unsaturated) cell of SDF and SDF-Max 6 has a mean "
        f"partition above {th.near_four_min:g}, closer to four than to SDF-Max 2's two (one check per cell, "
        "with its 95% interval over replications); SDF-Max 1 and 2 stay within 0.05 of 1 and 2 (exact: their "
        "limit fixes them).",
        "SDF and SDF-Max 6 partitions stay near 4 or above; SDF-Max 1 and 2 at 1 and 2")
    if why := missing(cells, *LIMITS):
        return src.no_data(why)
    reported = cells[~cells.saturated.astype(bool)]
    big = reported[reported.policy.isin(["SDF", "SDF-MAX6"])]
    low = float(big.partition.min())
    where = big.loc[big.partition.idxmin()]
    fixed = {k: float((cells[cells.policy == f"SDF-MAX{k}"].partition - k).abs().max()) for k in (1, 2)}
    checks = [paired(f"{r.policy} {r.workload} {pct(r.load)} partition", lambda m: m[0] - th.near_four_min, [r],
                     "partition") for _, r in big.iterrows()]
    checks += [exact(f"SDF-Max {k} off {k}", 0.05 - v) for k, v in fixed.items()]
    answer = (f"smallest SDF/SDF-Max 6 mean partition {low:.2f} ({where.policy}, {where.workload} "
              f"{pct(where.load)}); SDF-Max 1, 2 off 1, 2 by at most {fixed[1]:.3f}, {fixed[2]:.3f}")
    return src.result(low, "smallest mean partition of SDF and SDF-MAX6 (unsaturated cells)", answer, checks,
                      "checks")


CLAIMS = (sdf_saturates_poor_speedup, sdf_family_saturates_wk1, sdf_max1_only, sdf_max1_bad_except_90,
          best_limit_shrinks, sdf_partitions_near_four)
