"""A time-sharing run's report: Markdown beside its PNGs, from the run's CSV files alone.

`write_report(dir)` reads the CSVs experiments/studies/zhou_brent/files.py wrote and writes report.md,
timeline.png (Zhou & Brent Figs. 3/4: who ran when, the tables beside it), skew.png and
speedup.png. `render_markdown` is pure.
"""
from __future__ import annotations

import math
import statistics
from pathlib import Path

from experiments.reporting.tables import md_table
from experiments.studies.zhou_brent.files import read_rows, write_rows
from experiments.studies.zhou_brent.measure import RunRows, SkewRow, measure
from experiments.studies.zhou_brent.owners import owners_markdown, read_owner_commands, summarise, write_owner_commands
from experiments.studies.zhou_brent.report_plot import skew_png, speedup_png, timeline_png
from experiments.studies.zhou_brent.live import TimeshareRun

SPEEDUP_TOLERANCE = 0.10  # S_e measured within 10 % of β·S_d (issue 17)
SHARE_TOLERANCE = 0.05    # a job's share within 5 % of its β


def _f(x: float, digits: int = 3) -> str:
    return "-" if math.isnan(x) else f"{x:.{digits}g}"


def _ms(x: float) -> str:
    return "-" if math.isnan(x) else f"{x * 1e3:.2f}"


def _spread(values: list[float]) -> tuple[str, str, str]:
    """Median, 95th percentile and max of |values|, in ms."""
    if not values:
        return "-", "-", "-"
    mag = sorted(abs(v) for v in values)
    p95 = mag[min(len(mag) - 1, math.ceil(0.95 * len(mag)) - 1)]
    return _ms(statistics.median(mag)), _ms(p95), _ms(mag[-1])


def skew_summary(skews: tuple[SkewRow, ...]) -> list[tuple[str, str, int, str, str, str]]:
    out = []
    for w in sorted({s.workstation for s in skews}):
        for kind in ("sample", "correction"):
            vals = [s.skew_s for s in skews if s.workstation == w and s.kind == kind]
            if vals:
                out.append((w, kind, len(vals), *_spread(vals)))
    return out


def _speedup_lines(rows: RunRows, given: str) -> list[str]:
    """The S_e section: each job's three times, S_d, β·S_d and T_d(1)/T_e; `given` says what gave β."""
    r = rows.run
    within = [j for j in rows.jobs if not math.isnan(j.error) and abs(j.error) <= SPEEDUP_TOLERANCE]
    judged = [j for j in rows.jobs if not math.isnan(j.error)]
    borrowed = (f", taken from the dedicated runs of {r.dedicated_from} (same spec and cluster; the answers "
                f"are compared there, not here)") if r.dedicated_from else ""
    lines = ["## Effective speedup: S_e = β·S_d (Zhou & Brent §2)", "",
             f"T_d(1), T_d(p): each job alone, dedicated{borrowed}; T_e: time-shared; times are the workload's own "
             f"(first iteration to last). {given} Target: measured within {SPEEDUP_TOLERANCE:.0%} of predicted: "
             f"{len(within)} of {len(judged)} jobs.", "",
             md_table(["job", "workstations", "p", "β", "T_d(1) s", "T_d(p) s", "T_e(p) s", "S_d", "S_e predicted",
                       "S_e measured", "error", "same answer"],
                      [[j.job, j.workstations, j.p, f"{j.beta:g}", _f(j.t_d1_s, 4), _f(j.t_dp_s, 4), _f(j.t_e_s, 4),
                        _f(j.s_d), _f(j.s_e_predicted), _f(j.s_e_measured),
                        '-' if math.isnan(j.error) else f'{j.error:+.1%}', j.same_answer] for j in rows.jobs])]
    return [*lines, "", "![S_e measured against predicted](speedup.png)", ""]


def render_os_alone_markdown(rows: RunRows) -> str:
    """A run with no managers (resync "os"): each job's times and S_e only; nothing else was there to measure."""
    r = rows.run
    lines = [f"# Time sharing live: {r.spec} with no managers, the OS alone", "",
             f"No managers: the OS scheduled the ranks. Every job's ranks were launched at once on its workstations "
             f"and shared each workstation's CPU under the kernel's scheduler only (Zhou & Brent §1's local "
             f"scheduling): no tables, nothing stopped or continued, so there is no timeline, skew, share or "
             f"switch cost to report. Waits on MPI: {r.wait}. The run took {r.run_s:.1f} s from the "
             f"first launch to the last job done.", "",
             *_speedup_lines(rows, "β is the job's share in the spec: what the tables would have held it to, not "
                                   "anything this run gave it."),
             "The simulator has no prediction for this arm: it runs a job's processes only in the slots of its "
             "tables (scheduler/timeshare/simulate.py), and how far a job gets when the kernel alone decides "
             "which ranks run together is what this run measures.", "",
             "Files: run.csv, jobs.csv (the other CSVs are empty: no managers) "
             "(`nowlab timeshare report DIR` redoes this page from them).", ""]
    return "\n".join(lines)


def render_markdown(rows: RunRows) -> str:
    r = rows.run
    if not r.managers:
        return render_os_alone_markdown(rows)
    variant = r.resync + (f" every {r.every_rounds} rounds" if r.resync == "loose" else "")
    lines = [f"# Time sharing live: {r.spec} under {variant}", "",
             f"Round {r.round_s:g} s, local policy {r.policy}, waits on MPI: {r.wait}. The run took "
             f"{r.run_s:.1f} s from the first launch to the last job done; "
             f"the jobs ran unmanaged, all at once, for the first {r.lead_before_round0_s:.2f} s (start-up, "
             f"check-ins, the tables' lead) before round 0. Dead managers: {r.dead_managers or 'none'} "
             f"(watchdog bound {r.watchdog_bound_s:.2f} s).", "",
             "![who ran when](timeline.png)", "",
             *_speedup_lines(rows, "β: the job's share of its workstations in the tables.")]
    lines += ["## Each job's share of its workstations against its β", "",
              f"From the managers' timelines, over the whole rounds from round 0 to the job's end "
              f"(target: within {SHARE_TOLERANCE:.0%} of β).", "",
              md_table(["workstation", "job", "β", "share", "rounds", "off by"],
                       [[s.workstation, s.job, f"{s.beta:g}", f"{s.share:.3f}", s.rounds, f"{s.share / s.beta - 1:+.1%}"]
                        for s in rows.shares])]
    lines += ["", "## Scheduling tables", "",
              md_table(["workstation", "slot", "process", "offset s", "Δt_p s", "Δt_s s"],
                       [[t.workstation, t.slot, t.process or '(dummy)', f"{t.offset_s:.4g}", f"{t.parallel_s:.4g}",
                         f"{t.sequential_s:.4g}"] for t in rows.tables])]
    lines += ["", f"## Skew between slot boundaries ({variant})", "",
              "sample: where a workstation's round 0 lay against the global one at each timeline poll (the "
              "skew as it stands, corrected or not); correction: what each resync removed. |skew| in ms; each "
              "figure is good to half the clock estimate's round trip. Clocks: "
              + (f"each manager's run off by its emulated drift ({r.drift_ppm}, ppm)." if r.drift_ppm else
                 "one host clock for every manager (no drift: uncorrected skew stays where the table's start "
                 "left it)."), "",
              md_table(["workstation", "kind", "n", "median", "95th pct", "max"], skew_summary(rows.skews))]
    lines += ["", "![skew over time](skew.png)", "", "## Switch cost and the managers' CPU", "",
              "Switch: a slot's end to the next process continued (the manager's own latencies).", "",
              md_table(["workstation", "switches", "median ms", "95th pct ms", "max ms", "timer wake median ms", "CPU s",
                        "CPU share", "dead"],
                       [[m.workstation, m.switches, _ms(m.switch_median_s), _ms(m.switch_p95_s), _ms(m.switch_max_s),
                         _ms(m.wake_median_s), _f(m.cpu_s), '-' if math.isnan(m.cpu_share) else f'{m.cpu_share:.2%}',
                         'yes' if m.dead else 'no'] for m in rows.managers])]
    lines += ["", "Files: run.csv, jobs.csv, shares.csv, timeline.csv, tables.csv, skew.csv, managers.csv "
              "(`nowlab timeshare report DIR` redoes this page from them).", ""]
    return "\n".join(lines)


def write_report(run_dir: Path) -> list[Path]:
    """report.md and its PNGs in run_dir, from the CSVs there."""
    rows = read_rows(run_dir)
    pngs = ([timeline_png(rows, run_dir / "timeline.png"), skew_png(rows, run_dir / "skew.png")] if rows.run.managers
            else [])  # no managers: no timeline or skew to draw
    pngs.append(speedup_png(rows, run_dir / "speedup.png"))
    md = run_dir / "report.md"
    owners = owners_markdown(read_owner_commands(run_dir), rows.run.policy)
    md.write_text(render_markdown(rows) + "\n" + "\n".join(owners))
    return [md, *pngs]


def record_run(run: TimeshareRun, out_dir: Path) -> list[Path]:
    """A finished run's CSVs, then its report from them."""
    written = write_rows(out_dir, measure(run))
    if run.owner_commands is not None:
        written.append(write_owner_commands(out_dir, run.owner_commands))
    return [*written, *write_report(out_dir)]


def _owner_means(owners: tuple | None, policy: str) -> str:
    if owners is None:
        return "-"
    return f"{policy}: " + ", ".join(f"{o.workstation} {o.mean_response_s:.3f}" for o in summarise(owners))


def compare_markdown(runs: list[tuple[str, RunRows, tuple | None]]) -> str:
    """Several runs of one spec side by side: one per resync variant, or the arms of "why coscheduling
    matters" ({managers, the OS alone} x {polite, spin} waits): each run's waits, whether managers ran,
    each job's T_e, skew, S_e and shares."""
    lines = ["# Time sharing live: the runs side by side", "",
             "managers: whether local managers kept tables (no: the OS alone scheduled the ranks); waits: how the "
             "ranks waited on MPI; T_e: each job's time-shared, s. |skew| in ms over all workstations: sample (as it "
             "stood at each timeline poll) and correction (what each resync removed); S_e error: measured against "
             "β·S_d; share: against β.", ""]
    table = []
    for name, rows, owners in runs:
        r = rows.run
        variant = r.resync + (f" every {r.every_rounds}" if r.resync == "loose" else "")
        samples = [s.skew_s for s in rows.skews if s.kind == "sample"]
        fixes = [s.skew_s for s in rows.skews if s.kind == "correction"]
        errors = [j.error for j in rows.jobs if not math.isnan(j.error)]
        offs = [s.share / s.beta - 1 for s in rows.shares]
        switch = [m.switch_median_s for m in rows.managers if not math.isnan(m.switch_median_s)]
        s_med, s_p95, s_max = _spread(samples)
        c_med, _, c_max = _spread(fixes)
        worst = max(errors, key=abs) if errors else math.nan
        worst_off = max(offs, key=abs) if offs else math.nan
        t_e = ", ".join(f"{j.job} {_f(j.t_e_s, 4)}" for j in rows.jobs)
        table.append([name, variant, 'yes' if r.managers else 'no', r.wait, t_e, len(samples), s_med, s_p95, s_max,
                      len(fixes), c_med, c_max, '-' if math.isnan(worst) else f'{worst:+.1%}',
                      '-' if math.isnan(worst_off) else f'{worst_off:+.1%}',
                      _ms(statistics.median(switch)) if switch else '-', _owner_means(owners, r.policy)])
    lines.append(md_table(["run", "variant", "managers", "waits", "T_e s", "skew samples", "median", "95th pct", "max",
                           "corrections", "median", "max", "S_e error (worst)", "share off by (worst)",
                           "switch median ms", "owners' mean response s"], table))
    return "\n".join(lines) + "\n"
