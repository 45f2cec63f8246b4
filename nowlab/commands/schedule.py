"""Scheduling commands: `nowlab simulate` (the engine) and `nowlab execute` (the live executor)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from nowlab.errors import fail




def simulate_command(
    jobs_csv: Path = typer.Argument(..., help="Jobs CSV: id, arrival and W, alpha, beta, pmax, phases (or t1)."),
    policy: str = typer.Option(..., "--policy", "-p", help=(
        "Policy name, e.g. AEP(2) (case-insensitive), FILE.py:CLASS, package.module:CLASS or a name an installed "
        "package registers (nowlab.policies entry point); an unknown name lists the known ones.")),
    processors: int = typer.Option(..., "--processors", "-P", help="Number of workstations P."),
    timeline_out: Path = typer.Option(Path("timeline.csv"), "--timeline", help="Timeline CSV to write."),
    jobs_out: Path = typer.Option(Path("jobs_out.csv"), "--jobs-out", help="Per-job CSV (Batsim columns) to write."),
) -> None:
    """Replay a jobs CSV through a scheduling policy on P processors."""
    import gc

    from rich.console import Console
    from rich.table import Table

    if processors < 1:
        fail(f"P must be >= 1, got {processors}")
    # What exists now (modules) and the result live until the process ends: freezing them keeps the
    # cyclic GC from walking them again, a million objects for 20,000 jobs (0.3-0.5 s of collections
    # while writing, measured). Refcounting still frees them; simulate() itself runs with the GC off.
    gc.freeze()
    try:
        result = _simulate_and_write(jobs_csv, policy, processors, timeline_out, jobs_out)
    finally:
        gc.unfreeze()  # run in-process (tests), the caller's objects are collectable again
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


def _simulate_and_write(jobs_csv: Path, policy: str, processors: int, timeline_out: Path, jobs_out: Path):
    """Read, simulate and write, with what exists frozen out of the cyclic GC (simulate_command)."""
    import gc

    from experiments.traces.csv_out import write_jobs, write_timeline
    from scheduler.engine import simulate
    from experiments.traces.jobs_csv import read_jobs
    from scheduler.state_machine import PolicyError
    from scheduler.user_policies import rule_broken

    chosen = _policy(policy)
    try:
        jobs = read_jobs(jobs_csv)
        result = simulate(jobs, chosen, processors)
    except ValueError as exc:
        fail(str(exc))
    except PolicyError as exc:  # the policy broke a rule: its bug, named with the job and the time
        fail(f"--policy {policy}: {rule_broken(exc, chosen)}", code=1)
    gc.freeze()
    try:  # the stdlib csv writer, byte for byte pandas' to_csv: this command never loads pandas
        write_timeline(result, timeline_out)
        write_jobs(result, jobs_out)
    except OSError as exc:
        fail(f"cannot write {exc.filename}: {exc.strerror}")
    return result


def _policy(name: str):
    """The policy `--policy` names (built in, FILE.py:CLASS, module:CLASS or an entry point), or one
    line naming the option."""
    from scheduler.registry import get_policy

    try:
        return get_policy(name)
    except ValueError as exc:
        fail(f"--policy {name}: {exc}")


def execute_command(
    stream_csv: Path = typer.Argument(..., help="Arrival stream CSV: class, arrival (s after the start) and optionally id."),
    classes: Path = typer.Option(..., "--classes", "-c", help="Job classes (TOML): [class.NAME] with argv and a model (W/alpha/beta, profile, t1 or pmax)."),
    policy: str = typer.Option(..., "--policy", "-p", help=(
        "Policy name, e.g. FOLDING (case-insensitive), FILE.py:CLASS, package.module:CLASS or a name an installed "
        "package registers (nowlab.policies entry point); an unknown name lists the known ones.")),
    cluster_name: Optional[str] = typer.Option(None, "--cluster", help="A running cluster (nowlab up); processor i is its i-th workstation."),
    spec_file: Optional[Path] = typer.Option(None, "--spec", help="Or a cluster spec (TOML) to bring up for this run and take down after."),
    local: Optional[int] = typer.Option(None, "--local", help="Or P logical workstations on this host's own Open MPI (development)."),
    timeline_out: Path = typer.Option(Path("timeline.csv"), "--timeline", help="Timeline CSV to write (the engine's format, measured times)."),
    jobs_out: Path = typer.Option(Path("jobs_out.csv"), "--jobs-out", help="Per-job CSV (Batsim columns, plus status and error)."),
    extras: Optional[Path] = typer.Option(None, "--extras", help="Folder for decisions.csv, resizes.csv and runs.csv."),
    run_timeout: float = typer.Option(3600.0, "--timeout", help="Give up (and stop every job) after this many seconds."),
) -> None:
    """Run an arrival stream on a live cluster under a scheduling policy, with measured times."""
    import contextlib

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from scheduler.live import LiveExecutor
    from experiments.traces.live_inputs import load_classes, read_stream
    from experiments.traces.live_results import write_live_result
    from scheduler.live.audit import audit
    from scheduler.live.executor import check_arrivals
    from scheduler.state_machine import PolicyError
    from scheduler.user_policies import rule_broken

    if sum(x is not None for x in (cluster_name, spec_file, local)) != 1:
        fail("give exactly one of --cluster NAME, --spec FILE or --local P")
    if local is not None and local < 1:
        fail(f"--local needs P >= 1, got {local}")
    chosen = _policy(policy)
    try:
        arrivals = read_stream(stream_csv, load_classes(classes))
        check_arrivals(arrivals, chosen)
    except ValueError as exc:
        fail(str(exc))
        return
    console = Console(stderr=True)
    with contextlib.ExitStack() as stack:
        try:
            launcher, hosts, controller, network = _workstations(stack, console, cluster_name, spec_file, local)
            bar = stack.enter_context(Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                               TimeElapsedColumn(), console=console))
            task = bar.add_task(f"{chosen.name} on {len(hosts)} workstations", total=len(arrivals))

            def progress(what: str, done: int, total: int) -> None:
                bar.update(task, completed=done, total=total, description=f"{chosen.name}: {what}")

            executor = LiveExecutor(arrivals, chosen, launcher, hosts, controller, progress=progress,
                                    run_timeout_s=run_timeout, allowed_networks=[network])
            result = executor.run()
        except PolicyError as exc:  # the policy broke a rule: its bug, named with the job and the time
            fail(f"--policy {policy}: {rule_broken(exc, chosen)}", code=1)
            return
        except (ValueError, LookupError, TimeoutError, RuntimeError, OSError) as exc:
            fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
            return
    paths = write_live_result(result, timeline_out, jobs_out, extras)
    out = Console()
    out.print(_live_summary(result))
    if result.control_refused:
        out.print(f"control channel: refused {result.control_refused} connection(s) that did not hold "
                  f"this run's secret (the log names them)")
    problems = audit(result, arrivals)
    out.print("audit: " + ("ok (timeline, workstations, actions, replay)" if not problems else
                           f"{len(problems)} problem(s); first: {problems[0]}"))
    out.print("wrote " + ", ".join(str(p) for p in paths))
    if result.failed or problems:
        raise typer.Exit(code=1)


def _workstations(stack, console, cluster_name: Optional[str], spec_file: Optional[Path], local: Optional[int]):
    """(launcher, hosts, controller address, the network jobs connect from) of --local P (this host's
    own Open MPI: the local backend), --spec FILE (both up now, down at the end) or --cluster."""
    from testbed.cluster import Cluster
    from testbed.lifecycle import cluster
    from testbed.spec import load
    if local is not None:
        from testbed.backends.local import LocalBackend, local_spec
        running = stack.enter_context(cluster(local_spec(local), backend=LocalBackend()))
    elif spec_file is not None:
        console.print(f"bringing up {spec_file} ...")
        running = stack.enter_context(cluster(load(spec_file)))
    else:
        running = Cluster.attach(cluster_name)
    # jobs start on the cluster's resident MPI world (local: the pool of this host's ranks)
    return running.job_launcher(), running.workstations, running.controller_address, running.control_network


def _live_summary(result):
    from rich.table import Table

    s = result.summary()
    table = Table(title=f"{result.policy} live on {result.P} workstations: {s['jobs']} jobs, {s['failed']} failed")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for label, key, unit in (("mean response", "mean_response", "s"), ("mean wait", "mean_wait", "s"),
                             ("mean partition", "mean_partition", "proc"), ("makespan", "makespan", "s"),
                             ("preemptions", "preemptions", ""), ("resizes (set changed)", "resizes_changed", ""),
                             ("reconfiguration median", "reconfig_median_s", "s"),
                             ("reconfiguration max", "reconfig_max_s", "s"),
                             ("policy calls", "decisions", ""), ("decide median", "decide_median_us", "µs"),
                             ("decide max", "decide_max_us", "µs")):
        table.add_row(label, f"{s[key]:.4g} {unit}".strip())
    return table


def register(app: typer.Typer) -> None:
    """Add this package's commands to the `nowlab` app."""
    app.command("simulate")(simulate_command)
    app.command("execute")(execute_command)
