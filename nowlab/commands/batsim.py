"""`nowlab batsim`: play Batsim's side of the Batsim protocol, simulated, for a scheduler written for Batsim.

Parses the options, builds the platform, and calls `experiments.batsim.run.serve`; prints what
the run did and where the files are. A scheduler that misbehaves is one error line, after the
outputs (everything so far) are written.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from nowlab.errors import fail


def batsim_command(
    workload: Path = typer.Argument(..., help="A Batsim workload (JSON: jobs and profiles) or an SWF trace (.swf)."),
    socket: str = typer.Option("tcp://127.0.0.1:28000", "--socket", "-s",
                               help="The scheduler's ZeroMQ endpoint (pybatsim binds it: pybatsim SCHED -s tcp://*:PORT)."),
    out: Path = typer.Option(Path("."), "--out", help="Folder for PREFIX_jobs.csv and PREFIX_schedule.csv."),
    prefix: str = typer.Option("out", "--prefix", help="Output file prefix, as Batsim's --export."),
    timeout_s: float = typer.Option(60.0, "--timeout-s", help="Give up when the scheduler does not reply within this many seconds."),
    resources: Optional[int] = typer.Option(None, "--resources", help="Workstations ws0..wsN-1 at 1 reference core and 100 Mbit/s (default: the workload's nb_res)."),
    spec: Optional[Path] = typer.Option(None, "--spec", help="Or take the workstations (names, speeds, egress) from a cluster spec (TOML)."),
    messages: bool = typer.Option(False, "--messages", help="Also write every message and reply to PREFIX_messages.jsonl."),
) -> None:
    """Serve a Batsim scheduler: submit the workload's jobs, run its decisions in simulated time, write Batsim's outputs."""
    from rich.console import Console
    from rich.table import Table

    from experiments.batsim.platform import from_spec, uniform
    from experiments.batsim.run import read_input, serve
    from testbed.progress import progress_bar

    if resources is not None and spec is not None:
        fail("give --resources N or --spec FILE, not both")
    if not timeout_s > 0:
        fail(f"--timeout-s: must be > 0, got {timeout_s}")
    try:
        w = read_input(workload)
        platform = from_spec(spec) if spec is not None else uniform(resources or w.nb_res)
        with progress_bar() as update:
            outcome = serve(w, platform, endpoint=socket, timeout_s=timeout_s, out_dir=out, prefix=prefix,
                            keep_messages=messages, progress=lambda done, total: update("jobs", done, total))
    except (ValueError, OSError) as exc:
        fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        return
    console = Console()
    recs, s = outcome.records, outcome.stats
    states = [r.final_state for r in recs]
    table = Table(title=f"{w.name}: {len(w.jobs)} jobs on {platform.size} workstations, "
                        f"{'stopped' if outcome.error else 'ended'} at t={s.end_s:g} s")
    table.add_column("")
    table.add_column("", justify="right")
    for label, value in (("completed successfully", states.count("COMPLETED_SUCCESSFULLY")),
                         ("failed / walltime / killed", sum(x in ("COMPLETED_FAILED", "COMPLETED_WALLTIME_REACHED",
                                                                  "COMPLETED_KILLED") for x in states)),
                         ("rejected", states.count("REJECTED")),
                         ("left waiting / running", sum(x in ("SUBMITTED", "RUNNING") for x in states)),
                         ("messages (events sent, decisions)", f"{s.messages} ({s.events_sent}, {s.decisions})"),
                         ("scheduling time (wall)", f"{s.scheduling_time_s:.3f} s"),
                         ("simulation time (wall)", f"{s.simulation_time_s:.3f} s")):
        table.add_row(label, str(value))
    console.print(table)
    written = [outcome.jobs_csv, outcome.schedule_csv] + ([outcome.messages_jsonl] if outcome.messages_jsonl else [])
    console.print("wrote " + ", ".join(map(str, written)), soft_wrap=True)  # a path a reader copies: never wrapped
    if outcome.error:
        fail(outcome.error)


def register(app: typer.Typer) -> None:
    """Add `nowlab batsim` to the `nowlab` app."""
    app.command("batsim")(batsim_command)
