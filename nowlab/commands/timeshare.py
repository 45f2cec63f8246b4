"""Time-sharing commands (Zhou & Brent): `nowlab timeshare table|simulate|run SPEC`, `nowlab timeshare report DIR`."""
from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Optional

import typer

from nowlab.errors import fail, user_errors

timeshare_app = typer.Typer(no_args_is_help=True,
                            help="Time sharing after Zhou & Brent: scheduling tables and their simulation.")


def table_command(spec_file: Path = typer.Argument(..., help="Time-sharing spec (TOML), e.g. "
                                                   "experiments/studies/zhou_brent/configs/zhou-brent-fig3.toml")) -> None:
    """Print each job's allocation and every workstation's scheduling table (identical tables once)."""
    from rich.console import Console
    from rich.table import Table

    from experiments.studies.zhou_brent.spec import load_timeshare_spec

    with user_errors():
        spec = load_timeshare_spec(spec_file)
        allocations = spec.allocations()
        tables = spec.tables(allocations)
    console = Console()
    alloc = Table(title=f"{spec.title or spec.name}: allocations (ΔT = {spec.round_s:g} s, {spec.distribution.value})")
    for col in ("job", "workstations", "β", "S_d(p)", "S_e(p) = β S_d", "class", f"S_e ≥ γ = {spec.allocation.gamma:g}"):
        alloc.add_column(col, justify="left" if col in ("job", "workstations", "class") else "right")
    for a in allocations:
        alloc.add_row(a.share.job, ", ".join(a.share.workstations), f"{a.share.beta:.3g}", f"{a.dedicated_speedup:.3g}",
                      f"{a.effective_speedup:.3g}", "short" if a.short else "large", "yes" if a.meets_target else "no")
    console.print(alloc)
    waiting = [e.id for e in spec.job if e.id not in {a.share.job for a in allocations}]
    if waiting:
        console.print(f"with every job present, these would wait for room: {', '.join(waiting)}")
    groups: dict[tuple, list[str]] = {}
    for w, t in tables.items():
        groups.setdefault(t.slots, []).append(w)
    for slots, workstations in groups.items():
        t = Table(title=f"scheduling table of {', '.join(workstations)}")
        for col in ("slot", "process", "offset (s)", "Δt_p (s)", "Δt_s (s)", "Δt (s)"):
            t.add_column(col, justify="left" if col == "process" else "right")
        for i, s in enumerate(slots, start=1):
            t.add_row(str(i), s.process or "(dummy: sequential)", f"{s.offset_s:.4g}", f"{s.parallel_s:.4g}",
                      f"{s.sequential_s:.4g}", f"{s.width_s:.4g}")
        console.print(t)


def simulate_command(
    spec_file: Path = typer.Argument(..., help="Time-sharing spec (TOML)."),
    policy: Optional[str] = typer.Option(None, "--policy", help="Local policy: dedicated, implicit or proper-share (default: the spec's)."),
    resync: Optional[str] = typer.Option(None, "--resync", help="strict, loose or none (default: the spec's)."),
    every_rounds: Optional[int] = typer.Option(None, "--every", help="Rounds between resyncs under loose (default: the spec's)."),
    timeline_out: Optional[Path] = typer.Option(None, "--timeline", help="Write each workstation's timeline here (CSV: workstation, process, t0_s, t1_s)."),
) -> None:
    """Simulate the spec's jobs time-shared under its tables; print each job's response and the clocks' skew."""
    from rich.console import Console
    from rich.table import Table

    from experiments.studies.zhou_brent.spec import load_timeshare_spec
    from scheduler.jobs import Outcome
    from scheduler.timeshare.simulate import LocalPolicy, dedicated_s
    from scheduler.timeshare.tables import Resync

    chosen_policy = _choice(LocalPolicy, policy, "--policy")
    chosen_resync = _choice(Resync, resync, "--resync")
    if every_rounds is not None and every_rounds < 1:
        fail(f"--every: must be >= 1, got {every_rounds}")
    with user_errors():
        spec = load_timeshare_spec(spec_file)
        setup = spec.setup(chosen_policy, chosen_resync, every_rounds)
        result = spec.simulate_run(setup)
    console = Console()
    title = (f"{spec.name}: {setup.policy.value}, resync {setup.resync.kind.value}"
             + (f" every {setup.resync.every_rounds} rounds" if setup.resync.kind is Resync.LOOSE else "")
             + (", tables replanned at arrivals and ends" if spec.simulate.replan else ""))
    t = Table(title=title)
    for col in ("job", "p", "arrival (s)", "start (s)", "finish (s)", "response (s)", "T_d(p) (s)", "T_e/T_d"):
        t.add_column(col, justify="left" if col == "job" else "right")
    for r in result.jobs:
        done = r.status == Outcome.DONE
        t.add_row(str(r.id), str(r.max_procs), f"{r.arrival_s:.4g}", "-" if math.isnan(r.start_s) else f"{r.start_s:.4g}",
                  f"{r.finish_s:.4g}" if done else "not done", f"{r.response_s:.4g}" if done else "-",
                  f"{dedicated_s(r):.4g}", f"{r.response_s / dedicated_s(r):.3g}" if done else "-")
    console.print(t)
    worst = max((s.skew_s for s in result.skew), default=0.0)
    console.print(f"largest skew between slot boundaries: {worst * 1e3:.3g} ms; "
                  f"spinning without progress: {sum(result.spin_s.values()):.4g} CPU-s; "
                  f"owners got {sum(result.owner_cpu_s.values()):.4g} CPU-s")
    if timeline_out is not None:
        try:
            with timeline_out.open("w", newline="") as f:
                out = csv.writer(f)
                out.writerow(["workstation", "process", "t0_s", "t1_s"])
                for w, segments in result.timelines.items():
                    out.writerows([w, s.process, f"{s.t0_s:.6f}", f"{s.t1_s:.6f}"] for s in segments)
        except OSError as exc:
            fail(f"cannot write {exc.filename}: {exc.strerror}")
        console.print(f"wrote {timeline_out}")


def run_command(
    spec_file: Path = typer.Argument(..., help="Time-sharing spec (TOML): every job with a beta and workstations, "
                                               "or none with one and [simulate] replan = true (an arrival stream)."),
    cluster: Optional[str] = typer.Option(None, "--cluster", help="Run in this cluster's workstations (nowlab up)."),
    host: bool = typer.Option(False, "--host", help="Run on this host instead: managers as processes, ranks on its Open MPI."),
    resync: Optional[str] = typer.Option(None, "--resync", help="strict, loose:K (every K rounds) or none (default: the "
                                                               "spec's); os: no managers and no tables, the OS alone "
                                                               "schedules every job's ranks (not for an arrival stream)."),
    wait: Optional[str] = typer.Option(None, "--wait", help="polite or spin: how every job's ranks wait on MPI, for this "
                                                           "run (default: each job's wait in the spec, polite)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Report directory (default experiments/results/zhou-brent/"
                                                           "<spec>-<resync>[-<policy>][-<wait>])."),
    dedicated: bool = typer.Option(True, "--dedicated/--no-dedicated", help="Also run each job alone on 1 and on p workstations, for S_d."),
    phase_ref_s: float = typer.Option(0.5, "--phase-ref-s", help="A synthetic job runs in phases of this many reference-seconds."),
    policy: Optional[str] = typer.Option(None, "--policy", help="Local policy in the slots: implicit, dedicated or "
                                                               "proper-share (default: the spec's [simulate] policy)."),
    drift: bool = typer.Option(False, "--drift/--no-drift",
                               help="Run each workstation's manager clock off by the spec's [simulate] drift, as "
                                    "the simulator does (the workstations share one clock otherwise)."),
) -> None:
    """Run the spec's jobs time-shared (and each alone, dedicated), then write the report: CSVs, Markdown, PNGs.

    A spec with `replan = true` is an arrival stream: the jobs arrive at their arrival_s, the global
    manager allocates and replans at every arrival and end, and the report sets each job's
    response beside the simulator's (no dedicated runs).

    `--resync os` runs the same jobs with no coscheduling at all, and `--wait spin` has the ranks
    spin where they would sleep: together the arms of why coscheduling matters (Zhou & Brent §1)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from experiments.studies.zhou_brent.files import write_failure
    from experiments.studies.zhou_brent.global_manager import LiveSetup
    from experiments.studies.zhou_brent.report import record_run
    from experiments.studies.zhou_brent.live import (OS_ALONE, JobFailed, OsAlone, TimeshareRunError, TimeshareRunner, parse_variant,
                                           programs as spec_programs)
    from experiments.studies.zhou_brent.spec import load_timeshare_spec
    from experiments.studies.zhou_brent.stream import StreamRun, StreamRunner
    from experiments.studies.zhou_brent.stream_report import record_stream
    from scheduler.timeshare.simulate import LocalPolicy
    from testbed.state import cluster_dir
    from scheduler.timeshare.tables import ResyncPlan

    if (cluster is None) == (not host):
        fail("give --cluster NAME or --host (one of them)")
    with user_errors():
        spec = load_timeshare_spec(spec_file)
        if wait is not None:
            spec = spec.with_wait(wait)
        variant = parse_variant(resync) if resync else ResyncPlan(spec.simulate.resync, spec.simulate.every_rounds)
        local = _choice(LocalPolicy, policy, "--policy") or spec.simulate.policy
        if isinstance(variant, OsAlone):
            _os_alone_fits(spec.simulate.replan, policy, drift)
            setup: LiveSetup | OsAlone = variant
            label = OS_ALONE
        else:
            setup = LiveSetup(variant, policy=local.value)
            label = variant.kind.value + (f"{variant.every_rounds}" if variant.kind.value == "loose" else "")
        drift_ppm = {w: d * 1e6 for w, d in spec.simulate.drift.items()} if drift else {}
        backend = _backend(cluster, spec.workstations, drift_ppm)
        if spec.simulate.replan:
            runner = StreamRunner(spec, backend, setup, phase_ref_s=phase_ref_s, owners=spec.live_owners())
        else:
            runner = TimeshareRunner(spec, spec_programs(spec, phase_ref_s), backend, setup, dedicated=dedicated,
                                     owners=spec.live_owners())
    out_dir = out or Path("experiments/results/zhou-brent") / (f"{spec.name}-{label}" + (f"-{policy}" if policy else "")
                                                               + (f"-{wait.strip().lower()}" if wait else ""))
    console = Console()
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console) as bar:
        tasks: dict[str, int] = {}

        def progress(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done)

        runner.progress = progress
        with user_errors():
            try:
                run = runner.run()
            except JobFailed as exc:
                dedicated = ([{"job": job, "p": p, "hosts": list(r.hosts), "launched_s": r.launched_s,
                               "done_s": r.done_s, "compute_s": r.result.get("compute_s")}
                              for (job, p), r in runner.dedicated_runs.items()]
                             if isinstance(runner, TimeshareRunner) else [])
                kept = write_failure(out_dir, exc.job, exc.output, dedicated)
                raise TimeshareRunError(f"{exc} (kept: {', '.join(str(k) for k in kept)})") from None
    with user_errors():
        written = (record_stream(run, spec, out_dir, meter_dir=cluster_dir(cluster) if cluster else None)
                   if isinstance(run, StreamRun) else record_run(run, out_dir))
    console.print(f"wrote {', '.join(str(p) for p in written)}")


def report_command(
    run_dirs: list[Path] = typer.Argument(..., help="Run directories (their CSVs), from `nowlab timeshare run`."),
    compare: Optional[Path] = typer.Option(None, "--compare", help="Also write the runs side by side (Markdown) here."),
    dedicated_from: Optional[Path] = typer.Option(
        None, "--dedicated-from",
        help="A run of the same spec whose dedicated times (T_d(1), T_d(p)) fill in each run made with "
             "--no-dedicated; its jobs.csv and run.csv are rewritten."),
    meter_from: Optional[Path] = typer.Option(
        None, "--meter-from",
        help="Stream runs: a folder with the cluster's meter.csv and quotas.csv (its state folder, or a copy); "
             "each run is predicted again at the speed its jobs' kernel was delivered, over the run's span (over "
             "the whole record for a run that did not note its time 0). Needs --spec."),
    spec_file: Optional[Path] = typer.Option(None, "--spec", help="The runs' time-sharing spec (with --meter-from)."),
) -> None:
    """Redo each run's report (report.md and its PNGs) from its CSV files; with --compare, the runs side by side."""
    from experiments.studies.zhou_brent.files import read_rows, write_rows
    from experiments.studies.zhou_brent.measure import borrow_dedicated
    from experiments.studies.zhou_brent.report import compare_markdown, write_report
    from experiments.studies.zhou_brent.owners import read_owner_commands
    from experiments.studies.zhou_brent.spec import load_timeshare_spec
    from experiments.studies.zhou_brent.stream_report import (compare_streams_markdown, read_stream_rows, remeter_stream,
                                                     write_stream_report)

    with user_errors():
        if dedicated_from is not None:
            source = read_rows(dedicated_from)
            for d in run_dirs:
                rows = read_rows(d)
                if d.resolve() != dedicated_from.resolve() and all(math.isnan(j.t_d1_s) for j in rows.jobs):
                    write_rows(d, borrow_dedicated(rows, source, dedicated_from.name))
        if meter_from is not None:
            if spec_file is None:
                raise ValueError("--meter-from: give the runs' spec with --spec")
            spec = load_timeshare_spec(spec_file)
            for d in run_dirs:
                remeter_stream(d, spec, meter_from)
        written = [p for d in run_dirs
                   for p in (write_stream_report(d) if (d / "stream.csv").is_file() else write_report(d))]
        if compare is not None:
            streams = [(d / "stream.csv").is_file() for d in run_dirs]
            if any(streams) and not all(streams):
                raise ValueError("run_dirs: compare stream runs (replan) with stream runs only, "
                                 f"not with {run_dirs[streams.index(False)]}")
            compare.write_text(
                compare_streams_markdown([(d.name, read_stream_rows(d), read_owner_commands(d)) for d in run_dirs])
                if all(streams) else compare_markdown([(d.name, read_rows(d), read_owner_commands(d)) for d in run_dirs]))
            written.append(compare)
    typer.echo(f"wrote {', '.join(str(p) for p in written)}")


def _backend(cluster: str | None, workstations: tuple[str, ...], drift_ppm: dict[str, float]):
    """The cluster's workstations (they must hold every name the spec gives) or this host;
    `drift_ppm` runs managers' clocks off."""
    if cluster is None:
        from experiments.studies.zhou_brent.host import HostBackend
        return HostBackend(drift_ppm=drift_ppm)
    from experiments.studies.zhou_brent.cluster import ClusterBackend
    from testbed.cluster import Cluster

    c = Cluster.attach(cluster)
    unknown = [w for w in workstations if w not in c.workstations]
    if unknown:
        raise ValueError(f"workstations: {unknown[0]} is not in cluster {c.name} (it has {', '.join(c.workstations)})")
    return ClusterBackend(c, drift_ppm=drift_ppm)


def _os_alone_fits(replan: bool, policy: str | None, drift: bool) -> None:
    """`--resync os` starts no managers: refuse, in one line, what only managers could do."""
    if replan:
        raise ValueError("resync: os starts no managers, and a stream run (replan) needs them to admit its jobs")
    if policy is not None:
        raise ValueError("policy: a local policy is kept by the managers, and --resync os starts none")
    if drift:
        raise ValueError("drift: it runs the managers' clocks off, and --resync os starts none")


def _choice(enum, value: str | None, option: str):
    """An enum member from its value, or one line listing the values."""
    if value is None:
        return None
    try:
        return enum(value.lower())
    except ValueError:
        fail(f"{option}: unknown {value!r} (known: {', '.join(m.value for m in enum)})")


timeshare_app.command("table")(table_command)
timeshare_app.command("simulate")(simulate_command)
timeshare_app.command("run")(run_command)
timeshare_app.command("report")(report_command)


def register(app: typer.Typer) -> None:
    """Add this package's commands to the `nowlab` app (also `nowlab study zhou-brent`)."""
    app.add_typer(timeshare_app, name="timeshare")
