"""CLI commands of the scheduler package (`nowlab simulate`)."""
from __future__ import annotations

from pathlib import Path

import typer


def _fail(message: str) -> None:
    """One line on stderr and exit code 2: bad input is not a crash."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code=2)


def simulate_command(
    jobs_csv: Path = typer.Argument(..., help="Jobs CSV: id, arrival and W, alpha, beta, pmax, phases (or t1)."),
    policy: str = typer.Option(..., "--policy", "-p", help="Policy name, e.g. AEP(2) (case-insensitive); an unknown name lists the known ones."),
    processors: int = typer.Option(..., "--processors", "-P", help="Number of workstations P."),
    timeline_out: Path = typer.Option(Path("timeline.csv"), "--timeline", help="Timeline CSV to write."),
    jobs_out: Path = typer.Option(Path("jobs_out.csv"), "--jobs-out", help="Per-job CSV (Batsim columns) to write."),
) -> None:
    """Replay a jobs CSV through a scheduling policy on P processors."""
    from rich.console import Console
    from rich.table import Table

    from scheduler.engine import simulate
    from scheduler.jobs_csv import read_jobs
    from scheduler.registry import get_policy

    if processors < 1:
        _fail(f"P must be >= 1, got {processors}")
    try:
        chosen = get_policy(policy)
        jobs = read_jobs(jobs_csv)
        result = simulate(jobs, chosen, processors)
    except ValueError as exc:
        _fail(str(exc))
        return
    result.timeline_dataframe().to_csv(timeline_out, index=False)
    result.to_dataframe().to_csv(jobs_out, index=False)
    s = result.summary()
    table = Table(title=f"{result.policy} on P={processors}: {s['jobs']} jobs")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for label, key, unit in (("mean response", "mean_response", "s"), ("mean wait", "mean_wait", "s"),
                             ("mean execution", "mean_execution", "s"),
                             ("mean partition", "mean_partition", "proc"),
                             ("preemptions / job", "preemptions_per_job", ""), ("makespan", "makespan", "s")):
        table.add_row(label, f"{s[key]:.4g} {unit}".strip())
    console = Console()
    console.print(table)
    console.print(f"wrote {timeline_out} and {jobs_out}")


def register(app: typer.Typer) -> None:
    """Add this package's commands to the `nowlab` app."""
    app.command("simulate")(simulate_command)
