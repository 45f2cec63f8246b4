"""`nowlab batsim`: play Batsim's side of the Batsim protocol for a scheduler written for Batsim,
simulated, or live on a cluster (`--live --cluster NAME`).

Parses the options, builds the platform, and calls `experiments.batsim.run.serve`; prints what
the run did and where the files are; live, each job's measured times beside the simulated ones
(and, with `--simulated-socket`, beside a simulated run of the same workload). A scheduler that
misbehaves is one error line, after the outputs (everything so far) are written and, live, the
cluster's jobs stopped.
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
    live: bool = typer.Option(False, "--live", help="Run the jobs for real on --cluster, on the wall clock. pybatsim gives up "
                              "when no message comes within 2 s (its -t, in ms), and live messages can be seconds apart: "
                              "start it with a longer one, e.g. pybatsim easyBackfill -s tcp://*:28000 -t 600000."),
    cluster: Optional[str] = typer.Option(None, "--cluster", help="Live: the running cluster (nowlab up ...; "
                                          "--backend local for this host's Open MPI) whose workstations are the resources."),
    simulated_socket: Optional[str] = typer.Option(None, "--simulated-socket", help="Live: a second instance of the "
                                                   "scheduler, served the same workload simulated first, printed beside the live run."),
) -> None:
    """Serve a Batsim scheduler: submit the workload's jobs, carry out its decisions (simulated, or live on a cluster), write Batsim's outputs."""
    from rich.console import Console
    from rich.table import Table

    from experiments.batsim.platform import from_spec, uniform
    from experiments.batsim.run import read_input, serve
    from testbed.progress import progress_bar

    if resources is not None and spec is not None:
        fail("give --resources N or --spec FILE, not both")
    if not timeout_s > 0:
        fail(f"--timeout-s: must be > 0, got {timeout_s}")
    if live != (cluster is not None):
        fail("--live needs --cluster NAME (and --cluster is for --live)")
    if simulated_socket is not None and not live:
        fail("--simulated-socket: only beside a --live run")
    if live and (resources is not None or spec is not None):
        fail("--live: the resources are the cluster's workstations; give neither --resources nor --spec")
    simulated = None
    try:
        w = read_input(workload)
        if live:
            from experiments.batsim.platform import from_cluster_spec
            from testbed.cluster import Cluster

            handle = Cluster.attach(cluster)
            platform = from_cluster_spec(handle.state.cluster_spec, capped=handle.backend.capabilities.cpu_caps)
            if simulated_socket is not None:
                simulated = serve(w, platform, endpoint=simulated_socket, timeout_s=timeout_s, out_dir=out,
                                  prefix=f"{prefix}_simulated")
            launcher = handle.job_launcher()
        else:
            platform = from_spec(spec) if spec is not None else uniform(resources or w.nb_res)
            launcher = None
        with progress_bar() as update:
            outcome = serve(w, platform, endpoint=socket, timeout_s=timeout_s, out_dir=out, prefix=prefix,
                            keep_messages=messages, progress=lambda done, total: update("jobs", done, total),
                            launcher=launcher)
    except (ValueError, OSError, RuntimeError) as exc:
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
    if outcome.simulated_run_s is not None:
        _print_beside(console, outcome, simulated)
    written = [outcome.jobs_csv, outcome.schedule_csv] + ([outcome.messages_jsonl] if outcome.messages_jsonl else [])
    if simulated is not None:
        written += [simulated.jobs_csv, simulated.schedule_csv]
    console.print("wrote " + ", ".join(map(str, written)), soft_wrap=True)  # a path a reader copies: never wrapped
    if simulated is not None and simulated.error:
        console.print(f"the simulated run stopped: {simulated.error}", soft_wrap=True)
    if outcome.error:
        fail(outcome.error)


def _print_beside(console, outcome, simulated) -> None:  # noqa: ANN001 - rich Console, run.Outcome
    """Each job measured (live) beside the model's run time on its allocation and the simulated run."""
    from rich.table import Table

    from experiments.batsim.report import COLUMNS, beside, makespans, table_rows

    rows = beside(outcome.records, outcome.simulated_run_s, simulated.records if simulated else None)
    measured, sim = makespans(rows)
    table = Table(title=f"measured beside simulated: makespan {measured:.3f} s live"
                        + (f", {sim:.3f} s simulated" if sim is not None else ""))
    for c in COLUMNS:
        table.add_column(c, justify="left" if c in ("job", "state", "alloc", "sim alloc") else "right")
    for r in table_rows(rows):
        table.add_row(*r)
    console.print(table)


def register(app: typer.Typer) -> None:
    """Add `nowlab batsim` to the `nowlab` app."""
    app.command("batsim")(batsim_command)
