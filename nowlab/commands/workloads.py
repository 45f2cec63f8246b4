"""Workload commands: `nowlab profile` (a workload's speedup curve and Sevcik fit)."""
from __future__ import annotations

import contextlib
import shlex
from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    app.command("profile")(profile_command)


def profile_command(
    workload: str = typer.Argument(..., help="cg or synthetic"),
    procs: str = typer.Option("1,2,4,8", help="comma-separated partition sizes"),
    reps: int = typer.Option(3, help="runs per partition size"),
    args: str = typer.Option("", "--args", help="workload arguments, e.g. '--n 500 --iterations 250'"),
    cluster: str = typer.Option(None, help="running cluster to use (default: the only one running)"),
    local: bool = typer.Option(False, help="use the host's Open MPI instead of a cluster (development)"),
    out: Path = typer.Option(Path("results/profile"), help="output directory"),
) -> None:
    """Run WORKLOAD dedicated at each partition size; write its speedup curve and Sevcik fit."""
    from rich.console import Console
    from rich.table import Table

    from testbed.cluster import Cluster
    from testbed.lifecycle import cluster as bring_up
    from workloads.host import profile as prof

    console = Console()
    spec = prof.ProfileSpec(workload, tuple(int(p) for p in procs.split(",") if p), reps, tuple(shlex.split(args)))
    with contextlib.ExitStack() as stack:
        if local:  # this host's own Open MPI: the local backend, up for the profile and down after
            from testbed.backends.local import LocalBackend, local_spec
            running = stack.enter_context(bring_up(local_spec(max(spec.procs)), backend=LocalBackend()))
        else:
            running = Cluster.attach(cluster)
        result = prof.run(running.job_launcher(), running.workstations, spec, log=console.print)
    paths = prof.write(result, out / workload)
    model = result.fit()
    table = Table(title=f"{workload}: W={model.work_s:.4g}s alpha={model.alpha_s:.4g}s beta={model.beta_s:.4g}s")
    for col in ("p", "mean time (s)", "speedup", "fit (s)", "fit error"):
        table.add_column(col, justify="right")
    means, speedups = result.mean_times(), result.speedups()
    from workloads.host.sevcik import errors
    for pt in errors(model, list(means), list(means.values())):
        table.add_row(str(pt.p), f"{pt.measured_s:.4f}", f"{speedups[pt.p]:.2f}", f"{pt.predicted_s:.4f}",
                      f"{100 * pt.relative_error:+.1f}%")
    console.print(table)
    console.print(f"wrote {', '.join(str(p) for p in paths.values())}")
