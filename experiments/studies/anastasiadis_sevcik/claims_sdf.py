"""§6.1, "The Inadequacy of Fixed Allocation Limits": SDF and SDF-Max k (Figure 3)."""
from __future__ import annotations

import math

import pandas as pd

from experiments.studies.anastasiadis_sevcik.claim import (
    NOT_REPRODUCED,
    PARTLY,
    REPRODUCED,
    Claim,
    Source,
    Thresholds,
    cell,
    loads,
    missing,
    pct,
    response,
    share,
    workloads,
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
        f"Both saturated from {pct(th.paper_saturation_load)} on {th.poor_speedup}: reproduced; both saturated "
        "at the top load, one only from a higher load: partly.",
        f"SDF and SDF-Max 6 saturate on {th.poor_speedup} from {pct(th.paper_saturation_load)}")
    pols = ("SDF", "SDF-MAX6")
    if why := missing(cells, *pols, workloads=(th.poor_speedup,)):
        return src.no_data(why)
    lowest: dict[str, float] = {}
    for pol in pols:
        rows = cells[(cells.workload == th.poor_speedup) & (cells.policy == pol) & cells.saturated]
        lowest[pol] = float(rows.load.min()) if not rows.empty else math.nan
    top = max(cells.load)
    both_at_top = all(bool(cell(cells, th.poor_speedup, top, p).saturated) for p in pols)
    words = "; ".join(f"{p}: saturated from {pct(v)}" if not math.isnan(v) else f"{p}: never saturated"
                      for p, v in lowest.items())
    value = max(lowest.values()) if not any(math.isnan(v) for v in lowest.values()) else math.nan
    as_early = all(v <= th.paper_saturation_load + 1e-9 for v in lowest.values())
    verdict = REPRODUCED if both_at_top and as_early else PARTLY if both_at_top else NOT_REPRODUCED
    return src.result(value, f"highest of the two lowest saturating loads on {th.poor_speedup}",
                      words + f" (paper: both from {pct(th.paper_saturation_load)})", verdict, lowest)


def sdf_family_saturates_wk1(cells: pd.DataFrame, th: Thresholds) -> Claim:
    src = Source(
        "sdf_wk1_90", "§6.1",
        "In particular, for good speedup (WK1), the policies SDF, SDF-Max=2, SDF-Max=6 saturate at load 90%.",
        "All three saturated on WK1 at 90%: reproduced; some: partly.",
        "With good speedup (WK1), SDF, SDF-Max 2 and SDF-Max 6 saturate at 90%")
    pols = ("SDF", "SDF-MAX2", "SDF-MAX6")
    if why := missing(cells, *pols, workloads=("WK1",), loads=(th.very_high,)):
        return src.no_data(why)
    sat = {p: bool(cell(cells, "WK1", th.very_high, p).saturated) for p in pols}
    n = sum(sat.values())
    answer = "at WK1 90%: " + ", ".join(f"{p} {'saturated' if s else 'not saturated'}" for p, s in sat.items())
    return src.result(float(n), "of the three, how many saturate", answer,
                      REPRODUCED if n == len(pols) else (PARTLY if n else NOT_REPRODUCED))


def sdf_max1_only(cells: pd.DataFrame, th: Thresholds) -> Claim:
    src = Source("sdf_max1_only", "§6.1", QUOTE_MAX1,
                 "SDF-Max 1 saturated in no cell, and each of SDF-Max 2, SDF-Max 6 and SDF in at least one.",
                 "Of the SDF family only SDF-Max 1 avoids saturation at all loads")
    if why := missing(cells, *LIMITS):
        return src.no_data(why)
    sat = {p: int(cells[cells.policy == p].saturated.sum()) for p in LIMITS}
    ok = sat["SDF-MAX1"] == 0 and all(sat[p] > 0 for p in LIMITS if p != "SDF-MAX1")
    return src.result(float(sat["SDF-MAX1"]), "saturated SDF-MAX1 cells",
                      "saturated cells: " + ", ".join(f"{p} {n}" for p, n in sat.items()),
                      REPRODUCED if ok else NOT_REPRODUCED, {p: float(n) for p, n in sat.items()})


def sdf_max1_bad_except_90(cells: pd.DataFrame, th: Thresholds) -> Claim:
    src = Source(
        "sdf_max1_bad", "§6.1", QUOTE_MAX1,
        "'Badly' is read against the rest of the family in the same cell, as Figure 3 shows them: below 90% "
        f"SDF-Max 1 has the highest response of the family's unsaturated members in most cells (more than "
        f"{th.most:.0%}); at 90% it has the lowest of the family on every workload. Both: reproduced; one: partly.",
        "SDF-Max 1 performs badly in most cases, except at 90%")
    if why := missing(cells, *LIMITS, loads=(th.very_high,)):
        return src.no_data(why)
    worst, below, best90, where_not = 0, 0, 0, []
    for wk in workloads(cells):
        for load in loads(cells):
            r = {p: response(cell(cells, wk, load, p)) for p in LIMITS}
            finite = {p: v for p, v in r.items() if math.isfinite(v)}
            if not finite:
                continue
            if load < th.very_high - 1e-9:
                below += 1
                worst += r["SDF-MAX1"] >= max(finite.values())
            elif abs(load - th.very_high) < 1e-9:
                is_best = r["SDF-MAX1"] <= min(r.values())
                best90 += is_best
                if not is_best:
                    where_not.append(wk)
    bad = share(worst, below)
    n_wk = len(workloads(cells))
    first, second = bad > th.most, best90 == n_wk
    answer = (f"worst of the family in {worst}/{below} cells below 90% ({bad:.0%}); best of the family at 90% "
              f"on {best90}/{n_wk} workloads" + (f" (not on {', '.join(where_not)})" if where_not else ""))
    return src.result(bad, "share of cells below 90% where SDF-MAX1 is the family's worst", answer,
                      REPRODUCED if first and second else PARTLY if first or second else NOT_REPRODUCED)


def best_limit_shrinks(cells: pd.DataFrame, th: Thresholds) -> Claim:
    src = Source(
        "best_max_shrinks", "§6.1, §7",
        "In figure 3(a) notice that the higher the system load, the smaller the Max parameter must be to obtain "
        "the best performance. [§7:] They just optimize the performance for some particular workload and "
        "arrival rate.",
        "Per workload, the best limit k*(load) is the family member (k = 1, 2, 6, or 32 for SDF) with the lowest "
        "response at that load. Reproduced: k* never grows with load and is smaller at the top load than at the "
        f"bottom, on every workload; partly: on most (more than {th.most:.0%}).",
        "The higher the load, the smaller the best SDF-Max limit")
    if why := missing(cells, *LIMITS):
        return src.no_data(why)
    ok, parts = 0, []
    for wk in workloads(cells):
        best = []
        for load in loads(cells):
            r = {p: response(cell(cells, wk, load, p)) for p in LIMITS}
            best.append(LIMITS[min(r, key=lambda p: r[p])])
        shrinks = all(a >= b for a, b in zip(best, best[1:])) and best[-1] < best[0]
        ok += shrinks
        parts.append(f"{wk} " + "/".join(str(k) for k in best))
    n = len(parts)
    verdict = REPRODUCED if ok == n else PARTLY if share(ok, n) > th.most else NOT_REPRODUCED
    answer = (f"best limit at {', '.join(pct(l) for l in loads(cells))}: {'; '.join(parts)} "
              f"(32 = SDF); shrinking on {ok}/{n} workloads")
    return src.result(share(ok, n), "share of workloads whose best limit shrinks with load", answer, verdict)


def sdf_partitions_near_four(cells: pd.DataFrame, th: Thresholds) -> Claim:
    src = Source(
        "sdf_partitions_near_4", "§6.1",
        "While the SDF-Max=1 and SDF-Max=2 keep the partition size at constant values of 1 and 2, respectively, "
        "the other policies fail to lower their mean partition size at levels significantly less than four "
        "across the different speedup types and loads.",
        "'Not significantly less than four': every reported (unsaturated) cell of SDF and SDF-Max 6 has a mean "
        f"partition above {th.near_four_min:g}, closer to four than to SDF-Max 2's two; SDF-Max 1 and 2 stay "
        "within 0.05 of 1 and 2.",
        "SDF and SDF-Max 6 partitions stay near 4 or above; SDF-Max 1 and 2 at 1 and 2")
    if why := missing(cells, *LIMITS):
        return src.no_data(why)
    reported = cells[~cells.saturated.astype(bool)]
    big = reported[reported.policy.isin(["SDF", "SDF-MAX6"])]
    low = float(big.partition.min())
    where = big.loc[big.partition.idxmin()]
    fixed = {k: float((cells[cells.policy == f"SDF-MAX{k}"].partition - k).abs().max()) for k in (1, 2)}
    ok = low > th.near_four_min and all(v <= 0.05 for v in fixed.values())
    answer = (f"smallest SDF/SDF-Max 6 mean partition {low:.2f} ({where.policy}, {where.workload} "
              f"{pct(where.load)}); SDF-Max 1, 2 off 1, 2 by at most {fixed[1]:.3f}, {fixed[2]:.3f}")
    return src.result(low, "smallest mean partition of SDF and SDF-MAX6 (unsaturated cells)", answer,
                      REPRODUCED if ok else NOT_REPRODUCED)


CLAIMS = (sdf_saturates_poor_speedup, sdf_family_saturates_wk1, sdf_max1_only, sdf_max1_bad_except_90,
          best_limit_shrinks, sdf_partitions_near_four)
