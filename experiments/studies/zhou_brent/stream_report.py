"""A stream run's report (experiments/studies/zhou_brent/stream.py): each job's response measured beside predicted.

`measure_stream` is pure: the run and its spec to flat rows. The prediction is the simulator's
(scheduler/timeshare/simulate.py) for the same spec, replanning with the same global manager,
under the run's local policy and resync, with the spec's owners if the run started them (the
simulator's owners are CPU-bound and always ready; the live ones think between commands).
`write_stream_report(dir)` redoes report.md and timeline.png from the CSVs alone.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Callable, Mapping, Sequence

import pandas as pd

from experiments.reporting.tables import md_table
from experiments.studies.zhou_brent.owners import (OwnerCommand, owners_markdown, read_owner_commands, summarise,
                                         write_owner_commands)
from experiments.studies.zhou_brent.spec import TimeshareSpec
from experiments.studies.zhou_brent.stream import StreamRun
from experiments.studies.zhou_brent.timeline import intervals
from scheduler.jobs import FinishedJob
from scheduler.timeshare.simulate import LocalPolicy
from scheduler.timeshare.tables import Resync, ResyncPlan
from testbed.meter import (QUOTAS_CSV, SAMPLES_CSV, append_quotas, append_samples, read_quotas, series,
                           speed_over)

FILES = ("stream.csv", "jobs.csv", "tables.csv", "timeline.csv")
ADDED = ("t0_epoch", "kernel", "metered_speed", "metered_response_s", "metered_error")  # absent from older runs
TEXT_ADDED = ("kernel",)
KERNEL_OF = {"synthetic": "multiply", "cg": "matvec"}  # workloads/synthetic.py, workloads/cg.py


class StreamFilesError(ValueError):
    """A stream run directory that cannot be read back: one line naming the file."""


@dataclass(frozen=True, slots=True)
class StreamRow:
    spec: str
    resync: str
    every_rounds: int
    round_s: float
    policy: str                # the local policy in the slots, live and predicted
    owners: str                # "ws4:1 ...": owner processes live and in the prediction; "": none
    run_s: float               # time 0 to the last job done
    plans: int
    late_tables: int           # tables that reached their manager after their boundary
    # added 25 Nov 2026 (older runs' stream.csv lacks them: read as unknown)
    t0_epoch: float = math.nan     # time 0 on the host's wall clock (the meter's clock)
    kernel: str = ""               # the jobs' reference kernel ("": mixed, the meter's mean of its kernels)
    metered_speed: float = math.nan  # reference cores the workstations delivered of that kernel over the run


@dataclass(frozen=True, slots=True)
class StreamShare:
    """What a time-shared stream job's finished record adds (`StreamJob`): a row of jobs.csv.

    The record's own fields hold the rest: arrival_s, start_s (scheduled: its first tables took
    over; its launch and check-in came between), finish_s (done), max_procs (p), all from the
    stream's time 0 on the host's clock; its response is finish - arrival."""

    short: bool                # the allocation rule's short job (sustained β)
    admitted_s: float          # the plan that admitted it was made
    workstations: str
    beta: float                # in the plan that admitted it
    predicted_start_s: float   # the simulator's: its first progress
    predicted_p: int
    predicted_response_s: float
    metered_response_s: float = math.nan  # the simulator's again, at the run's metered speed (StreamRow)


StreamJob = FinishedJob[StreamShare]
"""A time-shared stream job, measured, beside its predictions: the shared finished record."""


def stream_job(job: str, cls: str, arrival_s: float, scheduled_s: float, done_s: float, p: int,
               share: StreamShare) -> StreamJob:
    """A stream job's finished record: p processors throughout, never preempted (it time-shares them)."""
    return FinishedJob(id=job, cls=cls, demand=1.0, arrival_s=arrival_s, start_s=scheduled_s, finish_s=done_s,
                       mean_procs=float(p), max_procs=p, requested_procs=p, preemptions=0, extra=share)


def error(j: StreamJob) -> float:
    """Measured response over the simulator's, minus 1 (NaN: not done by its horizon)."""
    return j.response_s / j.extra.predicted_response_s - 1 if j.extra.predicted_response_s > 0 else math.nan


def metered_error(j: StreamJob) -> float:
    """Measured response over the simulator's at the metered speed, minus 1."""
    m = j.extra.metered_response_s
    return j.response_s / m - 1 if m > 0 else math.nan


JOB_COLUMNS: dict[str, tuple[type, Callable[[StreamJob], object]]] = {
    "job": (str, lambda j: j.id), "short": (bool, lambda j: j.extra.short),
    "arrival_s": (float, lambda j: j.arrival_s), "admitted_s": (float, lambda j: j.extra.admitted_s),
    "scheduled_s": (float, lambda j: j.start_s), "predicted_start_s": (float, lambda j: j.extra.predicted_start_s),
    "done_s": (float, lambda j: j.finish_s), "workstations": (str, lambda j: j.extra.workstations),
    "p": (int, lambda j: j.max_procs), "beta": (float, lambda j: j.extra.beta),
    "response_s": (float, lambda j: j.response_s), "predicted_p": (int, lambda j: j.extra.predicted_p),
    "predicted_response_s": (float, lambda j: j.extra.predicted_response_s), "error": (float, error),
    "metered_response_s": (float, lambda j: j.extra.metered_response_s), "metered_error": (float, metered_error),
}
"""jobs.csv's columns, in order, each with its type and where a stream job's record holds it (response_s,
error and metered_error are derived: written, not read back)."""
DERIVED = ("response_s", "error", "metered_error")


def job_of_row(row: Mapping[str, object]) -> StreamJob:
    """A jobs.csv row back as the job's record (jobs.csv carries no class: cls is "")."""
    share = StreamShare(**{f.name: row[f.name] for f in fields(StreamShare)})
    return stream_job(str(row["job"]), "", float(row["arrival_s"]), float(row["scheduled_s"]),  # type: ignore[arg-type]
                      float(row["done_s"]), int(row["p"]), share)  # type: ignore[call-overload]


@dataclass(frozen=True, slots=True)
class StreamTableRow:
    epoch: int
    anchor_s: float            # the epoch's round 0, from time 0
    workstation: str
    slot: int
    process: str               # "": a dummy slot
    parallel_s: float
    sequential_s: float


@dataclass(frozen=True, slots=True)
class StreamIntervalRow:
    workstation: str
    job: str                   # "": no parallel job
    start_s: float             # from time 0, global clock
    end_s: float


@dataclass(frozen=True, slots=True)
class StreamRows:
    run: StreamRow
    jobs: tuple[StreamJob, ...]
    tables: tuple[StreamTableRow, ...]
    intervals: tuple[StreamIntervalRow, ...]


def jobs_kernel(spec: TimeshareSpec) -> str:
    """The reference kernel every job's work is made of ("" when they differ)."""
    kernels = {KERNEL_OF[e.workload] for e in spec.job}
    return kernels.pop() if len(kernels) == 1 else ""


def short_jobs(spec: TimeshareSpec) -> dict[str, bool]:
    """Each job's class by the allocation rule: short when its T_d(1) is at most short_t1_s.
    (Not whether one plan of all the jobs at once admits it as short: one that waits is still short.)"""
    manager = spec.manager()
    return {j: d.model.T(1) <= manager.rule.short_t1_s for j, d in manager.demands.items()}


def predict(spec: TimeshareSpec, policy: LocalPolicy, resync: ResyncPlan, owners: dict[str, int],
            speed_ref_cores: float | None = None) -> dict[str, FinishedJob]:
    """The simulator's run of the spec as the live run was made; at another speed if given (the metered one)."""
    if speed_ref_cores is not None:
        spec = spec.model_copy(update={"speed_ref_cores": speed_ref_cores})
    setup = replace(spec.setup(policy, resync.kind, resync.every_rounds), owners=owners)
    return {str(r.id): r for r in spec.simulate_run(setup).jobs}


def metered_speed(meter_dir: Path, workstations: Sequence[str], t0: float, t1: float, kernel: str) -> float:
    """The median over the workstations of the reference speed each delivered of `kernel` over
    [t0, t1] (testbed.meter: quota x the core's metered factor); NaN if nothing was metered."""
    got = [d.speed for w in workstations
           if (d := speed_over(meter_dir, w, t0, t1, kernel=kernel or None)).speed is not None]
    return statistics.median(got) if got else math.nan


def with_metered(rows: StreamRows, spec: TimeshareSpec, speed: float, kernel: str,
                 t0_epoch: float | None = None) -> StreamRows:
    """`rows` with each job's prediction redone at `speed` (the run's metered speed of `kernel`)."""
    r = rows.run
    if not speed > 0:
        return replace(rows, run=replace(r, kernel=kernel, metered_speed=math.nan,
                                         t0_epoch=r.t0_epoch if t0_epoch is None else t0_epoch))
    owners = dict(o.split(":") for o in r.owners.split()) if r.owners else {}
    pred = predict(spec, LocalPolicy(r.policy), ResyncPlan(Resync(r.resync), r.every_rounds),
                   {w: int(n) for w, n in owners.items()}, speed)
    jobs = []
    for j in rows.jobs:
        m = pred[str(j.id)].response_s  # NaN: not done by the horizon
        jobs.append(replace(j, extra=replace(j.extra, metered_response_s=m)))
    return replace(rows, run=replace(r, kernel=kernel, metered_speed=speed,
                                     t0_epoch=r.t0_epoch if t0_epoch is None else t0_epoch), jobs=tuple(jobs))


def measure_stream(run: StreamRun, spec: TimeshareSpec) -> StreamRows:
    live = run.live
    t0 = run.started_s
    policy = LocalPolicy(live.policy or LocalPolicy.IMPLICIT.value)
    owners = dict(spec.simulate.owners) if run.owner_commands is not None else {}
    predicted = predict(spec, policy, live.resync, owners)
    short = short_jobs(spec)
    jobs = []
    for job_id in run.jobs:
        submitted = run.jobs[job_id]
        placed, pred = submitted.extra, predicted[job_id]
        named = [e.anchor_s for e in live.epochs if any(job_id in t.processes for t in e.tables.values())]
        share = StreamShare(short.get(job_id, False), placed.admitted_s - t0, " ".join(placed.hosts), placed.beta,
                            pred.start_s, pred.max_procs, pred.response_s)  # NaN response: not done by the horizon
        jobs.append(stream_job(job_id, submitted.cls, submitted.arrival_s, (min(named) - t0) if named else math.nan,
                               run.runs[job_id].done_s - t0, len(placed.hosts), share))
    tables = [StreamTableRow(i, e.anchor_s - t0, w, k, s.process or "", s.parallel_s, s.sequential_s)
              for i, e in enumerate(live.epochs) for w, t in sorted(e.tables.items())
              for k, s in enumerate(t.slots, start=1)]
    offsets = {s.workstation: s.offset_s for s in live.sent}
    end_s = max(r.done_s for r in run.runs.values())
    rows = []
    for w, timeline in sorted(live.timelines.items()):
        for iv in intervals(timeline, end_s + offsets[w]):
            rows.append(StreamIntervalRow(w, iv.job or "", iv.start_s - offsets[w] - t0, iv.end_s - offsets[w] - t0))
    head = StreamRow(run.spec_name, live.resync.kind.value, live.resync.every_rounds, live.round_s,
                     policy.value, " ".join(f"{w}:{n}" for w, n in sorted(owners.items())), end_s - t0,
                     len(run.plans), sum(len(e.late) for e in live.epochs), t0_epoch=t0, kernel=jobs_kernel(spec))
    return StreamRows(head, tuple(jobs), tuple(tables), tuple(rows))


def write_stream_rows(out_dir: Path, rows: StreamRows) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    jobs = [{col: get(j) for col, (_kind, get) in JOB_COLUMNS.items()} for j in rows.jobs]
    frames = (pd.DataFrame([asdict(rows.run)], columns=_columns(StreamRow)), pd.DataFrame(jobs, columns=list(JOB_COLUMNS)),
              *(pd.DataFrame([asdict(r) for r in items], columns=_columns(cls))
                for items, cls in ((rows.tables, StreamTableRow), (rows.intervals, StreamIntervalRow))))
    written = []
    for name, frame in zip(FILES, frames):
        frame.to_csv(out_dir / name, index=False)
        written.append(out_dir / name)
    return written


def _columns(cls: type) -> list[str]:
    return [f.name for f in fields(cls)]


def read_stream_rows(run_dir: Path) -> StreamRows:
    kinds = (StreamRow, None, StreamTableRow, StreamIntervalRow)  # None: jobs.csv, by JOB_COLUMNS
    out: list[tuple] = []
    for name, cls in zip(FILES, kinds):
        path = run_dir / name
        try:
            frame = pd.read_csv(path, keep_default_na=False, na_values=[""])
        except FileNotFoundError:
            raise StreamFilesError(f"{path}: missing (a stream run directory holds {', '.join(FILES)})") from None
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
            raise StreamFilesError(f"{path}: not a CSV file ({str(exc).splitlines()[0]})") from None
        want = list(JOB_COLUMNS) if cls is None else _columns(cls)
        added = [c for c in want if c in ADDED]
        if list(frame.columns) == [w for w in want if w not in added]:  # a run written before they were
            for col in added:
                frame[col] = "" if col in TEXT_ADDED else math.nan
        if list(frame.columns) != want:
            raise StreamFilesError(f"{path.name}: columns {list(frame.columns)}, expected {want}")
        text = ({c for c, (kind, _get) in JOB_COLUMNS.items() if kind is str} if cls is None
                else {f.name for f in fields(cls) if f.type == "str"})
        for col in text:
            frame[col] = frame[col].fillna("").astype(str)
        records = frame.to_dict("records")
        out.append(tuple(job_of_row(rec) for rec in records) if cls is None else tuple(cls(**rec) for rec in records))
    if len(out[0]) != 1:
        raise StreamFilesError(f"{run_dir / FILES[0]}: expected one row, got {len(out[0])}")
    return StreamRows(out[0][0], out[1], out[2], out[3])


def _pct(x: float) -> str:
    return "-" if math.isnan(x) else f"{x:+.1%}"


def render_stream_markdown(rows: StreamRows) -> str:
    r = rows.run
    metered = not math.isnan(r.metered_speed)
    kernel = r.kernel or "mixed: the meter's mean of its kernels"
    span = "over the run" if not math.isnan(r.t0_epoch) else "over the cluster's whole meter record"
    variant = r.resync + (f" every {r.every_rounds} rounds" if r.resync == "loose" else "")
    lines = [f"# Time sharing live on an arrival stream: {r.spec} under {variant}", "",
             f"Round {r.round_s:g} s. The global manager replanned {r.plans} times, at arrivals and ends; each plan "
             f"took over at a round boundary of the tables before it ({r.late_tables} tables late). The last job "
             f"ended {r.run_s:.1f} s after time 0. Local policy {r.policy}; owners {r.owners or 'none'}. Predicted: "
             f"the simulator on the same spec, manager, policy, resync and owners.", "",
             *([f"The jobs' kernel ({kernel}) was delivered at {r.metered_speed:.3f} reference cores {span}, "
                f"median of the workstations (the keeper's meter: quota x the core's factor for that kernel) "
                f"against the spec's speed_ref_cores, which the governor holds for the mean of its kernels: the "
                f"second prediction is the simulator at that speed.", ""] if metered else []),
             "![who ran when](timeline.png)", "",
             "Times from time 0: admitted, the plan was made; scheduled, its first tables took over (after its "
             "launch and check-in); the simulator schedules it at the first boundary after its arrival.", "",
             md_table(["job", "short", "arrival s", "admitted s", "scheduled s", "predicted start s", "done s",
                       "workstations", "β", "response s", "predicted s", "error",
                       *(["at metered speed s", "error"] if metered else [])],
                      [[j.id, 'yes' if x.short else 'no', f"{j.arrival_s:.1f}", f"{x.admitted_s:.1f}",
                        f"{j.start_s:.1f}", f"{x.predicted_start_s:.1f}", f"{j.finish_s:.1f}", x.workstations,
                        f"{x.beta:.3g}", f"{j.response_s:.1f}", f"{x.predicted_response_s:.1f}", _pct(error(j)),
                        *([f"{x.metered_response_s:.1f}", _pct(metered_error(j))] if metered else [])]
                       for j in rows.jobs for x in (j.extra,)])]
    for label, pick in (("short", True), ("large", False)):
        group = [j for j in rows.jobs if j.extra.short == pick]
        if group:
            m = statistics.mean(j.response_s for j in group)
            p = statistics.mean(j.extra.predicted_response_s for j in group)
            lines += ["", f"Mean response of the {len(group)} {label} jobs: {m:.1f} s measured, {p:.1f} s predicted "
                          f"({_pct(m / p - 1)})" + (
                              f"; {(q := statistics.mean(j.extra.metered_response_s for j in group)):.1f} s at the metered "
                              f"speed ({_pct(m / q - 1)})." if metered else ".")]
    lines += ["", "## The tables of each plan", "",
              md_table(["plan", "from s", "workstation", "slot", "process", "Δt_p s", "Δt_s s"],
                       [[t.epoch, f"{t.anchor_s:.2f}", t.workstation, t.slot, t.process or '(dummy)',
                         f"{t.parallel_s:.4g}", f"{t.sequential_s:.4g}"] for t in rows.tables])]
    lines += ["", "Files: stream.csv, jobs.csv, tables.csv, timeline.csv (`nowlab timeshare report DIR` redoes "
                  "this page from them).", ""]
    return "\n".join(lines)


def stream_timeline_png(rows: StreamRows, path: Path) -> Path:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    jobs = [j.id for j in rows.jobs]
    cmap = plt.get_cmap("tab10")
    colour = {j: cmap(i % 10) for i, j in enumerate(jobs)}
    workstations = sorted({iv.workstation for iv in rows.intervals})
    fig, ax = plt.subplots(figsize=(12, 0.6 * len(workstations) + 2))
    for y, w in enumerate(workstations):
        for iv in rows.intervals:
            if iv.workstation == w and iv.end_s > 0:
                ax.broken_barh([(max(iv.start_s, 0.0), iv.end_s - max(iv.start_s, 0.0))], (y - 0.4, 0.8),
                               facecolors=colour.get(iv.job, "#dddddd"))
    for anchor_s in sorted({t.anchor_s for t in rows.tables}):
        ax.axvline(anchor_s, color="black", linewidth=0.6, linestyle=":")
    for j in rows.jobs:
        ax.plot([j.arrival_s], [-0.8], marker="v", color=colour[j.id])
    ax.set_yticks(range(len(workstations)), workstations)
    ax.set_xlabel("s from time 0 (dotted: a plan takes over; triangles: arrivals)")
    ax.legend(handles=[matplotlib.patches.Patch(color=colour[j], label=j) for j in jobs], loc="upper right",
              ncol=min(len(jobs), 8), fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_stream_report(run_dir: Path) -> list[Path]:
    rows = read_stream_rows(run_dir)
    png = stream_timeline_png(rows, run_dir / "timeline.png")
    md = run_dir / "report.md"
    md.write_text(render_stream_markdown(rows) + "\n" + "\n".join(owners_markdown(read_owner_commands(run_dir),
                                                                            rows.run.policy)))
    return [md, png]


def keep_meter(meter_dir: Path, out_dir: Path, t0: float, t1: float) -> list[Path]:
    """The keeper's samples and quotas over [t0, t1] copied beside the run (with the quota each
    workstation had at t0), so its metered speed can be checked once the cluster is gone."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = out_dir / SAMPLES_CSV, out_dir / QUOTAS_CSV
    for p in paths:
        p.unlink(missing_ok=True)
    append_samples(paths[0], series(meter_dir, t0, t1))
    quotas = read_quotas(meter_dir / QUOTAS_CSV)
    before = {q.workstation: q for q in quotas if q.t < t0}  # the last one before t0, each
    append_quotas(paths[1], [*before.values(), *(q for q in quotas if t0 <= q.t <= t1)])
    return list(paths)


def record_stream(run: StreamRun, spec: TimeshareSpec, out_dir: Path, meter_dir: Path | None = None) -> list[Path]:
    """The run's CSVs and report; with `meter_dir` (the cluster's state folder, where the keeper
    writes meter.csv and quotas.csv) each job is also predicted at the speed its kernel was delivered."""
    rows = measure_stream(run, spec)
    kept: list[Path] = []
    if meter_dir is not None:
        t1 = run.started_s + rows.run.run_s
        kept = keep_meter(meter_dir, out_dir, run.started_s, t1)
        speed = metered_speed(out_dir, spec.workstations, run.started_s, t1, rows.run.kernel)
        rows = with_metered(rows, spec, speed, rows.run.kernel)
    written = [*write_stream_rows(out_dir, rows), *kept]
    if run.owner_commands is not None:
        written.append(write_owner_commands(out_dir, run.owner_commands))
    return [*written, *write_stream_report(out_dir)]


def remeter_stream(run_dir: Path, spec: TimeshareSpec, meter_dir: Path) -> list[Path]:
    """A stream run's predictions redone at its metered speed, from the keeper's CSVs in `meter_dir`,
    over the run's span, or over the whole record for a run from before time 0 was noted; its
    jobs' short flags from the spec's rule."""
    rows = read_stream_rows(run_dir)
    if rows.run.spec != spec.name:
        raise ValueError(f"--spec: {spec.name!r} is not the spec of {run_dir} ({rows.run.spec!r})")
    if math.isnan(rows.run.t0_epoch):
        quotas = read_quotas(meter_dir / QUOTAS_CSV)
        if not quotas:
            raise ValueError(f"{meter_dir / QUOTAS_CSV}: no quota rows")
        t0, t1 = quotas[0].t, quotas[-1].t
    else:
        t0, t1 = rows.run.t0_epoch, rows.run.t0_epoch + rows.run.run_s
    kernel = jobs_kernel(spec)
    short = short_jobs(spec)  # runs before 25 Nov 2026 marked only the jobs a plan of all at once admitted
    rows = replace(rows, jobs=tuple(replace(j, extra=replace(j.extra, short=short[str(j.id)])) for j in rows.jobs))
    return write_stream_rows(run_dir, with_metered(rows, spec, metered_speed(meter_dir, spec.workstations, t0, t1,
                                                                              kernel), kernel))


def compare_streams_markdown(runs: list[tuple[str, StreamRows, tuple[OwnerCommand, ...] | None]]) -> str:
    """Stream runs of one spec side by side (one per resync variant): each job's response, the short jobs' mean."""
    jobs = [str(j.id) for j in runs[0][1].jobs]
    metered = all(not math.isnan(rows.run.metered_speed) for _n, rows, _o in runs)

    def cell(measured: float, group: list[StreamJob], pick) -> str:
        pred = f"{statistics.mean(pick(j, False) for j in group):.1f}"
        if metered:
            pred += f" / {statistics.mean(pick(j, True) for j in group):.1f}"
        return f"{measured:.1f} ({pred})"

    def predicted(j: StreamJob, at_metered: bool) -> float:
        return j.extra.metered_response_s if at_metered else j.extra.predicted_response_s

    lines = ["# Time sharing live on an arrival stream: the runs side by side", "",
             "Response (arrival to done) in s, measured; in brackets the simulator's for the same variant"
             + (", at the spec's speed / at the speed the jobs' kernel was delivered (metered)." if metered else "."),
             ""]
    table = []
    for name, rows, owners in runs:
        r = rows.run
        variant = r.resync + (f" every {r.every_rounds}" if r.resync == "loose" else "")
        by_job = {str(j.id): j for j in rows.jobs}
        cells = [cell(by_job[j].response_s, [by_job[j]], predicted) if j in by_job else "-" for j in jobs]
        means = []
        for pick in (True, False):
            group = [j for j in rows.jobs if j.extra.short == pick]
            means.append(cell(statistics.mean(j.response_s for j in group), group, predicted) if group else "-")
        owner_cell = ", ".join(f"{o.workstation} {o.mean_response_s:.3f}" for o in summarise(owners)) if owners else "-"
        table.append([name, variant, r.policy, *cells, means[0], means[1], owner_cell])
    lines.append(md_table(["run", "variant", "policy", *jobs, "short jobs' mean", "large jobs' mean",
                           "owners' mean response s"], table))
    return "\n".join(lines) + "\n"
