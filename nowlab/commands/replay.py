"""`nowlab replay TRACE.swf --policy EASY`: an archive trace simulated as it was (rigid jobs); with
`--live --cluster NAME`, a window of it run on the emulated cluster beside its simulation."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from nowlab.errors import fail


def replay_command(
    trace: Path = typer.Argument(..., help="A Parallel Workloads Archive trace (SWF)."),
    policy: str = typer.Option(..., "--policy", "-p", help="Policy name: FCFS, EASY or EASY-CONSERVATIVE (any registered one; case-insensitive)."),
    max_procs: Optional[int] = typer.Option(None, "--max-procs", "-P", help="Processors of the machine (default: the header's MaxProcs, else MaxNodes); wider jobs are skipped and counted."),
    out: Optional[Path] = typer.Option(None, "--out", help="Folder for jobs.csv (Batsim's jobs columns, evalys reads it) and summary.json."),
    skip_bad: bool = typer.Option(False, "--skip-bad", help="Leave out malformed lines (listed in the counts) instead of stopping at the first."),
    live: bool = typer.Option(False, "--live", help="Run a window of the trace on --cluster (rigid delay or work jobs on its resident pool), beside its simulation."),
    cluster: Optional[str] = typer.Option(None, "--cluster", help="With --live: the cluster (nowlab status lists them)."),
    scale_time: float = typer.Option(1.0, "--scale-time", help="With --live: live seconds per trace second (F): submit, run and requested times are multiplied by it."),
    first: int = typer.Option(0, "--first", help="With --live: the window starts at this kept job (0: the first)."),
    jobs: int = typer.Option(20, "--jobs", help="With --live: how many kept jobs the window holds."),
    wide: str = typer.Option("scale", "--wide", help="With --live: a job wider than P is scaled down to P (scale) or skipped (skip); counted either way."),
    program: str = typer.Option("delay", "--program", help="With --live: each job sleeps its run time (delay) or computes it on every rank in reference-seconds (work)."),
) -> None:
    """Simulate TRACE as it ran: each job rigid, at its submit time, size, run time and requested time.

    With --live, --max-procs is P, the cluster's first P workstations (default: all of them)."""
    if live:
        _replay_live(trace, policy, cluster, max_procs, out, skip_bad, scale_time, first, jobs, wide, program)
        return
    for name, given in (("--cluster", cluster is not None), ("--scale-time", scale_time != 1.0), ("--first", first != 0),
                        ("--jobs", jobs != 20), ("--wide", wide != "scale"), ("--program", program != "delay")):
        if given:
            fail(f"{name}: only with --live")
    import gc

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    from experiments import trace_replay
    from experiments.traces.swf_rigid import read_rigid
    from scheduler.registry import get_policy

    console = Console(stderr=True)
    gc.freeze()  # what exists now and the result live to the end: keep the cyclic GC off them (as simulate does)
    try:
        try:
            chosen = get_policy(policy)
            with console.status(f"reading {trace}"):
                read = read_rigid(trace, on_bad="skip" if skip_bad else "raise")
            P = trace_replay.machine_size(read, max_procs)
            with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                          console=console, transient=True) as bar:
                task = bar.add_task(f"{chosen.name}: jobs submitted", total=len(read.jobs))
                done = trace_replay.replay(read, chosen, P,
                                           progress=lambda n, total: bar.update(task, completed=n, total=total))
        except OSError as exc:
            fail(f"{trace}: {exc.strerror}")
        except ValueError as exc:
            fail(str(exc).splitlines()[0])
        paths = []
        if out is not None:
            try:
                paths = trace_replay.write(done, out)
            except OSError as exc:
                fail(f"cannot write {exc.filename}: {exc.strerror}")
    finally:
        gc.unfreeze()
    table = Table(title=f"{done.policy} on P={done.P}: {trace.name}")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for label, value in done.metrics.rows():
        table.add_row(label, value)
    counts = Table(title="what the trace held")
    counts.add_column("lines")
    counts.add_column("count", justify="right")
    for label, value in (*done.summary.as_dict().items(), ("skipped: wider than the machine", done.skipped_wide)):
        counts.add_row(label, str(value))
    shown = Console()
    shown.print(table)
    shown.print(counts)
    if paths:
        shown.print("wrote " + ", ".join(str(p) for p in paths), soft_wrap=True)  # a path a reader copies: never wrapped


def _replay_live(trace: Path, policy: str, cluster: str | None, max_procs: int | None, out: Path | None,
                 skip_bad: bool, scale_time: float, first: int, jobs: int, wide: str, program: str) -> None:
    """--live: the window on the cluster, measured beside simulated (experiments/trace_replay_live.py)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    from experiments import trace_replay_live
    from experiments.traces.swf_rigid import read_rigid
    from scheduler.registry import get_policy
    from testbed.cluster import Cluster

    if cluster is None:
        fail("--cluster: --live runs on a cluster; name one (nowlab status lists them)")
    console = Console(stderr=True)
    try:
        name = get_policy(policy).name
        here = Cluster.attach(cluster)
        spec = trace_replay_live.LiveWindow(first, jobs, scale_time, max_procs or len(here.workstations),
                                            wide, program)  # type: ignore[arg-type]
        with console.status(f"reading {trace}"):
            read = read_rigid(trace, on_bad="skip" if skip_bad else "raise")
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=console, transient=True) as bar:
            task = bar.add_task(f"{name} live on {cluster}: jobs finished", total=jobs)
            done = trace_replay_live.replay_live(
                read, name, spec, here.job_launcher(), here.workstations, here.controller_address,
                allowed_networks=[here.control_network],
                progress=lambda what, n, total: bar.update(task, completed=n, total=total, description=what))
    except OSError as exc:
        fail(f"{trace}: {exc.strerror}" if exc.filename == str(trace) else str(exc).splitlines()[0])
    except (ValueError, RuntimeError, LookupError) as exc:
        fail(str(exc).splitlines()[0])
    paths = []
    if out is not None:
        try:
            paths = trace_replay_live.write(done, out)
        except OSError as exc:
            fail(f"cannot write {exc.filename}: {exc.strerror}")
    table = Table(title=f"{done.policy} live on {cluster} (P={spec.P}, time x {scale_time:g}): {trace.name}")
    for col in ("metric", "measured", "simulated"):
        table.add_column(col, justify="left" if col == "metric" else "right")
    for row in done.rows():
        table.add_row(*row)
    table.add_row("failed jobs", str(len(done.live.failed)), "0")
    table.add_row("median launch (pool)", f"{done.launch_median_s * 1e3:.1f} ms", "-")
    table.add_row("audit problems", str(len(done.problems)), "-")
    counts = Table(title="what the window held")
    counts.add_column("jobs")
    counts.add_column("count", justify="right")
    for label, value in (("kept by the parser", done.summary.kept), ("in the window", len(done.live.jobs) + done.skipped_wide),
                         ("wider than P, scaled down to P", done.scaled_down),
                         ("wider than P, skipped", done.skipped_wide), ("run", len(done.live.jobs))):
        counts.add_row(label, str(value))
    shown = Console()
    shown.print(table)
    shown.print(counts)
    for problem in done.problems[:10]:
        shown.print(f"audit: {problem}", soft_wrap=True, markup=False)
    if paths:
        shown.print("wrote " + ", ".join(str(p) for p in paths), soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add this module's command to the `nowlab` app."""
    app.command("replay")(replay_command)
