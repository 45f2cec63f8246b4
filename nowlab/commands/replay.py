"""`nowlab replay TRACE.swf --policy EASY`: an archive trace simulated as it was (rigid jobs)."""
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
) -> None:
    """Simulate TRACE as it ran: each job rigid, at its submit time, size, run time and requested time."""
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


def register(app: typer.Typer) -> None:
    """Add this module's command to the `nowlab` app."""
    app.command("replay")(replay_command)
