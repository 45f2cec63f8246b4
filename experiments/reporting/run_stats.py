"""The numbers of a live experiment's report: cell statistics, errors against
the prediction, the targets and the paper's claims.

One function (`summarize`) makes every statistic, for measured and predicted
outcomes alike, so an error between the two can never come from computing
them differently. The method of independent replications: each replication
gives one figure per statistic; a cell's figure is the mean of its
replications' figures, and its 95% interval is Student's t over them.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from experiments.reporting.cell_claims import judge
from experiments.reporting.power import claim_plan
from experiments.reporting.stats import BAND, in_band, t_interval
from scheduler.jobs import Outcome

KEYS = ["policy", "rate", "replication"]
#: Statistic column -> the job column it summarizes and how.
STATS: dict[str, tuple[str, str]] = {
    "response": ("response", "mean"),
    "wait": ("wait", "mean"),
    "execution": ("execution", "mean"),
    "median_execution": ("execution", "median"),
    "mean_procs": ("mean_procs", "mean"),
    "preemptions": ("preemptions", "mean"),
    "response_norm": ("response_norm", "mean"),
    "median_execution_norm": ("execution_norm", "median"),
}
#: Per-replication statistics that do not come from the job columns (merged into the
#: replications' table by the caller when known): the mean synchronisation delay.
EXTRA_STATS = ("sync_delay",)
TICK, CROSS = "✓", "✗"


def normalised(outcomes: pd.DataFrame, *, measured: bool) -> pd.DataFrame:
    """Add execution_norm and response_norm: times as at the speed the prediction assumed.

    A measured job that ran at `delivered_speed` (relative to the assumed
    speed) would have executed in execution × delivered_speed at the assumed
    speed; its wait is kept as is. Jobs without a delivered speed get NaN, so
    a cell whose jobs have none reports raw errors only. Predictions ran at
    the assumed speed: their normalised times are the raw ones.
    """
    out = outcomes.copy()
    if not measured:
        out["execution_norm"], out["response_norm"] = out["execution"], out["response"]
        return out
    speed = (pd.to_numeric(out["delivered_speed"], errors="coerce") if "delivered_speed" in out
             else pd.Series(np.nan, index=out.index))
    out["execution_norm"] = out["execution"] * speed.where(speed > 0)
    out["response_norm"] = out["wait"] + out["execution_norm"]
    return out


def summarize(outcomes: pd.DataFrame, warmup: int) -> pd.DataFrame:
    """One row per (policy, rate, replication): jobs counted, failed, and every statistic.

    Counted jobs are those past warm-up (job_id >= warmup) that finished
    ('done'); failed jobs past warm-up are counted apart, never averaged in.
    """
    if "execution_norm" not in outcomes:  # a caller that did not normalise: raw figures only
        outcomes = outcomes.assign(execution_norm=np.nan, response_norm=np.nan)
    late = outcomes[outcomes.job_id >= warmup]
    done = late[late.status == Outcome.DONE]
    out = done.groupby(KEYS).agg(jobs=("job_id", "size"),
                                 **{name: (col, how) for name, (col, how) in STATS.items()})
    failed = late[late.status != Outcome.DONE].groupby(KEYS).size().rename("failed")
    out = out.join(failed, how="outer")
    out["jobs"] = out.jobs.fillna(0).astype(int)
    out["failed"] = out.failed.fillna(0).astype(int)
    return out.reset_index()


def paired_predictions(jobs: pd.DataFrame, predictions: pd.DataFrame) -> pd.DataFrame:
    """Predictions of the jobs that finished live only, so both sides average the same jobs
    (a job still running, or one that failed live, has no measured figure to compare)."""
    done = jobs.loc[jobs.status == Outcome.DONE, ["cell_id", "job_id"]]
    return predictions.merge(done, on=["cell_id", "job_id"], how="inner")


def cell_table(reps: pd.DataFrame) -> pd.DataFrame:
    """Per (policy, rate): replications, jobs, failed, mean of each statistic over
    replications and its 95% t half-width (NaN with a single replication)."""
    rows = []
    for (policy, rate), g in reps.groupby(["policy", "rate"], sort=True):
        row: dict[str, Any] = {"policy": policy, "rate": rate, "replications": len(g),
                               "jobs": int(g.jobs.sum()), "failed": int(g.failed.sum())}
        for name in _stats(reps):
            values = [float(v) for v in g[name] if pd.notna(v)]
            if values:
                iv = t_interval(values)
                row[name] = iv.mean
                row[f"{name}_ci"] = iv.half_width if math.isfinite(iv.half_width) else np.nan
            else:
                row[name], row[f"{name}_ci"] = np.nan, np.nan
        rows.append(row)
    cols = ["policy", "rate", "replications", "jobs", "failed"] + [c for n in _stats(reps) for c in (n, f"{n}_ci")]
    df = pd.DataFrame(rows, columns=cols)
    return df.astype({c: float for c in cols[5:]} | {"rate": float, "replications": int, "jobs": int,
                                                      "failed": int, "policy": object})


def _stats(table: pd.DataFrame) -> list[str]:
    """STATS, then the extra statistics the table has."""
    return [*STATS, *(n for n in EXTRA_STATS if n in table)]


def compare(measured: pd.DataFrame, predicted: pd.DataFrame, policies: Sequence[str] = ()) -> pd.DataFrame:
    """Measured and predicted cells side by side, with (predicted - measured) / measured per statistic;
    rows in the config's policy order, then by rate."""
    m = measured.rename(columns={c: f"measured_{c}" for c in measured.columns if c not in ("policy", "rate")})
    both = [n for n in _stats(predicted) if n in _stats(measured)]
    p = predicted[["policy", "rate", *both]].rename(columns={c: f"predicted_{c}" for c in both})
    out = m.merge(p, on=["policy", "rate"], how="left")
    for name in both:
        meas = out[f"measured_{name}"]
        out[f"err_{name}"] = (out[f"predicted_{name}"] - meas) / meas.where(meas != 0)
    out = out.rename(columns={"measured_replications": "replications", "measured_jobs": "jobs",
                              "measured_failed": "failed"})
    order = {p: i for i, p in enumerate(dict.fromkeys([*policies, *sorted(out.policy)]))}
    out["_order"] = out.policy.map(order)
    return out.sort_values(["_order", "rate"]).drop(columns="_order").reset_index(drop=True)


def with_bands(cmp: pd.DataFrame, cells: pd.DataFrame, bands: dict[int, dict[str, list[float]]],
               targets: Mapping[str, float] | None = None) -> pd.DataFrame:
    """The comparison with each ensemble statistic's mean as the prediction, and its band.

    For each (policy, rate) the replications' ensembles are averaged replay by replay (the
    cell's figure is a mean over replications, so its band is that of the mean). The single
    replay's figure stays as `single_<stat>`; the errors, raw and normalised, are against
    the ensemble's mean. Cells without a band (a store from before version 4) keep the
    single replay.
    `targets` (response_rel, execution_rel): with them, `chance_<stat>` is the fraction of
    replays within the target of the ensemble's mean: how often a run would meet the target
    by chance alone if the model were exact. A cell whose chance is low cannot show a
    model's error in one run, whichever way its verdict falls.
    """
    if not bands or cmp.empty:
        return cmp
    out = cmp.copy()
    banded = [stat for stat in BANDED if f"predicted_{stat}" in out
              and (stat in ("response", "median_execution") or any(stat in b for b in bands.values()))]
    for stat in banded:
        out[f"single_{stat}"] = out[f"predicted_{stat}"]
        out[f"band_{stat}_lo"], out[f"band_{stat}_hi"] = np.nan, np.nan
    for i, row in out.iterrows():
        ids = cells.cell_id[(cells.policy == row.policy) & (cells.rate == row.rate)]
        own = [bands[c] for c in ids if c in bands]
        if not own:
            continue
        for stat in banded:
            runs = np.array([b[stat] for b in own if stat in b], dtype=float)
            if runs.size == 0 or len({len(r) for r in runs}) != 1:
                continue
            per_replay = runs.mean(axis=0)
            out.loc[i, f"predicted_{stat}"] = float(np.mean(per_replay))
            out.loc[i, f"band_{stat}_lo"], out.loc[i, f"band_{stat}_hi"] = np.quantile(per_replay, BAND)
            target = (targets or {}).get(TARGET_OF.get(stat, ""))
            mean = float(np.mean(per_replay))
            if target is not None and mean > 0:
                out.loc[i, f"chance_{stat}"] = float(np.mean(np.abs(per_replay / mean - 1) <= target))
    for stat in ("response", "median_execution"):
        for suffix in ("", "_norm"):
            meas = out.get(f"measured_{stat}{suffix}")
            if meas is not None:
                out[f"err_{stat}{suffix}"] = (out[f"predicted_{stat}"] - meas) / meas.where(meas != 0)
    return out


#: The statistics a band may be given for (experiments.predict.ENSEMBLE_STATS; a store made
#: before the noise model has the first two only).
BANDED = ("response", "median_execution", "wait", "mean_procs", "preemptions")
TARGET_OF = {"response": "response_rel", "median_execution": "execution_rel"}  # a statistic's target key


def parse_interval_set(text: Any) -> tuple[int, ...]:
    """'0-2 5' -> (0, 1, 2, 5): the inverse of scheduler.results.interval_set."""
    out: list[int] = []
    for part in str(text if isinstance(text, str) else "").split():
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return tuple(out)


def resize_diagnostic(samples: pd.DataFrame, profiles: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """Per class: the run's measured resize cost beside the profiled fit's cost for the same resizes.

    A diagnostic only: predictions never use the measured side (they would be
    fitted to what they are checked against).
    """
    from experiments.replay import profiled_resize

    rows = []
    for cls, p in sorted(profiles.items()):
        own = samples[samples["cls"] == cls] if len(samples) else samples
        fit = profiled_resize(p)
        profiled = [fit.cost(parse_interval_set(r.from_procs), parse_interval_set(r.to_procs))
                    for r in own.itertuples(index=False)] if fit is not None and len(own) else []
        measured = float(own["reconfig_s"].median()) if len(own) else math.nan
        prof = float(np.median(profiled)) if profiled else math.nan
        rows.append({"class": cls, "resizes measured": len(own), "measured median (s)": num(measured),
                     "profiled, same resizes (s)": num(prof) if fit is not None else "no resize profile",
                     "profiled - measured": pct((prof - measured) / measured) if measured > 0 else "n/a"})
    return pd.DataFrame(rows, columns=["class", "resizes measured", "measured median (s)",
                                       "profiled, same resizes (s)", "profiled - measured"])


def rate_label(rate: float) -> str:
    return f"{rate:g}/s"


def pct(x: float, sign: bool = True) -> str:
    return "n/a" if not np.isfinite(x) else (f"{x:+.1%}" if sign else f"{x:.1%}")


def num(x: float) -> str:
    return "n/a" if not np.isfinite(x) else f"{x:.2f}"


def _mark(err: float, target: float) -> str:
    return "" if not np.isfinite(err) else (TICK if abs(err) <= target else CROSS)


def error_table(cmp: pd.DataFrame, targets: dict[str, float]) -> pd.DataFrame:
    """The report's error table, formatted: mean response and median execution, measured vs predicted."""
    r_t, e_t = targets["response_rel"], targets["execution_rel"]

    def norm(col: str) -> list[str]:
        errs = cmp[col] if col in cmp else pd.Series(np.nan, index=cmp.index)
        return [pct(x) if np.isfinite(x) else "raw only" for x in errs.astype(float)]

    def band(stat: str) -> list[str]:
        lo, hi = cmp[f"band_{stat}_lo"].astype(float), cmp[f"band_{stat}_hi"].astype(float)
        return ["n/a" if not (np.isfinite(a) and np.isfinite(b)) else f"{a:.2f}-{b:.2f}" for a, b in zip(lo, hi)]

    def inside(stat: str) -> list[str]:
        return ["" if b is None else (TICK if b else CROSS) for b in in_band(cmp, stat)]

    def chance() -> list[str]:
        """How often an exact model's run meets both targets (the two taken as independent)."""
        both = cmp["chance_response"].astype(float) * cmp["chance_median_execution"].astype(float)
        return [f"{x:.0%}" if np.isfinite(x) else "n/a" for x in both]

    banded = "band_response_lo" in cmp
    table = {
        "policy": cmp.policy,
        "rate": [rate_label(r) for r in cmp.rate],
        "response measured (s)": [num(x) for x in cmp.measured_response],
        "response predicted (s)": [num(x) for x in cmp.predicted_response],
        **({"response, 90% band (s)": band("response"), "response in band": inside("response")}
           if banded else {}),
        "response error": [pct(x) for x in cmp.err_response],
        f"within {r_t:.0%}": [_mark(x, r_t) for x in cmp.err_response],
        "median execution measured (s)": [num(x) for x in cmp.measured_median_execution],
        "median execution predicted (s)": [num(x) for x in cmp.predicted_median_execution],
        **({"median execution, 90% band (s)": band("median_execution"),
            "execution in band": inside("median_execution")} if banded else {}),
        "execution error": [pct(x) for x in cmp.err_median_execution],
        f"within {e_t:.0%}": [_mark(x, e_t) for x in cmp.err_median_execution],
        "response error, speed-normalised": norm("err_response_norm"),
        "execution error, speed-normalised": norm("err_median_execution_norm"),
        **({"chance within both by luck": chance()} if "chance_response" in cmp else {}),
    }
    return pd.DataFrame(table)


def sync_table(cmp: pd.DataFrame) -> pd.DataFrame:
    """Mean synchronisation delay per cell (ack to new partition, seconds), measured ± 95% and predicted;
    empty when no cell has a resize."""
    if "measured_sync_delay" not in cmp or not cmp.measured_sync_delay.notna().any():
        return pd.DataFrame()
    pred = cmp["predicted_sync_delay"] if "predicted_sync_delay" in cmp else pd.Series(np.nan, index=cmp.index)
    err = cmp["err_sync_delay"] if "err_sync_delay" in cmp else pd.Series(np.nan, index=cmp.index)
    ci = cmp["measured_sync_delay_ci"]
    return pd.DataFrame({
        "policy": cmp.policy, "rate": [rate_label(r) for r in cmp.rate],
        "measured (s)": [num(x) + (f" ± {num(h)}" if np.isfinite(h) else "") for x, h in zip(cmp.measured_sync_delay, ci)],
        "predicted (s)": [num(x) for x in pred], "error": [pct(x) for x in err]})


def targets_text(cmp: pd.DataFrame, targets: dict[str, float]) -> str:
    """Plain sentences: which cells miss which target, and by how much."""
    out = []
    for stat, key, what in (("response", "response_rel", "mean response"),
                            ("median_execution", "execution_rel", "median execution")):
        target = targets[key]
        err = cmp[f"err_{stat}"]
        known = cmp[np.isfinite(err.astype(float))]
        missed = known[known[f"err_{stat}"].abs() > target]
        head = f"{what.capitalize()} within {target:.0%}"
        n = len(cmp)
        if known.empty:
            out.append(f"{head}: no cell has both a measured and a predicted value.")
            continue
        if missed.empty:
            sentence = f"{head}: met in all {len(known)} cells."
        else:
            where = "; ".join(f"{p} at {rate_label(rt)}: {pct(e)}"
                              for p, rt, e in zip(missed.policy, missed.rate, missed[f"err_{stat}"]))
            sentence = (f"Missed: {what} within {target:.0%} in {len(missed)} of {len(known)} cells ({where}); "
                        f"met in {len(known) - len(missed)}.")
        if len(known) < n:
            sentence += f" {n - len(known)} cell(s) without data."
        out.append(sentence)
    if "chance_response" in cmp:
        both = (cmp["chance_response"].astype(float) * cmp["chance_median_execution"].astype(float)).dropna()
        if not both.empty:
            out.append(f"By the model's own run-to-run spread, an exact model would meet both targets in all "
                       f"{len(both)} cells of one run with probability {float(np.prod(both)):.0%} "
                       f"(column 'chance within both by luck').")
    return " ".join(out)


def _with_figures(words: str, ours: str) -> str:
    """The prediction's verdict with its own figures, so the predicted gap stays in the table."""
    return f"{words} (predicted: {ours})" if ours and ours not in words else words


def claims_table(claims: Sequence[dict[str, Any]], measured: pd.DataFrame, predicted: pd.DataFrame,
                 all_rates: Sequence[float], measured_reps: pd.DataFrame | None = None,
                 predicted_reps: pd.DataFrame | None = None,
                 seconds_per_replication: float = math.nan) -> pd.DataFrame:
    """One row per claim: verdict and margins on the measured cells (paired by replication when the
    replications are given), whether the verdict stands outside the 95% interval, the paper's number, the
    prediction's verdict (experiments/reporting/cell_claims.py) and, for an unresolved claim, how many
    replications would resolve it with 80% chance and about how long they take (experiments/reporting/power.py)."""
    rows = []
    for c in claims:
        m = judge(c, measured, all_rates, measured_reps)
        p = judge(c, predicted, all_rates, predicted_reps)
        rows.append({"claim": c["text"], "metric": c["metric"], "verdict": m.verdict.value,
                     "measured": m.words, "margin per rate": m.detail,
                     "predicted": _with_figures(p.words or p.verdict.value, p.ours), "paper": c.get("paper_value", ""),
                     "ours": m.ours, "outside the 95% interval": m.interval,
                     "replications to resolve": claim_plan(m, seconds_per_replication=seconds_per_replication)})
    return pd.DataFrame(rows, columns=["claim", "metric", "verdict", "measured", "margin per rate", "predicted",
                                       "paper", "ours", "outside the 95% interval", "replications to resolve"])
