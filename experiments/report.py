"""`nowlab report`: a live experiment's results store as report.md, report.html,
figures and CSVs.

Every number is computed from the store (measured jobs, the simulator's
predictions of the same streams, calibration and profiles); the only fixed
text explains how to read them. Statistics are in `reporting.run_stats`, figures
in `reporting.plots`; this module loads the store and lays the report out.
"""
from __future__ import annotations

import html
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from experiments.estimate import duration_line
from experiments.reporting import tables
from experiments.reporting.plots import write_figures
from experiments.reporting.stats import in_band
from experiments.models import loop
from experiments.replay import resize_samples
from experiments.reporting.cell_claims import judge
from experiments.reporting.claims import Claim
from experiments.reporting.run_stats import (cell_table, claims_table, compare, error_table, normalised,
                                      paired_predictions, rate_label, resize_diagnostic, summarize, sync_table,
                                      targets_text, with_bands)
from experiments import miss_causes, sync_delay
from experiments.store import ResultsStore
from experiments.governor_hold import GovernorHold, governor_hold
from experiments import profile_checks
from experiments.models import speed_basis
from experiments.unresized import by_size, drift_text, unresized
from scheduler.jobs import Outcome

DEFAULT_TARGETS = {"response_rel": 0.10, "execution_rel": 0.05}
_OUTCOME = ["arrival", "start", "finish", "wait", "execution", "response", "mean_procs", "max_procs", "preemptions"]


@dataclass(frozen=True)
class ReportPaths:
    """Everything `write_report` wrote."""

    out_dir: Path
    markdown: Path
    html: Path
    cells_csv: Path
    jobs_csv: Path
    figures: list[Path]


@dataclass(frozen=True)
class Analysis:
    """A store's contents and every table computed from them."""

    path: Path
    config: dict[str, Any]
    cells: pd.DataFrame  # the store's cells (status, segments, resumed)
    jobs: pd.DataFrame
    predictions: pd.DataFrame
    compared: pd.DataFrame  # per (policy, rate): measured, predicted, errors
    claims: pd.DataFrame
    calibration: dict[str, Any] | None
    profiles: dict[str, dict[str, Any]]
    resizes: pd.DataFrame  # per class: measured resize cost beside the profiled one (diagnostic)
    duration: str = ""  # estimated beside real (experiments.estimate.plan_vs_real), "" when not known
    measured: pd.DataFrame = field(default_factory=pd.DataFrame)  # cell_table of the measured jobs
    predicted: pd.DataFrame = field(default_factory=pd.DataFrame)  # cell_table of their predictions
    backend: str = "docker"  # where the cluster ran (testbed.backends.KINDS)
    unresized: pd.DataFrame = field(default_factory=pd.DataFrame)  # jobs that kept one partition (diagnostic)
    governor: GovernorHold | None = None  # how well the governor held the speeds over the cells (diagnostic)
    misses: pd.DataFrame = field(default_factory=pd.DataFrame)  # each cell's missed target and its cause
    band_noise: str = ""  # the noise model the bands were drawn with, in words ("" before experiments/noise.py)
    band_replays: int = 0  # replays per cell in the bands
    measured_reps: pd.DataFrame | None = None  # one row per policy, rate and replication (run_stats.summarize)
    predicted_reps: pd.DataFrame | None = None

    @property
    def targets(self) -> dict[str, float]:
        return {**DEFAULT_TARGETS, **(self.config.get("targets") or {})}

    @property
    def warmup(self) -> int:
        return int(self.config.get("arrivals", {}).get("warmup", 0))


def analyse(results: Path) -> Analysis:
    """Read a store (read-only: a run may still be writing it) and compute every table."""
    with ResultsStore.open(results, readonly=True) as store:
        config, cells = store.config, store.cells_frame()
        jobs, preds = store.jobs_frame(), store.predictions_frame()
        calibration, profiles = store.latest_calibration(), store.profiles()
        samples = resize_samples(store, cells) if not cells.empty else pd.DataFrame(columns=["cls", "reconfig_s"])
        duration = duration_line(store)
        warmup = int(config.get("arrivals", {}).get("warmup", 0))
        sync_measured = sync_delay.measured(store, cells, warmup)
        sync_predicted = _predicted_sync(store, cells, warmup, preds)
        bands = store.bands()
        noise_words = sorted({str(n.get("noise", "")) for n in store.band_notes().values()} - {""})
        replays = max((len(v) for b in bands.values() for v in b.values()), default=0)
        backend = store.backend
        quotas = [text for name, text in store.artifacts(None).items() if name.startswith("quotas")]
        span = [(c["created_at"], c["updated_at"]) for c in store.timeline()["cells"]] if quotas else []
    arrivals = config.get("arrivals", {})
    at_basis = on_speed_basis(jobs, profiles, (config.get("profile") or {}).get("speed_basis", "reference"))
    measured_reps = sync_delay.merge(summarize(normalised(at_basis, measured=True), warmup), sync_measured)
    predicted_reps = sync_delay.merge(
        summarize(normalised(paired_predictions(jobs, preds), measured=False), warmup), sync_predicted)
    measured, predicted = cell_table(measured_reps), cell_table(predicted_reps)
    targets = {**DEFAULT_TARGETS, **(config.get("targets") or {})}
    cmp = with_bands(compare(measured, predicted, config.get("policies", ())), cells, bands, targets)
    # Looked up, not merged: before any job is stored `cmp` is empty and its rate column untyped.
    resumed = cells[cells.resumed].groupby(["policy", "rate"]).size()
    cmp["resumed"] = [int(resumed.get((p, float(r)), 0)) for p, r in zip(cmp.policy, cmp.rate)]
    rates = arrivals.get("rates") or sorted(set(cmp.rate))
    claims = claims_table(config.get("claims", config.get("claim", [])), measured, predicted, rates,
                          measured_reps, predicted_reps, seconds_per_replication(cells))
    return Analysis(Path(results), config, cells, jobs, preds, cmp, claims, calibration, profiles,
                    resize_diagnostic(samples, profiles), duration, measured, predicted, backend,
                    unresized(at_basis, config, {k: profile_checks.at_start(v) for k, v in profiles.items()}),
                    _held(quotas, span),
                    miss_causes.misses(cmp, jobs, preds, miss_causes.models_for(config, profiles), targets, warmup),
                    measured_reps=measured_reps, predicted_reps=predicted_reps,
                    band_noise="; ".join(noise_words), band_replays=replays)


def seconds_per_replication(cells: pd.DataFrame) -> float:
    """The run's measured cost of one replication (every policy and rate once): the cells' elapsed seconds
    over the replications run; NaN before any cell ran."""
    if cells.empty or "elapsed_s" not in cells:
        return math.nan
    total, n = float(pd.to_numeric(cells.elapsed_s, errors="coerce").sum()), int(cells.replication.nunique())
    return total / n if n and total > 0 else math.nan


def measured_claims(store: ResultsStore, replications: Sequence[int]) -> list[Claim]:
    """The config's claims judged on the measured jobs of `replications` alone (the complete ones, for
    `--until-resolved`), paired by replication, as the report's claims table judges them."""
    config, cells = store.config, store.cells_frame()
    claims = config.get("claims", config.get("claim", []))
    rates = config.get("arrivals", {}).get("rates") or []
    warmup = int(config.get("arrivals", {}).get("warmup", 0))
    keep = {int(r) for r in replications}
    cells = cells[cells.replication.isin(keep)]
    jobs = store.jobs_frame()
    jobs = jobs[jobs.cell_id.isin(set(cells.cell_id))]
    if jobs.empty:
        empty = pd.DataFrame(columns=["policy", "rate", "replications"])
        return [judge(c, empty, rates) for c in claims]
    at_basis = on_speed_basis(jobs, store.profiles(), (config.get("profile") or {}).get("speed_basis", "reference"))
    reps = sync_delay.merge(summarize(normalised(at_basis, measured=True), warmup),
                            sync_delay.measured(store, cells, warmup))
    return [judge(c, cell_table(reps), rates, reps) for c in claims]


def on_speed_basis(jobs: pd.DataFrame, profiles: dict[str, dict], basis: str) -> pd.DataFrame:
    """The jobs with each delivered speed made relative to the speed its prediction assumed
    (experiments/models/speed_basis.py): unchanged under "reference"; under "as-profiled", to
    the speed the profile's runs on the job's largest partition were delivered."""
    if speed_basis.check(basis) == "reference" or jobs.empty or "delivered_speed" not in jobs:
        return jobs
    factors = [speed_basis.job_factor(profiles.get(c) or {}, int(p), basis) for c, p in zip(jobs.cls, jobs.max_procs)]
    return jobs.assign(delivered_speed=pd.to_numeric(jobs.delivered_speed, errors="coerce") * factors)


def _held(quotas: list[str], span: list[tuple[float, float]]) -> GovernorHold | None:
    """The governor diagnostic over the cells' span (None before any cell, or with no governed workstation)."""
    if not span or not quotas:
        return None
    return governor_hold(quotas, min(s for s, _ in span), max(e for _, e in span))


def _predicted_sync(store: ResultsStore, cells: pd.DataFrame, warmup: int, preds: pd.DataFrame) -> pd.DataFrame:
    """The simulator's synchronisation delays, once the cells have predictions (the replay's inputs exist)."""
    if preds.empty:
        return pd.DataFrame(columns=sync_delay.COLUMNS)
    try:
        return sync_delay.predicted(store, cells, warmup)
    except (KeyError, ValueError) as exc:  # a profile or config the replay cannot read: no predicted delay
        print(f"warning: no predicted synchronisation delay: {exc}")
        return pd.DataFrame(columns=sync_delay.COLUMNS)


def coverage_text(a: Analysis) -> str:
    """'in band: mean response 5 of 6, median execution 6 of 6, ...' over this run's cells
    ('' without bands); a cell without a figure or a band is counted apart as n/a."""
    parts = []
    for stat, name in (("response", "mean response"), ("median_execution", "median execution"),
                       ("wait", "mean wait"), ("mean_procs", "mean partition")):
        if f"band_{stat}_lo" not in a.compared:
            continue
        inside = in_band(a.compared, stat)
        known = [b for b in inside if b is not None]
        missing = len(inside) - len(known)
        parts.append(f"{name} {sum(known)} of {len(known)}" + (f" (n/a: {missing})" if missing else ""))
    return "in the 90% band: " + ", ".join(parts) if parts else ""


def band_text(a: Analysis) -> str:
    """How the bands were made, as the report says it."""
    if a.band_noise:
        how = (f" Predicted: the mean of {a.band_replays} replays of the cell's stream; in each, every job's work "
               "is drawn from the noise model measured on the other committed live runs (experiments/noise.py: "
               "a factor the whole run shares, one per cell, one per job, each with its uncertainty): "
               f"{a.band_noise}.")
    else:
        how = (f" Predicted: the mean of {a.band_replays} replays of the cell's stream in which every job's work is "
               "drawn around its class model with the run-to-run noise of the class's profile runs (a store "
               "made before the noise model: `nowlab report --predict` draws its bands again).")
    return (how + " The 90% band is the replays' 5% to 95% points, how far one run may stray by chance alone. "
            "In band: the measured figure (speed-normalised where metered) lies inside it; "
            + coverage_text(a) + ".")


def error_table_text(results: Path | Analysis) -> str:
    """The error table and the targets paragraph as markdown, for the terminal."""
    a = results if isinstance(results, Analysis) else analyse(results)
    if a.compared.empty:
        return "No measured jobs past warm-up yet."
    lines = [line for line in (coverage_text(a), bias_text(a), identical_cv_text(a)) if line]
    return (f"{md_table(error_table(a.compared, a.targets))}\n\n{targets_text(a.compared, a.targets)}\n"
            + "".join(f"\n{line}" for line in lines) + ("\n" if lines else ""))


def bias_text(a: Analysis) -> str:
    """'bias: mean signed error of mean response, speed-normalised, -2.1% over 6 cells (raw -3.0%)'."""
    cmp = a.compared
    norm = cmp.get("err_response_norm", pd.Series(dtype=float)).astype(float).dropna()
    raw = cmp.get("err_response", pd.Series(dtype=float)).astype(float).dropna()
    if raw.empty:
        return ""
    shown = f"speed-normalised {norm.mean():+.1%}, raw {raw.mean():+.1%}" if len(norm) else f"raw {raw.mean():+.1%}"
    return f"bias: mean signed error of mean response {shown} over {len(raw)} cells"


def identical_cv_text(a: Analysis) -> str:
    """The spread of identical jobs on one workstation: the pooled within-class standard
    deviation of the log time of the profile's p = 1 runs, brought to the reference speed by the
    meter (about the CV at these sizes), with its degrees of freedom; the demo's jobs seldom run
    alone on one workstation, so the profile's repetitions are the identical ones."""
    squares, dof, runs = 0.0, 0, 0
    for profile in a.profiles.values():
        logs = [math.log(s["time_s"]) for s in loop.normalised_samples(profile.get("samples") or [], profile.get("ref_speed"))
                if int(s["p"]) == 1 and s["time_s"] > 0]
        if len(logs) >= 2:
            mean = sum(logs) / len(logs)
            squares += sum((x - mean) ** 2 for x in logs)
            dof += len(logs) - 1
            runs += len(logs)
    if not dof:
        return "speed-normalised CV of identical p = 1 jobs: n/a (no class profiled twice at p = 1)"
    return (f"speed-normalised CV of identical p = 1 jobs: {math.sqrt(squares / dof):.1%} "
            f"(profile runs, pooled over classes: {runs} runs, {dof} dof)")


def write_report(results: Path, out_dir: Path | None = None) -> ReportPaths:
    """Write report.md, report.html, the figures, cells.csv and jobs.csv (default:
    `<results stem>-report/` next to the store)."""
    results = Path(results)
    a = analyse(results)
    out = Path(out_dir) if out_dir is not None else results.with_name(f"{results.stem}-report")
    out.mkdir(parents=True, exist_ok=True)
    figures = write_figures(a.compared, out, a.config.get("title", a.config.get("name", "")), band_causes(a))
    cells_csv, jobs_csv = out / "cells.csv", out / "jobs.csv"
    a.compared.to_csv(cells_csv, index=False)
    jobs_table(a).to_csv(jobs_csv, index=False)
    blocks = report_blocks(a, [f.name for f in figures])
    md, page = out / "report.md", out / "report.html"
    md.write_text(render_markdown(blocks))
    page.write_text(render_html(blocks, a.config.get("title", "")))
    return ReportPaths(out, md, page, cells_csv, jobs_csv, figures)


def band_causes(a: Analysis) -> dict[tuple[str, float, str], str]:
    """(policy, rate, statistic) -> the computed cause of a cell's miss, for the band figure."""
    keys = {"response": "response", "median execution": "median_execution"}
    if a.misses.empty or "cause" not in a.misses:
        return {}
    return {(m.policy, float(m.rate), keys.get(m.statistic, m.statistic)): str(m.cause)
            for m in a.misses.itertuples(index=False)}


def jobs_table(a: Analysis) -> pd.DataFrame:
    """Every measured job beside its prediction (measured_* and predicted_*), warm-up flagged."""
    ids = ["policy", "rate", "replication", "cell_id", "job_id", "cls", "demand", "requested", "warmup",
           "segment", "status", "error"]
    m = a.jobs[ids + _OUTCOME].rename(columns={c: f"measured_{c}" for c in _OUTCOME})
    p = a.predictions[["cell_id", "job_id", *_OUTCOME[1:]]].rename(columns={c: f"predicted_{c}" for c in _OUTCOME})
    return m.merge(p, on=["cell_id", "job_id"], how="left")


# ---- layout ------------------------------------------------------------------------------------

Block = tuple[str, Any]  # ("h1" | "h2" | "p" | "ul", text or list) or ("table", DataFrame) or ("img", file name)


def shown_path(path: object) -> str:
    """A stored path as a reader of the committed report can follow it: relative to the
    repository when it lies inside, so a report does not name the machine it was made on."""
    root = Path(__file__).resolve().parent.parent
    try:
        return str(Path(str(path)).resolve().relative_to(root))
    except ValueError:
        return str(path)


def report_blocks(a: Analysis, figure_names: list[str]) -> list[Block]:
    """The report as a list of blocks, rendered alike to markdown and HTML."""
    c, arr = a.config, a.config.get("arrivals", {})
    blocks: list[Block] = [("h1", c.get("title") or c.get("name", "experiment"))]
    if c.get("paper"):
        blocks.append(("p", f"Reproduces: {c['paper']}."))
    blocks.append(("p", f"Results: {a.path.name}; report made {time.strftime('%Y-%m-%d %H:%M')}."))
    blocks += [("h2", "Configuration"), ("ul", [
        f"cluster: {shown_path(c.get('cluster', 'n/a'))}" + ("" if a.backend == "docker" else f", on the {a.backend} backend"),
        *speed_scale_lines(c),
        *speed_basis_lines(c),
        f"policies: {', '.join(c.get('policies', []))}",
        f"arrival rates: {', '.join(rate_label(r) for r in arr.get('rates', []))}",
        (f"jobs per run: {arr.get('jobs', 'n/a')}, of which the first {arr.get('warmup', 0)} are warm-up "
         "(stored, left out of every statistic)"),
        f"replications: {arr.get('replications', 'n/a')}; seed: {arr.get('seed', 'n/a')}",
        *([f"demand: {arr['demand']}"] if "demand" in arr else []),
        *([f"class mix: {', '.join(f'{k} {v:g}' for k, v in arr['mix'].items())}"] if arr.get("mix") else []),
        (f"targets: mean response within {a.targets['response_rel']:.0%}, "
         f"median execution within {a.targets['execution_rel']:.0%} of the prediction"),
        *([f"duration: {a.duration}"] if a.duration else []),
    ])]
    blocks += [("h2", "Calibration"), ("p", calibration_text(a.calibration))]
    if a.governor is not None:
        blocks.append(("p", a.governor.text()))
    blocks += [("h2", "Profiles")]
    prof = profiles_frame(a.profiles)
    blocks.append(("table", prof) if not prof.empty else ("p", "No profile stored."))
    if not a.resizes.empty:
        blocks += [("p", ("Resize cost, diagnostic: this run's measured resizes beside what the profile's fit "
                          "(fixed + bytes over the link) gives for the same resizes. Predictions use the "
                          "profile only.")), ("table", a.resizes)]
    if not a.unresized.empty:
        drift = drift_text(a.unresized)
        blocks += [("p", ("Profile, diagnostic: the jobs that kept one partition from start to end (never "
                          "resized or preempted) beside what the profile gives for a job alone on as many "
                          "workstations (its T(p) and start-up). Above 1: they ran slower than the profile "
                          "taken at the run's start."
                          + (f" Median over all of them, then over the first and second half of the run: {drift}."
                             if drift else ""))),
                   ("table", by_size(a.unresized))]
    checked = profile_checks.drift_text(a.profiles)
    if checked:
        blocks.append(("p", ("Profile checks: one job of a class alone after each cell (`[profile] between_cells`), "
                             "its loop time beside the median of the profile's runs before the first cell on as "
                             "many workstations, both brought to the profile's speed by the meter; median, then "
                             f"over the first and second half of the checks: {checked}. The predictions fit each "
                             "class from these runs and the profile's together; the policies and the diagnostic "
                             "above use the profile before the first cell.")))
    overhead = c.get("overhead") or {}
    if any(overhead.get(k) for k in ("launch_s", "resize_s")):
        blocks.append(("p", f"Overhead knob: {overhead.get('launch_s', 0):g} s added to every launch and "
                            f"{overhead.get('resize_s', 0):g} s to every resize, live and predicted."))
    blocks += [("h2", "Figures"), ("p", ("Solid lines with circles: measured (bars: 95% interval over "
                                         "replications); dashed with crosses: predicted by the simulator."))]
    blocks += [("img", name) for name in figure_names]
    blocks += [("h2", "Measured against predicted")]
    if a.compared.empty:
        blocks.append(("p", "No measured jobs past warm-up yet."))
    else:
        blocks += [("table", error_table(a.compared, a.targets)), ("p", targets_text(a.compared, a.targets)),
                   ("p", ("Error = (predicted - measured) / measured. Each replication gives one figure per "
                          "statistic; a cell's figure is the mean over its replications. Predicted figures are "
                          "over the same jobs as the measured ones: past warm-up and completed live."
                          + (band_text(a) if "band_response_lo" in a.compared else ""))),
                   ("p", "; ".join(t for t in (bias_text(a), identical_cv_text(a)) if t) + ".")]
        if not a.misses.empty:
            blocks += [("h2", f"Why each miss ({miss_causes.counts_text(a.misses)})"),
                       ("table", miss_causes.table(a.misses)), ("p", miss_causes.LEGEND)]
    sync = sync_table(a.compared) if not a.compared.empty else pd.DataFrame()
    if not sync.empty:
        blocks += [("h2", "Synchronisation delay"),
                   ("p", ("Mean time from a job's acknowledgment of a preemption to its new partition (Padhye & "
                          "Dowdy §2.3): live, each resize's held_s; predicted, ack to resize in the simulator's "
                          "timeline. n/a: the cell had no resize.")), ("table", sync)]
    blocks += [("h2", "Claims")]
    blocks.append(("table", a.claims) if not a.claims.empty else ("p", "The config states no claims."))
    if not a.claims.empty:
        blocks.append(("p", ("Margin = (than - lower) / than of the claim's metric at each rate (± its 95% "
                             "half-width, paired by replication: every policy and rate of the run ran replication "
                             "r's arrival stream, so the test and n in brackets are a paired t over the "
                             "replications). A claim holds when every condition holds outside its 95% interval at "
                             "every rate it names, fails when one fails outside it (a reversed sign never holds), "
                             "and is unresolved otherwise, as is any condition without an interval (one "
                             "replication). A peak needs a rate resolvably above both neighbours; a comparison "
                             "against a figure that is 0 in every replication is by construction, not counted "
                             "(experiments/reporting/claims.py, cell_claims.py). Replications to resolve: for an unresolved "
                             "claim, the most replications any of its unresolved checks needs to resolve at 95% with "
                             "80% chance, were its effect what the replications so far say (paired t, noncentral; "
                             "experiments/reporting/power.py), and the time the further ones take at this run's "
                             "measured seconds per replication. Claim kinds and their tolerances: "
                             "experiments/README.md.")))
    blocks += [("h2", "Failed jobs"), _failed_block(a)]
    blocks += [("h2", "Interrupted, resumed and unfinished cells"), _disturbed_block(a)]
    blocks += [("h2", "Files"), ("ul", ["cells.csv: one row per policy and rate, every statistic",
                                        "jobs.csv: every measured job beside its prediction"])]
    return blocks


def speed_scale_lines(config: dict[str, Any]) -> list[str]:
    """The run's `--speed-scale`, if it had one (none for 1, as every run before the option)."""
    k = config.get("speed_scale", 1)
    if k == 1:
        return []
    if config.get("work_follows_speed"):
        return [f"speeds scaled by {k:g} (`--speed-scale`): every workstation ran at {k:g}x the cluster spec's "
                f"reference cores, this host being too slow for them, and every class's work was scaled by {k:g} "
                "too (`work_follows_speed`), so jobs took about as long as at the spec's speeds"]
    return [f"speeds scaled by {k:g} (`--speed-scale`): every workstation ran at {k:g}x the cluster spec's "
            "reference cores, this host being too slow for them; work is in reference-seconds, so jobs took "
            f"about {1 / k:.2g}x as long as at the spec's speeds"]


def speed_basis_lines(config: dict[str, Any]) -> list[str]:
    """The `[profile] speed_basis`, when it is not the default reference speed."""
    if (config.get("profile") or {}).get("speed_basis", "reference") == "reference":
        return []
    return ["predicted at the speed the profile's runs were delivered (`[profile] speed_basis = \"as-profiled\"`): "
            "its times as measured, not brought to one reference speed; speed-normalised errors bring each "
            "live job to the speed of the profile's runs on its largest partition"]


def calibration_text(cal: dict[str, Any] | None) -> str:
    """A line per calibration part: how far delivered CPU and link rates were from the asked ones."""
    if not cal:
        return "No calibration stored."
    parts = []
    if isinstance(cal.get("time"), (int, float)):
        parts.append(f"Taken {time.strftime('%Y-%m-%d %H:%M', time.localtime(cal['time']))}.")
    for key, what in (("cpu", "workstations (CPU share)"), ("links", "links (rate)")):
        samples = [s for s in cal.get(key, []) if isinstance(s, dict) and isinstance(s.get("error"), (int, float))]
        for governed, group in ((False, [s for s in samples if not s.get("governed")]),
                                (True, [s for s in samples if s.get("governed")])):
            errs = [s["error"] for s in group]
            if not errs:
                continue
            if governed:  # the ceiling is not the speed: the governor holds the quota under it on purpose
                parts.append(f"{len(errs)} governed workstations (CPU share against the cap reserved as the "
                             f"governor's ceiling, which it holds each quota under; each job's delivered speed "
                             f"is metered): {min(errs):+.1%} to {max(errs):+.1%}.")
            else:
                parts.append(f"{len(errs)} {what}: measured vs asked {min(errs):+.1%} to {max(errs):+.1%}.")
    if len(parts) <= 1:
        parts.append(f"Keys: {', '.join(sorted(k for k in cal if k != 'calibration_id'))}.")
    return " ".join(parts)


def profiles_frame(profiles: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """Per class, the scalar keys present (W, alpha, beta, pmax, fit error first)."""
    first = ["W", "alpha", "beta", "pmax", "fit_error", "error"]
    keys = [k for k in first if any(k in p for p in profiles.values())]
    keys += sorted({k for p in profiles.values() for k, v in p.items()
                    if k not in first and isinstance(v, (int, float, str, bool))})
    rows = [{"class": cls, **{k: _fmt(p.get(k, "")) for k in keys}} for cls, p in profiles.items()]
    return pd.DataFrame(rows, columns=["class", *keys])


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}" if math.isfinite(v) else "n/a"
    return str(v)


def _failed_block(a: Analysis) -> Block:
    failed = a.jobs[a.jobs.status != Outcome.DONE]
    if failed.empty:
        return ("p", "None.")
    return ("ul", [f"{r.policy} at {rate_label(r.rate)}, replication {r.replication}, job {r.job_id} "
                   f"(class {r.cls}{', warm-up' if r.warmup else ''}): {r.error or 'no reason recorded'}"
                   for r in failed.itertuples(index=False)])


def _disturbed_block(a: Analysis) -> Block:
    """Cells whose run was interrupted (their system state was disturbed), and cells not done."""
    items = []
    for r in a.cells.itertuples(index=False):
        notes = []
        if r.segments > 1:
            notes.append(f"resumed: run in {r.segments} segments")
        if r.interruptions:
            notes.append(f"interrupted {r.interruptions} time(s)")
        if r.status != "done":
            notes.append(f"status {r.status}, {r.stored_jobs} of {r.stream_jobs} jobs stored, "
                         f"stream time reached {r.elapsed_s:.0f} s" + (f": {r.error}" if r.error else ""))
        if getattr(r, "failed_steps", ""):  # the jobs are all there; derived data is missing until redone
            notes.append(f"{'done, but ' if r.status == 'done' else ''}failed steps (redo with `nowlab report`): "
                         f"{r.failed_steps}")
        if notes:
            items.append(f"{r.policy} at {rate_label(r.rate)}, replication {r.replication}: {'; '.join(notes)}")
    if not items:
        return ("p", "None: every cell ran in one go and is done.")
    if a.cells.resumed.any():
        items.append("A resumed cell was stopped and restarted part-way through its stream, so the jobs "
                     "around the restart saw a disturbed system; treat its figures with care.")
    return ("ul", items)


def md_table(df: pd.DataFrame) -> str:
    """A data frame as a pipe table (pandas' to_markdown needs an extra package)."""
    return tables.md_table(list(df.columns), df.itertuples(index=False))


def render_markdown(blocks: list[Block]) -> str:
    out = []
    for kind, body in blocks:
        if kind == "h1":
            out.append(f"# {body}")
        elif kind == "h2":
            out.append(f"## {body}")
        elif kind == "p":
            out.append(str(body))
        elif kind == "ul":
            out.append("\n".join(f"- {item}" for item in body))
        elif kind == "table":
            out.append(md_table(body))
        elif kind == "img":
            out.append(f"![{Path(body).stem}]({body})")
    return "\n\n".join(out) + "\n"


def render_html(blocks: list[Block], title: str) -> str:
    """A small self-contained page: the same blocks, tables by pandas."""
    out = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
           ("<style>body{font-family:sans-serif;max-width:1100px;margin:auto}table{border-collapse:collapse}"
            "td,th{border:1px solid #ccc;padding:3px 6px;font-size:90%}img{max-width:100%}</style></head><body>")]
    for kind, body in blocks:
        if kind in ("h1", "h2", "p"):
            out.append(f"<{kind}>{html.escape(str(body))}</{kind}>")
        elif kind == "ul":
            out.append("<ul>" + "".join(f"<li>{html.escape(str(i))}</li>" for i in body) + "</ul>")
        elif kind == "table":
            out.append(body.to_html(index=False, escape=True, border=0))
        elif kind == "img":
            out.append(f"<p><img src='{html.escape(body)}' alt='{html.escape(Path(body).stem)}'></p>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


__all__ = ["Analysis", "ReportPaths", "analyse", "error_table_text", "write_report"]
