"""Why does the prediction's error of mean response change with the arrival rate? Each candidate cause, measured.

Issue 46 item 3: per arrival rate of single runs the signed error of mean response (predicted -
measured over measured, speed-normalised) reaches -17%, and the demo's Equipartition cells once
under-predicted preemptions. Five candidates, each measured per run and arrival rate over every
committed live store (read-only; nothing here writes a store):

(a) run-level host speed: the run's own factor f = exp(mean log(measured / replayed execution)) of
    its jobs unresized on both sides (`noise_evidence.residuals`, meter-normalised where metered).
    Every cell is replayed again with every job's work x f (an in-sample diagnostic: the run's own
    jobs set f), so queueing amplifies it as it would; the error before and after says how much of
    each rate's error one run-wide factor explains.
(b) the replay's schedule: mean partition and preemptions per job live against replayed, and
    `miss_causes`' split of each cell's response error into a schedule part and a job-time part.
(c) resize cost: each measured resize (store.resizes, partition to running again) against the
    profiled fit's price of the same resize (`ClassModel.resize_cost`), by the smaller partition;
    per rate, the measured-minus-priced seconds per counted job over the measured mean response:
    the most of the error the cost gap could make before queueing.
(d) co-located jobs: per unresized job, the time-averaged number of other jobs' workstations busy
    on the host cores its own workstations are pinned to (runs-*.csv launches and hosts, the
    quotas' workstation -> core), and of other jobs running; the residual's slope on it.
(e) the governor at its ceiling: per cell, the share of governed quota settings at the
    workstation's ceiling (`governor_hold`); per unresized job, the same over its own workstations
    and span; the residual's slope on it.

The single replay (profile's mean work, no noise) is recomputed here rather than read from the
store, so a process rewriting the stored predictions meanwhile cannot mix two models; the
ensemble's error as the coverage benchmark scored it (experiments/results/noise/coverage.csv) is
shown beside it.

    .venv/bin/python -m experiments.studies.padhye_dowdy.analyses.bias_with_load [RESULTS.sqlite ...] [--out DIR]
        [--replicas 40]

Without stores, every committed one (experiments/results/**/*.sqlite); about 3 minutes for the 25
committed stores at 40 replays a cell (--replicas 0: no ensemble, about a minute). The committed
report: experiments/results/padhye-dowdy/bias-with-load/.
"""
from __future__ import annotations

import argparse
import io
import math
import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from rich.progress import track
from scipy import stats as st

from experiments import analysis_io, miss_causes, noise, noise_evidence
from experiments.config import ExperimentConfig
from experiments.governor_hold import AT_CEILING_TOL, governor_hold
from experiments.predict import engine_jobs
from experiments.replay import CellReplay, band_values, cell_replays, class_models, run_identity
from experiments.report import md_table, on_speed_basis
from experiments.reporting.run_stats import (cell_table, compare, normalised, paired_predictions,
                                             parse_interval_set, summarize)
from experiments.store import ResultsStore
from experiments.store.results import StoreError
from scheduler.engine import simulate
from scheduler.jobs import FinishedJob

COVERAGE = noise.RESULTS / "noise" / "coverage.csv"
PROGRAM = "-m experiments.studies.padhye_dowdy.analyses.bias_with_load"
RETRY_S = 5.0  # a store being rewritten: one more read after this long


# ---- pure parts (unit-tested on synthetic frames) ----------------------------------------------

@dataclass(frozen=True)
class Slope:
    """An ordinary least-squares slope with its 95% interval (NaN with fewer than 3 points)."""

    slope: float
    lo: float
    hi: float
    n: int

    def text(self, unit: str = "") -> str:
        if not math.isfinite(self.slope):
            return f"n/a (n {self.n})"
        return f"{self.slope:+.4f}{unit} [{self.lo:+.4f}, {self.hi:+.4f}] (n {self.n})"

    @property
    def significant(self) -> bool:
        return math.isfinite(self.lo) and (self.lo > 0 or self.hi < 0)


def slope(x: Sequence[float], y: Sequence[float]) -> Slope:
    """y on x, finite pairs only."""
    a = pd.DataFrame({"x": np.asarray(x, dtype=float), "y": np.asarray(y, dtype=float)})
    a = a[np.isfinite(a.x) & np.isfinite(a.y)]
    if len(a) < 3 or a.x.nunique() < 2:
        return Slope(math.nan, math.nan, math.nan, len(a))
    r = st.linregress(a.x, a.y)
    t = st.t.ppf(0.975, len(a) - 2)
    return Slope(float(r.slope), float(r.slope - t * r.stderr), float(r.slope + t * r.stderr), len(a))


def run_factor(log_ratios: Iterable[float]) -> tuple[float, float, int]:
    """(exp(mean), standard error of the mean log, n) of a run's log(measured / replayed)
    execution; (1, NaN, 0) without any."""
    x = np.asarray([v for v in log_ratios if math.isfinite(v)], dtype=float)
    if x.size == 0:
        return 1.0, math.nan, 0
    se = float(x.std(ddof=1) / math.sqrt(x.size)) if x.size > 1 else math.nan
    return float(math.exp(x.mean())), se, int(x.size)


def mean_ci(values: Iterable[float]) -> tuple[float, float]:
    """(mean, 95% t half-width; NaN with one value) of the finite values."""
    x = np.asarray([v for v in values if math.isfinite(v)], dtype=float)
    if x.size == 0:
        return math.nan, math.nan
    if x.size == 1:
        return float(x[0]), math.nan
    return float(x.mean()), float(st.t.ppf(0.975, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size))


#: The predictions of mean response compared: single replay before and after the run factor, the
#: ensemble (as the coverage benchmark draws it) before and after.
SIDES = ("single", "corrected", "ensemble_before", "ensemble_after")


def rate_errors(reps: pd.DataFrame) -> pd.DataFrame:
    """Per run and rate, from one row per (run, policy, rate, replication) with `measured`,
    `single` and `corrected` mean responses: the signed error before (single replay) and after
    (replayed with the run's factor), each as the coverage benchmark counts it (per cell, the
    mean over replications on each side, then the mean over the rate's policies), with a 95%
    interval over replications (each replication's error averaged over policies)."""
    rows = []
    for (run, rate), g in reps.groupby(["run", "rate"], sort=True):
        row: dict[str, object] = {"run": run, "rate": float(rate), "policies": g.policy.nunique(),
                                  "replications": g.replication.nunique()}
        for side in [x for x in SIDES if x in g]:
            cells = g.groupby("policy")[["measured", side]].mean()
            row[f"error_{side}"] = float(((cells[side] - cells.measured) / cells.measured).mean())
            per_rep = ((g[side] - g.measured) / g.measured).groupby(g.replication).mean()
            row[f"error_{side}_ci"] = mean_ci(per_rep)[1]
        rows.append(row)
    return pd.DataFrame(rows)


def busy_on_cores(launches: pd.DataFrame, core_of: dict[str, int], job: int, hosts: Sequence[str],
                  start: float, end: float) -> tuple[float, float]:
    """(the time-averaged number of other jobs' workstations busy on the host cores `hosts` are
    pinned to, per such core; the time-averaged number of other jobs running) over [start, end].
    `launches`: one row per launch (job, hosts as a tuple, launched_at, exited_at), on the job's clock."""
    span = end - start
    if span <= 0:
        return math.nan, math.nan
    cores = {core_of[h] for h in hosts if h in core_of}
    ws_time, job_time = 0.0, 0.0
    for r in launches.itertuples(index=False):
        if int(r.job) == int(job):
            continue
        overlap = min(end, float(r.exited_at)) - max(start, float(r.launched_at))
        if overlap <= 0:
            continue
        job_time += overlap
        ws_time += overlap * sum(1 for h in r.hosts if core_of.get(h) in cores)
    return (ws_time / span / len(cores) if cores else math.nan), job_time / span


def ceiling_share(quotas: pd.DataFrame, hosts: Sequence[str], t0: float, t1: float) -> float:
    """Share of the quota settings of `hosts` in [t0, t1] (epoch s) at their workstation's ceiling
    (column `ceiling`); NaN without any."""
    q = quotas[quotas.workstation.isin(list(hosts)) & (quotas.t >= t0) & (quotas.t <= t1)]
    if q.empty:
        return math.nan
    return float((q.quota_cores >= q.ceiling - AT_CEILING_TOL).mean())


def verdict(share: float, explains: float = 0.5, not_explains: float = 0.2) -> str:
    """'explains' / 'partly' / 'does not explain' / 'cannot tell' from the share of the error a
    cause accounts for."""
    if not math.isfinite(share):
        return "cannot tell"
    if share >= explains:
        return "explains"
    return "does not explain" if share < not_explains else "partly"


# ---- reading one store --------------------------------------------------------------------------

def _outcomes(cell: CellReplay, records: dict, pol_rate_rep: tuple[str, float, int]) -> list[dict]:
    policy, rate, replication = pol_rate_rep
    rows = []
    for sj in cell.stream:
        o = FinishedJob.of(sj, records[sj.id])
        rows.append({"policy": policy, "rate": rate, "replication": replication, "cell_id": cell.cell_id,
                     "job_id": int(o.id), "cls": o.cls, "demand": o.demand, "arrival": o.arrival_s,
                     "start": o.start_s, "finish": o.finish_s, "mean_procs": o.mean_procs,
                     "max_procs": o.max_procs, "requested": o.requested_procs, "preemptions": o.preemptions,
                     "status": str(o.status), "error": o.error, "delivered_speed": np.nan})
    return rows


def replay_frame(cells: list[CellReplay], models: dict, factor: float = 1.0) -> pd.DataFrame:
    """Every cell replayed once with every job's work x factor, in `predictions_frame`'s shape."""
    rows = []
    for c in cells:
        work = {sj.id: factor for sj in c.stream} if factor != 1.0 else None
        records = {r.id: r for r in simulate(engine_jobs(c.stream, models, work), c.policy, c.P, timeline=False,
                                             speeds=c.speeds, availability=c.availability,
                                             schedule=c.schedule).jobs}
        rows += _outcomes(c, records, (c.policy, c.rate, c.replication))
    df = pd.DataFrame(rows)
    df["wait"], df["execution"], df["response"] = df.start - df.arrival, df.finish - df.start, df.finish - df.arrival
    return df


def _launches(store: ResultsStore, cell_id: int) -> pd.DataFrame:
    """The cell's launches (runs-<segment>.csv) on the stream's clock."""
    offsets = {int(s["seq"]): float(s["offset_s"]) for s in store.segments(cell_id)}
    frames = []
    for name, text in store.artifacts(cell_id).items():
        stem = name.removeprefix("runs-").removesuffix(".csv")
        if not (name.startswith("runs-") and stem.isdigit() and text.strip()):
            continue
        f = pd.read_csv(io.StringIO(text))
        off = offsets.get(int(stem), 0.0)
        frames.append(pd.DataFrame({"job": f.job.astype(int), "hosts": [tuple(str(h).split(",")) for h in f.hosts],
                                    "launched_at": f.launched_at.astype(float) + off,
                                    "exited_at": f.exited_at.astype(float) + off}))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["job", "hosts", "launched_at",
                                                                                  "exited_at"])


def _quotas(store: ResultsStore) -> pd.DataFrame:
    texts = [t for n, t in store.artifacts(None).items() if n.startswith("quotas") and t.strip()]
    if not texts:
        return pd.DataFrame(columns=["t", "workstation", "core", "quota_cores", "ceiling"])
    q = pd.concat([pd.read_csv(io.StringIO(t)) for t in texts], ignore_index=True)
    q = q.dropna(subset=["factor", "target"])
    q = q[q.target > 0]
    return q.assign(ceiling=q.groupby("workstation").quota_cores.transform("max"))


@dataclass
class StoreResult:
    reps: pd.DataFrame  # per policy, rate, replication
    cells: pd.DataFrame  # per policy, rate: miss_causes' split
    resizes: pd.DataFrame  # per measured resize
    jobs: pd.DataFrame  # per unresized job: residual, co-location, ceiling
    factor: dict


def log_residuals(res: pd.DataFrame) -> pd.Series:
    """log of each residual on the basis the report compares on: meter-normalised where metered."""
    basis = res.ratio_norm.astype(float).fillna(res.ratio.astype(float))
    return np.log(basis.where(basis > 0))


def work_factor(replays: list[CellReplay], models: dict, jobs: pd.DataFrame, factor: float,
                steps: int = 4, tol: float = 0.002) -> tuple[float, pd.DataFrame]:
    """The factor on every job's work that makes the replay's unresized jobs run, on average,
    as long as the measured ones (mean log residual within `tol`), and that replay. The work
    factor is not the execution factor: launch and start-up are outside the work. Starts from
    the execution factor and corrects by the residual left, `steps` times at most."""
    work = factor
    for _ in range(steps):
        frame = replay_frame(replays, models, work)
        left = run_factor(log_residuals(noise_evidence.residuals(jobs, frame)))[0]
        if abs(math.log(left)) <= tol:
            break
        work *= left
    else:
        frame = replay_frame(replays, models, work)
    return work, frame


def ensembles(replays: list[CellReplay], models: dict, model: noise.NoiseModel | None, work: float,
              replicas: int) -> pd.DataFrame:
    """Per cell: the ensemble's mean response as the coverage benchmark draws it (`ensemble_before`)
    and with every replay's run shift set to log(work), the run's own factor (`ensemble_after`)."""
    cols = ["policy", "rate", "replication", "ensemble_before", "ensemble_after", "preemptions_ensemble_before",
            "preemptions_ensemble_after"]
    if model is None or replicas < 1:
        return pd.DataFrame(columns=cols)
    before = model.draws(replicas, seed=0)
    after = [noise.RunDraw(math.log(work), d.sigma_cell, d.sigma_job) for d in before]
    rows = []
    for c in replays:
        b = band_values(c, models, before, replicas)
        a = band_values(c, models, after, replicas)
        rows.append({"policy": c.policy, "rate": c.rate, "replication": c.replication,
                     "ensemble_before": float(np.nanmean(b["response"])), "ensemble_after": float(np.nanmean(a["response"])),
                     "preemptions_ensemble_before": float(np.nanmean(b["preemptions"])),
                     "preemptions_ensemble_after": float(np.nanmean(a["preemptions"]))})
    return pd.DataFrame(rows, columns=cols)


def one_store(path: Path, coverage: pd.DataFrame, library: noise.Library, replicas: int) -> StoreResult | None:
    """Everything the five measures need from one store (None: no predictions possible)."""
    with ResultsStore.open(path, readonly=True) as store:
        config = ExperimentConfig.model_validate(store.config)
        profiles = store.profiles()
        if not profiles or set(config.classes) - set(profiles):
            return None
        models = class_models(config, profiles)
        jobs = store.jobs_frame()
        replays = [c for c in cell_replays(store, config) if c.counted]
        launches = {c.cell_id: _launches(store, c.cell_id) for c in replays}
        seg_epoch = {c.cell_id: (store.segments(c.cell_id)[0]["started_at"] - store.segments(c.cell_id)[0]["offset_s"])
                     for c in replays}
        classes = {c.cell_id: {sj.id: sj.cls for sj in c.stream} for c in replays}
        samples = pd.DataFrame([{**r.row(), "cls": classes[c.cell_id].get(int(r.job), ""), "cell_id": c.cell_id}
                                for c in replays for r in store.resizes(c.cell_id)
                                if r.kind in ("loser", "winner") and r.reconfig_s is not None])
        quotas = _quotas(store)
        span = {c["cell_id"]: (c["created_at"], c["updated_at"]) for c in store.timeline()["cells"]}
        model_for = noise.for_run(library.runs, *run_identity(path, store.config),
                                  created_at=float(store.timeline()["created_at"] or 0.0))
    if not replays:
        return None
    run, _, paper = run_identity(path, store.config)
    warmup = config.arrivals.warmup
    at_basis = on_speed_basis(jobs, profiles, config.profile.speed_basis)
    single = replay_frame(replays, models)
    res = noise_evidence.residuals(at_basis, single)
    log_norm = log_residuals(res)
    factor, factor_se, n_res = run_factor(log_norm)
    work, corrected = work_factor(replays, models, at_basis, factor)

    # per replication: measured (normalised), single, corrected; partitions and preemptions
    m = summarize(normalised(at_basis, measured=True), warmup)
    s = summarize(normalised(paired_predictions(jobs, single), measured=False), warmup)
    c = summarize(normalised(paired_predictions(jobs, corrected), measured=False), warmup)
    keys = ["policy", "rate", "replication"]
    reps = m[keys + ["jobs", "response", "response_norm", "mean_procs", "preemptions"]].merge(
        s[keys + ["response", "mean_procs", "preemptions"]].rename(
            columns={"response": "single", "mean_procs": "procs_replay", "preemptions": "preemptions_replay"}),
        on=keys).merge(c[keys + ["response", "preemptions"]].rename(
            columns={"response": "corrected", "preemptions": "preemptions_corrected"}), on=keys)
    reps["measured"] = reps.response_norm.fillna(reps.response)
    reps = reps.rename(columns={"mean_procs": "procs_live", "preemptions": "preemptions_live"}).drop(
        columns=["response", "response_norm"])
    reps.insert(0, "run", run)
    reps.insert(1, "paper", paper)
    # governor per cell, and the cell's mean residual
    ids = {(c.policy, c.rate, c.replication): c.cell_id for c in replays}
    quota_texts = []
    if not quotas.empty:
        buf = io.StringIO()
        quotas.drop(columns="ceiling").to_csv(buf, index=False)
        quota_texts = [buf.getvalue()]
    ceil, resid = [], []
    res_cells = pd.DataFrame({"cell_id": res.cell_id, "x": log_norm}).dropna().groupby("cell_id").x.mean()
    for r in reps.itertuples(index=False):
        cid = ids.get((r.policy, float(r.rate), int(r.replication)))
        held = governor_hold(quota_texts, *span[cid]) if cid is not None and quota_texts else None
        ceil.append(held.at_ceiling if held is not None else math.nan)
        resid.append(float(res_cells.get(cid, math.nan)) if cid is not None else math.nan)
    reps["at_ceiling"], reps["cell_log_residual"] = ceil, resid
    reps["factor"], reps["work_factor"] = factor, work
    ens = ensembles(replays, models, model_for, work, replicas)
    reps = reps.merge(ens, on=keys, how="left")

    # (b) miss_causes' split per (policy, rate), against this single replay
    meas_cells = cell_table(summarize(normalised(at_basis, measured=True), warmup))
    pred_cells = cell_table(summarize(normalised(paired_predictions(jobs, single), measured=False), warmup))
    cmp = compare(meas_cells, pred_cells, config.policies)
    split = miss_causes.misses(cmp, jobs, single, models, {"response_rel": 0.0, "execution_rel": 0.0}, warmup)
    split = split[split.statistic == "response"][["policy", "rate", "error", "error_normalised", "schedule_part",
                                                  "job_time_part", "placed_differently", "jobs"]].copy()
    split.insert(0, "run", run)
    if len(coverage):
        cov = coverage[(coverage.run == run) & (coverage.stat == "response")]
        ens = {(p, round(float(r), 6)): (pr - me) / me for p, r, pr, me in
               zip(cov.policy, cov.rate, cov.predicted.astype(float), cov.measured.astype(float))}
        split["error_bench"] = [ens.get((p, round(float(r), 6)), math.nan) for p, r in zip(split.policy, split.rate)]

    # (c) resizes: measured against the replay's price of the same resize
    rz = []
    rate_of = {c.cell_id: c.rate for c in replays}
    for r in samples.itertuples(index=False) if len(samples) else []:
        model = models.get(r.cls)
        old, new = parse_interval_set(r.from_procs), parse_interval_set(r.to_procs)
        if model is None or not old or not new or r.cell_id not in rate_of:
            continue
        rz.append({"run": run, "rate": rate_of[r.cell_id], "cell_id": r.cell_id, "cls": r.cls, "from": len(old),
                   "to": len(new), "smaller": min(len(old), len(new)), "measured_s": float(r.reconfig_s),
                   "priced_s": float(model.resize_cost(old, new))})

    # (d), (e): per unresized job
    core_of = ({str(w): int(k) for w, k in quotas.groupby("workstation").core.agg(lambda v: v.mode().iloc[0]).items()}
               if "core" in quotas and not quotas.empty else {})
    jr = []
    lj = at_basis.set_index(["cell_id", "job_id"])
    for cid, jid, x, raw in zip(res.cell_id, res.job_id, log_norm, np.log(res.ratio.astype(float))):
        cid, jid = int(cid), int(jid)
        j = lj.loc[(cid, jid)]
        L = launches.get(cid, pd.DataFrame())
        own = L[L.job == jid] if len(L) else L
        hosts = tuple(own.hosts.iloc[0]) if len(own) else ()
        co, conc = busy_on_cores(L, core_of, jid, hosts, float(j.start), float(j.finish)) if len(L) else (math.nan,) * 2
        t0 = seg_epoch[cid] + float(j.start)
        cs = ceiling_share(quotas, hosts, t0, seg_epoch[cid] + float(j.finish)) if not quotas.empty else math.nan
        jr.append({"run": run, "rate": rate_of.get(cid, math.nan), "cell_id": cid, "job_id": jid,
                   "p": int(j.max_procs), "log_residual_norm": float(x), "log_residual_raw": float(raw),
                   "delivered_speed": float(j.delivered_speed), "co_located_ws_per_core": co,
                   "other_jobs_running": conc, "ceiling_share": cs})
    return StoreResult(reps, split, pd.DataFrame(rz), pd.DataFrame(jr),
                       {"run": run, "paper": paper, "factor": factor, "log_se": factor_se, "work_factor": work,
                        "unresized_jobs": n_res})


def read_store(path: Path, coverage: pd.DataFrame, library: noise.Library, replicas: int) -> StoreResult | None:
    """`one_store`, once more after RETRY_S when a read fails (another process may be rewriting it)."""
    try:
        return one_store(path, coverage, library, replicas)
    except (StoreError, sqlite3.DatabaseError, pd.errors.DatabaseError):
        time.sleep(RETRY_S)
        return one_store(path, coverage, library, replicas)


# ---- across stores -------------------------------------------------------------------------------

def with_rank(frame: pd.DataFrame) -> pd.DataFrame:
    """A `load` column: the rate's rank within its run (1 lowest), and `rates`, how many the run has."""
    ranks = {run: {r: i + 1 for i, r in enumerate(sorted(g.rate.unique()))} for run, g in frame.groupby("run")}
    return frame.assign(load=[ranks[a][b] for a, b in zip(frame.run, frame.rate)],
                        rates=[len(ranks[a]) for a in frame.run])


def demeaned(frame: pd.DataFrame, col: str) -> pd.Series:
    """The column less its run's mean: what a run-wide factor leaves."""
    return frame[col] - frame.groupby("run")[col].transform("mean")


def per_rate_table(reps: pd.DataFrame, cells: pd.DataFrame, resizes: pd.DataFrame,
                   jobs: pd.DataFrame) -> pd.DataFrame:
    """One row per run and rate: the error before and after the run factor, and each cause's figure."""
    out = rate_errors(reps)
    rows = []
    for r in out.itertuples(index=False):
        g = reps[(reps.run == r.run) & (reps.rate == r.rate)]
        c = cells[(cells.run == r.run) & np.isclose(cells.rate, r.rate)]
        z = resizes[(resizes.run == r.run) & np.isclose(resizes.rate, r.rate)] if len(resizes) else resizes
        j = jobs[(jobs.run == r.run) & np.isclose(jobs.rate, r.rate)] if len(jobs) else jobs
        equi = g[g.policy.str.upper().str.startswith("EQUI")]
        gap_s = float((z.measured_s - z.priced_s).sum()) if len(z) else 0.0
        response = float(g.measured.mean())
        per_job = gap_s / max(1, int(g.jobs.sum()))
        rows.append({
            "factor": float(g.factor.iloc[0]),
            "error_bench": float(c.error_bench.mean()) if "error_bench" in c else math.nan,
            "procs_live": float(g.procs_live.mean()), "procs_replay": float(g.procs_replay.mean()),
            "preemptions_live": float(g.preemptions_live.mean()),
            "preemptions_replay": float(g.preemptions_replay.mean()),
            "equi_preemptions_ratio": ratio_of_sums(equi, "preemptions_live", "preemptions_replay"),
            "equi_preemptions_ratio_corrected": ratio_of_sums(equi, "preemptions_live", "preemptions_corrected"),
            "equi_preemptions_ratio_ensemble": ratio_of_sums(equi, "preemptions_live", "preemptions_ensemble_before"),
            "equi_preemptions_ratio_ensemble_after": ratio_of_sums(equi, "preemptions_live",
                                                                   "preemptions_ensemble_after"),
            "schedule_part": float(c.schedule_part.mean()), "job_time_part": float(c.job_time_part.mean()),
            "placed_differently": f"{int(c.placed_differently.sum())}/{int(c.jobs.sum())}",
            "resizes": len(z), "resize_gap_s_per_job": per_job,
            "resize_gap_share_of_response": -per_job / response if response > 0 else math.nan,
            "log_residual": mean_ci(j.log_residual_norm)[0] if len(j) else math.nan,
            "log_residual_ci": mean_ci(j.log_residual_norm)[1] if len(j) else math.nan,
            "co_located_ws_per_core": float(j.co_located_ws_per_core.mean()) if len(j) else math.nan,
            "at_ceiling": mean_ci(g.at_ceiling)[0], "at_ceiling_ci": mean_ci(g.at_ceiling)[1]})
    return with_rank(pd.concat([out, pd.DataFrame(rows)], axis=1))


def ratio_of_sums(frame: pd.DataFrame, num: str, den: str) -> float:
    """sum(num) / sum(den) over the rows (NaN without rows, the column, or a positive denominator)."""
    if frame.empty or num not in frame or den not in frame or not frame[den].sum() > 0:
        return math.nan
    return float(frame[num].sum() / frame[den].sum())


def per_cell(reps: pd.DataFrame, cells: pd.DataFrame) -> pd.DataFrame:
    """Per run, policy and rate: the measured mean response, each prediction's error, preemptions
    per job live and in each prediction, and miss_causes' split."""
    sides = [x for x in SIDES if x in reps]
    pre = [c for c in reps.columns if c.startswith("preemptions_")]
    g = reps.groupby(["run", "policy", "rate"], sort=True)[["measured", *sides, *pre, "at_ceiling"]].mean().reset_index()
    for side in sides:
        g[f"error_{side}"] = (g[side] - g.measured) / g.measured
    keep = [c for c in ("run", "policy", "rate", "schedule_part", "job_time_part", "placed_differently", "jobs",
                        "error_bench") if c in cells]
    return g.merge(cells[keep], on=["run", "policy", "rate"], how="left")


def by_load(table: pd.DataFrame, cols: Sequence[str]) -> pd.DataFrame:
    """Pooled over runs with three or more rates: each column's mean at each load rank, with a 95%
    interval over runs."""
    t = table[table.rates >= 3]
    rows = []
    for load, g in t.groupby("load"):
        row: dict[str, object] = {"load (rank within run)": int(load), "runs": len(g)}
        for col in cols:
            m, h = mean_ci(g[col])
            row[col] = f"{m:+.3f} ± {h:.3f}" if math.isfinite(h) else f"{m:+.3f}"
        rows.append(row)
    return pd.DataFrame(rows)


def resize_by_size(resizes: pd.DataFrame) -> pd.DataFrame:
    """Measured resize cost against the replay's price of the same resizes, by the smaller partition."""
    if resizes.empty:
        return pd.DataFrame()
    rows = []
    paper = resizes.run.str.split("/").str[0]
    for (folder, p), g in resizes.groupby([paper, "smaller"]):
        gap = g.measured_s - g.priced_s
        m, h = mean_ci(gap)
        rows.append({"results": folder, "smaller partition": int(p), "resizes": len(g), "measured median (s)": round(g.measured_s.median(), 3),
                     "priced median (s)": round(g.priced_s.median(), 3),
                     "measured - priced, mean (s)": f"{m:+.3f} ± {h:.3f}" if math.isfinite(h) else f"{m:+.3f}"})
    return pd.DataFrame(rows)


def trend(table: pd.DataFrame, col: str) -> Slope:
    """The column's slope on the load rank within runs (runs with 3+ rates, run means removed):
    does it change with load beyond what a run shares at every rate?"""
    many = table[table.rates >= 3].dropna(subset=[col])
    return slope(many.load, demeaned(many, col))


def verdicts(table: pd.DataFrame, jobs: pd.DataFrame, reps: pd.DataFrame, resizes: pd.DataFrame) -> list[str]:
    """The size of the load effect, then each candidate's verdict, with the figures it rests on."""
    out = []
    before, after = table.error_ensemble_before, table.error_ensemble_after
    t_before, t_after = trend(table, "error_ensemble_before"), trend(table, "error_ensemble_after")
    t_single = trend(table, "error_single")
    outside = table[(table.rates >= 3)].assign(d=lambda t: demeaned(t, "error_ensemble_before"))
    beyond = int((outside.d.abs() > outside.error_ensemble_before_ci).sum())
    pairs = top_less_bottom(table[(table.rates == 2) & table.run.str.startswith("demo")], "error_ensemble_before")
    m2, h2 = mean_ci(pairs)
    out.append(f"Load effect: within runs (3+ rates, each run's mean error removed), the ensemble's signed error "
               f"changes by {t_before.text(' per rate rank')}; the single replay's by {t_single.text()}. "
               f"{beyond} of {len(outside)} run-rates sit further from their run's mean error than their own 95% "
               f"interval over replications. After the run factor: {t_after.text()}. The demo runs (two rates, "
               f"one replication each): higher rate less lower {m2:+.1%} ± {h2:.1%} over {len(pairs)} runs. "
               f"Run-rates of 3+-rate runs outside ±6%: {int((outside.error_ensemble_before.abs() > 0.06).sum())} of "
               f"{len(outside)} before, {int((outside.error_ensemble_after.abs() > 0.06).sum())} after the run factor.")
    worst = outside[outside.error_ensemble_before.abs() > 0.06].run.unique()
    parts = []
    for run in worst:
        g = table[table.run == run].sort_values("rate")
        parts.append(f"{run.removesuffix('.sqlite')} (factor {g.factor.iloc[0]:.3f}): "
                     + ", ".join(f"{r:g}/s {b:+.1%} -> {a:+.1%}" for r, b, a in
                                 zip(g.rate, g.error_ensemble_before, g.error_ensemble_after)))
    out.append("Runs with a rate outside ±6%, ensemble error before -> after the run factor: " + "; ".join(parts) + ".")
    share = 1 - after.abs().mean() / before.abs().mean()
    grows = t_before.significant and t_before.slope != 0
    out.insert(0, f"**In short:** {'the error changes with load within runs' if grows else 'within a run the error does not change with load beyond chance'} "
               f"({t_before.text(' per rate rank')}); what the per-rate figures share is a level per run, and the "
               f"run's own speed factor removes {share:.0%} of its mean size ({before.abs().mean():.1%} -> "
               f"{after.abs().mean():.1%}; 3+-rate run-rates outside ±6%: "
               f"{int((outside.error_ensemble_before.abs() > 0.06).sum())} -> "
               f"{int((outside.error_ensemble_after.abs() > 0.06).sum())} of {len(outside)}). Each other candidate's "
               f"size and trend with load below.")
    share_a = 1 - after.abs().mean() / before.abs().mean()
    out.append(f"(a) run-level host speed: **{verdict(share_a)}**. Over {len(table)} run-rates the ensemble's mean "
               f"|signed error| is {before.abs().mean():.1%} as the benchmark draws it, {after.abs().mean():.1%} with "
               f"each run's own factor as its shift (removes {share_a:.0%}); within ±6%: {int((before.abs() <= 0.06).sum())} "
               f"before, {int((after.abs() <= 0.06).sum())} after; pooled mean {before.mean():+.1%} -> {after.mean():+.1%}. "
               f"Single replay: {table.error_single.abs().mean():.1%} -> {table.error_corrected.abs().mean():.1%}. "
               f"Execution factors range {table.factor.min():.3f}-{table.factor.max():.3f}.")
    many = table[table.rates >= 3]
    sched, jt = many.schedule_part, many.job_time_part
    share_b = sched.abs().mean() / (sched.abs().mean() + jt.abs().mean())
    eq = table.equi_preemptions_ratio.dropna()
    eq_c = table.equi_preemptions_ratio_corrected.dropna()
    eq_e, eq_a = table.equi_preemptions_ratio_ensemble.dropna(), table.equi_preemptions_ratio_ensemble_after.dropna()
    demo = table[table.run.str.startswith("demo") & table.equi_preemptions_ratio.notna()]
    top = demo[demo.load == demo.rates]
    t_pre = trend(table.assign(pr=table.preemptions_live - table.preemptions_replay), "pr")
    out.append(f"(b) schedule divergence: **{'does not explain the load effect' if not trend(table, 'schedule_part').significant else 'partly'}**. "
               f"Its part of the single replay's error is as large as the job-time part at every load (mean "
               f"magnitudes {sched.abs().mean():.1%} and {jt.abs().mean():.1%} over {len(many)} run-rates, "
               f"{share_b:.0%} schedule) but does not grow with it: {trend(table, 'schedule_part').text(' per rank')}. "
               f"Preemptions per job, live less replayed, on load rank {t_pre.text()}; pooled live/replay "
               f"{table.preemptions_live.sum() / max(table.preemptions_replay.sum(), 1e-9):.2f}; Equipartition "
               + (f"live/replay median {eq.median():.2f} over {len(eq)} run-rates (range {eq.min():.2f}-{eq.max():.2f}); "
                  f"against the replay with the run factor {eq_c.median():.2f}; against the ensemble "
                  f"{eq_e.median():.2f}, with the run factor {eq_a.median():.2f}. In the demo runs at their higher rate "
                  f"({len(top)} runs): live/replay median {top.equi_preemptions_ratio.median():.2f} (range "
                  f"{top.equi_preemptions_ratio.min():.2f}-{top.equi_preemptions_ratio.max():.2f}), with the run "
                  f"factor {top.equi_preemptions_ratio_corrected.median():.2f}, ensemble "
                  f"{top.equi_preemptions_ratio_ensemble.median():.2f} -> {top.equi_preemptions_ratio_ensemble_after.median():.2f}; "
                  "geometric mean live/ensemble {:.2f} [{:.2f}, {:.2f}]: the 10% target {}.".format(
                      *(g := log_ratio_ci(top.equi_preemptions_ratio_ensemble, pd.Series(1.0, index=top.index))),
                      "cannot be told apart" if (g[1] <= 1.1 and g[2] >= 0.9) or not math.isfinite(g[1]) else
                      ("is missed" if g[1] > 1.1 or g[2] < 0.9 else "is met"))
                  if len(eq) else "no cell."))
    if len(resizes):
        gap = table.resize_gap_share_of_response
        share_c = gap.abs().mean() / before.abs().mean()
        small = resizes[resizes.smaller <= 2]
        out.append(f"(c) resize cost: **{verdict(share_c)}**. Over {len(resizes)} measured resizes the measured "
                   f"cost less the replay's price averages {float((resizes.measured_s - resizes.priced_s).mean()):+.3f} s "
                   f"({float((small.measured_s - small.priced_s).mean()) if len(small) else math.nan:+.3f} s over the "
                   f"{len(small)} with a partition of 1-2); per run-rate that gap, per counted job, is "
                   f"{gap.abs().mean():.2%} of the mean response (mean magnitude; {share_c:.0%} of the error's), "
                   f"trend {trend(table, 'resize_gap_share_of_response').text(' per rank')}.")
    if len(jobs):
        d = jobs.assign(x=demeaned(jobs, "log_residual_norm"), raw=demeaned(jobs, "log_residual_raw"))
        s_co, s_raw = slope(d.co_located_ws_per_core, d.x), slope(d.co_located_ws_per_core, d.raw)
        s_conc = slope(d.other_jobs_running, d.x)
        load = by_rank_mean(table, "co_located_ws_per_core")
        implied = s_co.slope * (load[-1] - load[0])
        out.append(f"(d) co-located jobs: **{'cannot tell' if not math.isfinite(implied) else ('explains' if abs(implied) >= 0.03 else 'does not explain')}**. "
                   f"Log residual (meter-normalised, less its run's mean) on other jobs' busy workstations per shared "
                   f"core: {s_co.text(' /ws')}; raw {s_raw.text(' /ws')}; on other jobs running {s_conc.text(' /job')}. "
                   f"That load rises from {load[0]:.2f} to {load[-1]:.2f} ws/core from the lowest to the highest rate "
                   f"(runs with 3+ rates), so it would slow jobs by {implied:+.1%} more at the highest; the unresized "
                   f"jobs' residual itself moves {trend(table, 'log_residual').text(' per rank')}.")
        e = d.dropna(subset=["ceiling_share"])
        s_ce, s_ce_raw = slope(e.ceiling_share, e.x), slope(e.ceiling_share, e.raw)
        cells = reps.dropna(subset=["at_ceiling", "cell_log_residual"])
        cells = cells.assign(c=demeaned(cells, "at_ceiling"), r=demeaned(cells, "cell_log_residual"))
        rho = st.spearmanr(cells.c, cells.r) if len(cells) > 2 and cells.c.nunique() > 1 else None
        ceil = by_rank_mean(table, "at_ceiling")
        out.append(f"(e) governor at its ceiling: **{'cannot tell' if not math.isfinite(s_ce.slope) else ('partly' if s_ce.significant and abs(s_ce.slope) * (ceil[-1] - ceil[0]) >= 0.02 else 'does not explain')}**. "
                   f"Share of quota settings at the ceiling per cell: mean {reps.at_ceiling.mean():.1%}, "
                   f"{ceil[0]:.1%} at the lowest rate to {ceil[-1]:.1%} at the highest (runs with 3+ rates), trend "
                   f"{trend(table, 'at_ceiling').text(' per rank')}. Job log residual (less its run's mean) on its own "
                   f"ceiling share: normalised {s_ce.text()}, raw {s_ce_raw.text()}; cells' mean residual against "
                   f"their ceiling share within runs, Spearman "
                   + (f"{rho.statistic:+.2f} (p {rho.pvalue:.2g}, {len(cells)} cells)." if rho is not None else "n/a."))
    if len(jobs):
        sizes = residual_by_size(jobs)
        parts = []
        for folder, g in sizes.groupby("results", sort=True) if len(sizes) else []:
            big = g.loc[g["log residual less run mean"].abs().idxmax()]
            m, h = float(big["log residual less run mean"]), float(big["95% half-width"])
            call = "partly" if abs(m) >= 0.03 and math.isfinite(h) and abs(m) > h else "does not explain"
            parts.append(f"{folder}: **{call}** (sizes {', '.join(str(int(p)) for p in g.workstations)}; largest "
                         f"{m:+.3f} ± {h:.3f} at {int(big['workstations'])} workstations, {int(big['jobs'])} jobs)")
        out.append("(f) execution model by partition size (the mix of sizes changes with load; log residual of "
                   "unresized jobs less their run's mean, sizes with 20+ jobs): "
                   + ("; ".join(parts) + "." if parts else "cannot tell (no size with 20 unresized jobs)."))
    return out


def top_less_bottom(table: pd.DataFrame, col: str) -> list[float]:
    """Per run: the column at its highest rate less at its lowest."""
    return [float(g.sort_values("rate")[col].iloc[-1] - g.sort_values("rate")[col].iloc[0])
            for _, g in table.groupby("run") if g.rate.nunique() >= 2]


def log_ratio_ci(num: pd.Series, den: pd.Series) -> tuple[float, float, float]:
    """Geometric mean of num/den with its 95% interval (t over the log ratios)."""
    x = np.log(num.astype(float) / den.astype(float))
    x = x[np.isfinite(x)]
    m, h = mean_ci(x)
    return math.exp(m), math.exp(m - h) if math.isfinite(h) else math.nan, math.exp(m + h) if math.isfinite(h) else math.nan


def residual_by_size(jobs: pd.DataFrame, min_jobs: int = 20) -> pd.DataFrame:
    """Per results folder and partition size: the unresized jobs' log residual less their run's mean
    (what a run-wide factor leaves), with its 95% interval; sizes with fewer than min_jobs left out."""
    d = jobs.assign(x=demeaned(jobs, "log_residual_norm"), results=jobs.run.str.split("/").str[0])
    rows = []
    for (folder, p), g in d.groupby(["results", "p"]):
        if len(g) >= min_jobs:
            m, h = mean_ci(g.x)
            rows.append({"results": folder, "workstations": int(p), "jobs": len(g), "log residual less run mean": m,
                         "95% half-width": h})
    return pd.DataFrame(rows)


def by_rank_mean(table: pd.DataFrame, col: str) -> list[float]:
    """The column's mean at the lowest and the highest load rank (runs with 3+ rates); NaNs without any."""
    t = table[table.rates >= 3]
    means = [float(v) for v in t.groupby("load")[col].mean()]
    return [means[0], means[-1]] if means else [math.nan, math.nan]


def plot(table: pd.DataFrame, path: Path) -> None:
    """Signed error of mean response against arrival rate per run, before and after the run factor."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(13, 5.5), sharey=True)
    runs = [r for r, g in table.groupby("run") if g.rate.nunique() >= 2]
    cmap = plt.get_cmap("tab20")
    for i, run in enumerate(runs):
        g = table[table.run == run].sort_values("rate")
        label = run.removeprefix("padhye-dowdy/").removesuffix(".sqlite")
        for ax, col in ((axes[0], "error_ensemble_before"), (axes[1], "error_ensemble_after")):
            ax.errorbar(g.rate, g[col] * 100, yerr=g[f"{col}_ci"].fillna(0) * 100, marker="o", ms=3, lw=1,
                        capsize=2, color=cmap(i % 20), label=label if ax is axes[0] else None, alpha=0.85)
    for ax, title in ((axes[0], "ensemble as the coverage benchmark draws it (run shift from other runs)"),
                      (axes[1], "ensemble with the run's own factor as its shift")):
        ax.axhspan(-6, 6, color="green", alpha=0.1)
        ax.axhline(0, color="black", lw=0.6)
        ax.set_xlabel("arrival rate (jobs/s)")
        ax.set_title(title, fontsize=10)
    axes[0].set_ylabel("signed error of mean response, speed-normalised (%)\n(bars: 95% interval over replications)")
    fig.legend(fontsize=6, loc="lower center", ncol=4)
    fig.suptitle("Error of mean response against arrival rate, per run: before and after the run-level factor")
    fig.tight_layout(rect=(0, 0.16, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="*", type=Path, help="stores (default: every committed one)")
    ap.add_argument("--out", type=Path, help="write report.md, report.csv (per run and rate), report-cells.csv "
                    "(per run, policy and rate) and report.png here")
    ap.add_argument("--replicas", type=int, default=40, help="ensemble replays a cell (0: no ensemble)")
    args = ap.parse_args(argv)
    paths = args.results or noise_evidence.committed_stores()
    coverage = pd.read_csv(COVERAGE) if COVERAGE.exists() else pd.DataFrame()
    library = noise.Library.load(noise.LIBRARY)
    results = [r for p in track(paths, description="stores")
               if (r := read_store(p, coverage, library, args.replicas)) is not None]
    reps = pd.concat([r.reps for r in results], ignore_index=True)
    cells = pd.concat([r.cells for r in results], ignore_index=True)
    resizes = pd.concat([r.resizes for r in results], ignore_index=True)
    jobs = pd.concat([r.jobs for r in results], ignore_index=True)
    factors = pd.DataFrame([r.factor for r in results])
    table = per_rate_table(reps, cells, resizes, jobs)
    lines = verdicts(table, jobs, reps, resizes)
    loads = by_load(table, ["error_ensemble_before", "error_ensemble_after", "error_single", "error_corrected",
                            "schedule_part", "job_time_part", "log_residual", "co_located_ws_per_core", "at_ceiling"])
    sizes = resize_by_size(resizes)
    shown = table[["run", "rate", "replications", "error_bench", "error_ensemble_before", "error_ensemble_before_ci",
                   "factor", "error_ensemble_after", "error_ensemble_after_ci", "error_single", "error_corrected",
                   "schedule_part", "job_time_part",
                   "preemptions_live", "preemptions_replay", "equi_preemptions_ratio", "resize_gap_share_of_response",
                   "log_residual", "co_located_ws_per_core", "at_ceiling"]].copy()
    shown["run"] = shown.run.str.removesuffix(".sqlite")
    analysis_io.table("Signed error of mean response per run and rate", ["run", "rate", "ensemble", "factor",
                                                                          "after", "single", "after", "schedule",
                                                                          "job time"],
                      [[r.run[-40:], f"{r.rate:g}", f"{r.error_ensemble_before:+.1%}", f"{r.factor:.3f}",
                        f"{r.error_ensemble_after:+.1%}", f"{r.error_single:+.1%}", f"{r.error_corrected:+.1%}",
                        f"{r.schedule_part:+.1%}", f"{r.job_time_part:+.1%}"] for r in shown.itertuples()])
    analysis_io.table("By load rank (runs with 3+ rates)", list(loads.columns),
                      [[str(v) for v in r] for r in loads.itertuples(index=False)])
    for line in lines:
        analysis_io.console.print(line)
    if args.out:
        body = ("## Verdicts\n\n" + "\n\n".join(f"- {x}" for x in lines) + "\n\n![error against rate](report.png)\n\n"
                "## Pooled by load rank (runs with three or more rates; mean ± 95% half-width over runs)\n\n"
                + md_table(loads) + "\n\n## Resize cost by the smaller partition\n\n" + md_table(sizes)
                + "\n\n## Unresized jobs' residual by partition size (log, less the run's mean)\n\n"
                + md_table(residual_by_size(jobs).round(4)) + "\n\n## Run-level factors\n\n" + md_table(factors.round(4))
                + "\n\n## Per run and rate\n\n" + md_table(shown.round(4)) + "\n\n" + NOTES)
        analysis_io.write_report(args.out, "report", table, lambda p: plot(table, p),
                                 "Why the error of mean response changes with load", PROGRAM,
                                 list(args.results), body)
        per_cell(reps, cells).to_csv(args.out / "report-cells.csv", index=False)


NOTES = """## What is and is not recorded

- Columns: every error is (predicted - measured) / measured of mean response, the measured brought to
  the profile's speed by the meter, per cell (means over replications) then averaged over the rate's
  policies. `error_ensemble_before`: the ensemble drawn as the coverage benchmark draws it (noise model
  of the other runs, `noise.for_run`; fewer replays, so it differs a little from `error_bench`, the
  committed experiments/results/noise/coverage.csv); `error_ensemble_after`: the same replays with the
  run shift set to log of the run's own work factor (cell and job spreads kept). `error_single`: one
  replay at the profile's mean work, recomputed here; `error_corrected`: that replay with every job's
  work x the run's work factor. `factor`: exp(mean log(measured / replayed execution)) of the run's jobs
  unresized on both sides (meter-normalised); the work factor is the one that makes the replay's
  unresized jobs match it (launch and start-up lie outside the work). Intervals: 95% t over replications.
- `schedule_part`, `job_time_part`: `experiments/miss_causes.py`'s split of the single replay's raw
  response error (job times not meter-normalised there).
- Co-location: runs-*.csv records each launch's workstations and its start and exit; the quotas record
  each workstation's host core. Not recorded: CPU time actually taken per process, cache or memory
  bandwidth contention, the network traffic of co-located jobs, which core a process ran on within a
  moment (the pinning is per workstation). The meter's delivered speed already takes in CPU that a
  co-located job took from a workstation's quota, so the normalised residual shows only what it misses.
- Governor: quotas-*.csv, each setting of each governed workstation; the ceiling is the workstation's
  largest quota in the run (as `experiments/governor_hold.py`).
- The factor is in-sample (each run's own jobs set it): a diagnostic of where the error comes from, not
  a prediction.
"""


if __name__ == "__main__":
    main()
