"""A stream run's report (experiments/timeshare_stream.py): each job's response measured beside predicted.

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

import pandas as pd

from experiments.timeshare_owners import (OwnerCommand, owners_markdown, read_owner_commands, summarise,
                                         write_owner_commands)
from experiments.timeshare_spec import TimeshareSpec
from experiments.timeshare_stream import StreamRun
from experiments.timeshare_timeline import intervals
from scheduler.timeshare.simulate import LocalPolicy

FILES = ("stream.csv", "jobs.csv", "tables.csv", "timeline.csv")


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


@dataclass(frozen=True, slots=True)
class StreamJobRow:
    job: str
    short: bool                # the allocation rule's short job (sustained β)
    arrival_s: float           # all times from the stream's time 0, host clock
    admitted_s: float          # the plan that admitted it was made
    scheduled_s: float         # the first tables naming it took over (its launch and check-in came between)
    predicted_start_s: float   # the simulator's: its first progress
    done_s: float
    workstations: str
    p: int
    beta: float                # in the plan that admitted it
    response_s: float          # arrival to done
    predicted_p: int
    predicted_response_s: float
    error: float               # measured / predicted - 1


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
    jobs: tuple[StreamJobRow, ...]
    tables: tuple[StreamTableRow, ...]
    intervals: tuple[StreamIntervalRow, ...]


def measure_stream(run: StreamRun, spec: TimeshareSpec) -> StreamRows:
    live = run.live
    t0 = run.started_s
    policy = LocalPolicy(live.policy or LocalPolicy.IMPLICIT.value)
    owners = dict(spec.simulate.owners) if run.owner_commands is not None else {}
    setup = replace(spec.setup(policy, live.resync.kind, live.resync.every_rounds), owners=owners)
    predicted = {r.job: r for r in spec.simulate_run(setup).jobs}
    short = {a.share.job: a.short for a in spec.manager().admit(tuple(j.id for j in spec.job), {})}
    jobs = []
    for j in run.jobs.values():
        pred = predicted[j.job]
        pred_s = pred.response_s if pred.response_s is not None else math.nan
        named = [e.anchor_s for e in live.epochs if any(j.job in t.processes for t in e.tables.values())]
        jobs.append(StreamJobRow(j.job, short.get(j.job, False), j.arrival_s - t0, j.admitted_s - t0,
                                 (min(named) - t0) if named else math.nan,
                                 pred.start_s if pred.start_s is not None else math.nan,
                                 j.run.done_s - t0, " ".join(j.hosts), len(j.hosts), j.beta, j.response_s,
                                 pred.processors, pred_s, j.response_s / pred_s - 1 if pred_s > 0 else math.nan))
    tables = [StreamTableRow(i, e.anchor_s - t0, w, k, s.process or "", s.parallel_s, s.sequential_s)
              for i, e in enumerate(live.epochs) for w, t in sorted(e.tables.items())
              for k, s in enumerate(t.slots, start=1)]
    offsets = {s.workstation: s.offset_s for s in live.sent}
    end_s = max(j.run.done_s for j in run.jobs.values())
    rows = []
    for w, timeline in sorted(live.timelines.items()):
        for iv in intervals(timeline, end_s + offsets[w]):
            rows.append(StreamIntervalRow(w, iv.job or "", iv.start_s - offsets[w] - t0, iv.end_s - offsets[w] - t0))
    head = StreamRow(run.spec_name, live.resync.kind.value, live.resync.every_rounds, live.round_s,
                     policy.value, " ".join(f"{w}:{n}" for w, n in sorted(owners.items())), end_s - t0,
                     len(run.plans), sum(len(e.late) for e in live.epochs))
    return StreamRows(head, tuple(jobs), tuple(tables), tuple(rows))


def write_stream_rows(out_dir: Path, rows: StreamRows) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    parts = ((rows.run,), rows.jobs, rows.tables, rows.intervals)
    kinds = (StreamRow, StreamJobRow, StreamTableRow, StreamIntervalRow)
    written = []
    for name, items, cls in zip(FILES, parts, kinds):
        frame = pd.DataFrame([asdict(r) for r in items], columns=[f.name for f in fields(cls)])
        frame.to_csv(out_dir / name, index=False)
        written.append(out_dir / name)
    return written


def read_stream_rows(run_dir: Path) -> StreamRows:
    kinds = (StreamRow, StreamJobRow, StreamTableRow, StreamIntervalRow)
    out = []
    for name, cls in zip(FILES, kinds):
        path = run_dir / name
        try:
            frame = pd.read_csv(path, keep_default_na=False, na_values=[""])
        except FileNotFoundError:
            raise StreamFilesError(f"{path}: missing (a stream run directory holds {', '.join(FILES)})") from None
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
            raise StreamFilesError(f"{path}: not a CSV file ({str(exc).splitlines()[0]})") from None
        want = [f.name for f in fields(cls)]
        if list(frame.columns) != want:
            raise StreamFilesError(f"{path.name}: columns {list(frame.columns)}, expected {want}")
        text = {f.name for f in fields(cls) if f.type == "str"}
        for col in text:
            frame[col] = frame[col].fillna("").astype(str)
        out.append(tuple(cls(**rec) for rec in frame.to_dict("records")))
    if len(out[0]) != 1:
        raise StreamFilesError(f"{run_dir / FILES[0]}: expected one row, got {len(out[0])}")
    return StreamRows(out[0][0], out[1], out[2], out[3])


def _pct(x: float) -> str:
    return "-" if math.isnan(x) else f"{x:+.1%}"


def render_stream_markdown(rows: StreamRows) -> str:
    r = rows.run
    variant = r.resync + (f" every {r.every_rounds} rounds" if r.resync == "loose" else "")
    lines = [f"# Time sharing live on an arrival stream: {r.spec} under {variant}", "",
             f"Round {r.round_s:g} s. The global manager replanned {r.plans} times, at arrivals and ends; each plan "
             f"took over at a round boundary of the tables before it ({r.late_tables} tables late). The last job "
             f"ended {r.run_s:.1f} s after time 0. Local policy {r.policy}; owners {r.owners or 'none'}. Predicted: "
             f"the simulator on the same spec, manager, policy, resync and owners.", "",
             "![who ran when](timeline.png)", "",
             "Times from time 0: admitted, the plan was made; scheduled, its first tables took over (after its "
             "launch and check-in); the simulator schedules it at the first boundary after its arrival.", "",
             "| job | short | arrival s | admitted s | scheduled s | predicted start s | done s | workstations | β | "
             "response s | predicted s | error |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for j in rows.jobs:
        lines.append(f"| {j.job} | {'yes' if j.short else 'no'} | {j.arrival_s:.1f} | {j.admitted_s:.1f} | "
                     f"{j.scheduled_s:.1f} | {j.predicted_start_s:.1f} | "
                     f"{j.done_s:.1f} | {j.workstations} | {j.beta:.3g} | {j.response_s:.1f} | "
                     f"{j.predicted_response_s:.1f} | {_pct(j.error)} |")
    for label, pick in (("short", True), ("large", False)):
        group = [j for j in rows.jobs if j.short == pick]
        if group:
            m, p = statistics.mean(j.response_s for j in group), statistics.mean(j.predicted_response_s for j in group)
            lines += ["", f"Mean response of the {len(group)} {label} jobs: {m:.1f} s measured, {p:.1f} s predicted "
                          f"({_pct(m / p - 1)})."]
    lines += ["", "## The tables of each plan", "",
              "| plan | from s | workstation | slot | process | Δt_p s | Δt_s s |", "|---|---|---|---|---|---|---|"]
    lines += [f"| {t.epoch} | {t.anchor_s:.2f} | {t.workstation} | {t.slot} | {t.process or '(dummy)'} | "
              f"{t.parallel_s:.4g} | {t.sequential_s:.4g} |" for t in rows.tables]
    lines += ["", "Files: stream.csv, jobs.csv, tables.csv, timeline.csv (`nowlab timeshare report DIR` redoes "
                  "this page from them).", ""]
    return "\n".join(lines)


def stream_timeline_png(rows: StreamRows, path: Path) -> Path:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    jobs = [j.job for j in rows.jobs]
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
        ax.plot([j.arrival_s], [-0.8], marker="v", color=colour[j.job])
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


def record_stream(run: StreamRun, spec: TimeshareSpec, out_dir: Path) -> list[Path]:
    written = write_stream_rows(out_dir, measure_stream(run, spec))
    if run.owner_commands is not None:
        written.append(write_owner_commands(out_dir, run.owner_commands))
    return [*written, *write_stream_report(out_dir)]


def compare_streams_markdown(runs: list[tuple[str, StreamRows, tuple[OwnerCommand, ...] | None]]) -> str:
    """Stream runs of one spec side by side (one per resync variant): each job's response, the short jobs' mean."""
    jobs = [j.job for j in runs[0][1].jobs]
    lines = ["# Time sharing live on an arrival stream: the runs side by side", "",
             "Response (arrival to done) in s, measured; in brackets the simulator's for the same variant.", "",
             "| run | variant | policy | " + " | ".join(jobs) + " | short jobs' mean | large jobs' mean | "
             "owners' mean response s |",
             "|---|---|---|" + "---|" * (len(jobs) + 3)]
    for name, rows, owners in runs:
        r = rows.run
        variant = r.resync + (f" every {r.every_rounds}" if r.resync == "loose" else "")
        by_job = {j.job: j for j in rows.jobs}
        cells = [f"{by_job[j].response_s:.1f} ({by_job[j].predicted_response_s:.1f})" if j in by_job else "-"
                 for j in jobs]
        means = []
        for pick in (True, False):
            group = [j for j in rows.jobs if j.short == pick]
            means.append(f"{statistics.mean(j.response_s for j in group):.1f} "
                         f"({statistics.mean(j.predicted_response_s for j in group):.1f})" if group else "-")
        owner_cell = ", ".join(f"{o.workstation} {o.mean_response_s:.3f}" for o in summarise(owners)) if owners else "-"
        lines.append(f"| {name} | {variant} | {r.policy} | " + " | ".join(cells) + f" | {means[0]} | {means[1]} | "
                     f"{owner_cell} |")
    return "\n".join(lines) + "\n"
