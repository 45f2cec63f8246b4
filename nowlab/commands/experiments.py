"""Experiment commands: run, report, summary and demo (live experiments from a config).

The papers' own commands are `nowlab study <paper> <verb>` (nowlab/commands/studies.py)."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from nowlab.errors import fail

DEMO_CONFIG = Path(__file__).resolve().parents[2] / "experiments" / "configs" / "demo.toml"

def _failed_steps(results: Path, failing: list[str]) -> None:
    """One line on the failed post-processing steps (each already stored and printed); exit 1 when the
    report is among them (the command's output is missing), else go on: every job is kept."""
    if not failing:
        return
    report = [f for f in failing if f.startswith("report of the run")]
    report_failed = bool(report)
    typer.echo(f"{'error' if report_failed else 'warning'}: {len(failing)} post-processing step(s) failed, "
               f"every job is kept ({(report or failing)[0]}); redo with `nowlab report {results}`", err=True)
    if report_failed:
        raise typer.Exit(1)


def _finished(path: Path, failing: list[str]) -> None:
    typer.echo(f"results: {path}")
    _failed_steps(path, failing)


def run(
    target: Annotated[Path | None, typer.Argument(help="Experiment config (TOML), or with --resume a results file.")]
    = None,
    out: Annotated[Path | None, typer.Option("--out", help="Results database (default results/NAME.sqlite).")] = None,
    resume: Annotated[bool, typer.Option("--resume", help="Carry on an interrupted run; finished jobs are kept.")]
    = False,
    report: Annotated[bool, typer.Option("--report/--no-report", help="Predict and write the report at the end.")]
    = True,
    reprofile: Annotated[bool, typer.Option("--reprofile", help="Profile the classes again, ignoring the cache.")]
    = False,
    estimate: Annotated[bool, typer.Option("--estimate", help="Print how long the run would take; start nothing.")]
    = False,
    speed: Annotated[float | None, typer.Option(
        "--speed", help="With --estimate: workstation speed in reference cores, for a floor from reference work.")]
    = None,
    backend: Annotated[str | None, typer.Option(
        "--backend", help="Where the cluster runs: docker (this host), ssh or swarm (the spec's hosts). "
                          "Default docker; a resumed run keeps its own.")] = None,
    speed_scale: Annotated[str | None, typer.Option(
        "--speed-scale", help="Run the cluster uniformly slower, for a host too slow for its speeds: every "
                              "speed times this number in (0, 1], or 'fit' for the largest this host's cores "
                              "hold now. Stored with the run and named in its report.")] = None,
    until_resolved: Annotated[bool, typer.Option(
        "--until-resolved", help="Add replications to the stored run (or start one), a whole round of every "
                                 "policy and rate at a time, until every claim of the config holds or fails at "
                                 "95%, or --budget or --max-replications stops it; resumable.")] = False,
    budget: Annotated[str | None, typer.Option(
        "--budget", help="With --until-resolved: wall-clock time for this sitting, e.g. 3h, 90m, 45s; no round "
                         "starts that the slowest round so far says would pass it.")] = None,
    max_replications: Annotated[int, typer.Option(
        "--max-replications", help="With --until-resolved: stop at this many replications.")] = 30,
) -> None:
    """Run an experiment live: every (policy, rate, replication) cell, each job stored as it finishes.

    A failed post-processing step (artifacts, availability, predictions, report) does not stop the
    run: it is stored and printed, and `nowlab report` redoes it (exit 1 if the report failed)."""
    from experiments.live import failed_steps, run_experiment

    scale = speed_scale if speed_scale in (None, "fit") else _number(speed_scale, "--speed-scale")
    until = _until(until_resolved, budget, max_replications, estimate)
    if estimate or speed is not None:
        _estimate(target, resume, speed, scale)
        return
    if target is None and not (resume and out):
        fail("give an experiment config, or --resume with the results file")
    try:
        path = run_experiment(target, out=out, resume=resume, report=report, reprofile=reprofile, backend=backend,
                              speed_scale=scale, until=until)
    except KeyboardInterrupt:
        again = "the same `nowlab run --until-resolved ...`" if until else "`nowlab run --resume ...`"
        typer.echo(f"interrupted: every finished job is stored; continue with {again}", err=True)
        raise typer.Exit(130) from None
    except ValueError as exc:  # ConfigError, StoreError, SpecError: one line each
        fail(str(exc))
    except RuntimeError as exc:  # RunStopped and the like
        fail(str(exc))
    except Exception as exc:  # anything else (a bug): the cell is marked interrupted; one line, resumable
        fail(f"{_one_line(exc)}; every finished job is stored; continue with `nowlab run --resume ...`")
    _finished(path, failed_steps(path))


def _until(on: bool, budget: str | None, max_replications: int, estimate: bool):
    """--until-resolved's limits (None without it); each bad option one line naming it."""
    from experiments import until_resolved as ur

    if not on:
        if budget is not None:
            fail("--budget: only with --until-resolved")
        return None
    if estimate:
        fail("--until-resolved: not with --estimate (it prints its own power analysis before it starts)")
    if budget is None:
        fail("--budget: --until-resolved needs a wall-clock budget, e.g. --budget 3h")
    try:
        return ur.Limits(ur.parse_budget(budget), max_replications=max_replications)
    except ValueError as exc:
        fail(str(exc))


def _estimate(target: Path | None, resume: bool, speed: float | None, scale: float | str | None = None) -> None:
    """`nowlab run CONFIG --estimate`: the plan's breakdown as a table; nothing starts (with
    `--speed-scale fit` the cores are read, as the run would)."""
    from rich.console import Console
    from rich.table import Table

    from experiments import config as cfg
    from experiments.estimate import breakdown, plan_for
    from experiments.live import with_speed_scale
    from testbed.backends import DEFAULT

    if resume or target is None or target.suffix != ".toml":
        fail("--estimate: takes an experiment config (TOML), not a results file or --resume")
    if speed is not None and not 0 < speed < float("inf"):
        fail(f"--speed: must be > 0 reference cores, got {speed:g}")
    try:
        plan = plan_for(with_speed_scale(cfg.load(target), scale, DEFAULT), speed=speed)
    except ValueError as exc:  # ConfigError, SpecError: one line each
        fail(str(exc))
    table = Table(title=f"{target.name}: estimated {plan.total_s / 60:.1f} min ({plan.label})")
    table.add_column("step")
    table.add_column("seconds", justify="right")
    table.add_column("")
    for step in breakdown(plan):
        table.add_row(step.step, f"{step.seconds:.1f}", step.note)
    table.add_row("total", f"{plan.total_s:.1f}", f"{plan.total_s / 60:.1f} min")
    console = Console(width=120)
    console.print(table)
    console.print(f"class models: {plan.detail}")
    if plan.source == "floor":
        console.print("a floor: the work alone, no launch, coupling or resize cost; a run with cached "
                      "profiles gives the real estimate")


def report_cmd(
    results: Annotated[Path, typer.Argument(help="Results database written by `nowlab run`.")],
    out: Annotated[Path | None, typer.Option("--out", help="Report folder (default next to the results).")] = None,
    predict: Annotated[bool, typer.Option("--predict/--no-predict", help="Recompute the predictions first.")]
    = False,
) -> None:
    """Markdown report (PNG figures, CSVs): measured beside predicted, errors, the paper's claims."""
    from experiments.live import make_report

    try:
        failing = make_report(results, out=out, predict=predict)
    except ValueError as exc:
        fail(str(exc))
    _failed_steps(results, failing)


def summary_cmd(
    config: Annotated[Path, typer.Argument(help="Summary config (TOML): the figures' results stores, cross-figure claims.")],
    out: Annotated[Path, typer.Option("--out", help="Folder for summary.md and summary.csv.")] = Path("."),
) -> None:
    """One page for several figures: every claim with the paper's number, ours, the verdict, the
    prediction errors of its cells, and the claims that compare figures."""
    from experiments.studies.padhye_dowdy.summary import SummaryError, write_summary

    try:
        md, csv = write_summary(config, out)
    except (SummaryError, ValueError) as exc:
        fail(str(exc))
    typer.echo(f"summary: {md} ({csv.name})")


def demo(
    config: Annotated[Path, typer.Option("--config", help="Experiment to run as the demo.")] = DEMO_CONFIG,
) -> None:
    """The main job, short: 8 workstations (owners on some), RA, Folding and Equipartition, two classes,
    two arrival rates, measured beside predicted; ends with the report's path and its error table.
    On a host too slow for the cluster's speeds it runs them uniformly slower, and says so."""
    import time

    from experiments.live import failed_steps, run_experiment

    out = Path("results") / f"demo-{time.strftime('%Y%m%d-%H%M%S')}.sqlite"
    try:
        path = run_experiment(config, out=out, resume=False, speed_scale="fit")
    except KeyboardInterrupt:
        typer.echo(f"interrupted: continue with `nowlab run --resume --out {out}`", err=True)
        raise typer.Exit(130) from None
    except (ValueError, RuntimeError) as exc:
        fail(str(exc))
    except Exception as exc:  # anything else (a bug): the cell is marked interrupted; one line, resumable
        fail(f"{_one_line(exc)}; continue with `nowlab run --resume --out {out}`")
    _finished(path, failed_steps(path))


def _number(text: str, option: str) -> float:
    try:
        return float(text)
    except ValueError:
        fail(f"{option}: must be a number in (0, 1] or 'fit', got {text!r}")


def _one_line(exc: BaseException) -> str:
    from experiments.steps import one_line
    return one_line(exc)


def register(app: typer.Typer) -> None:
    """Add this package's commands to the `nowlab` app."""
    app.command("run")(run)
    app.command("report")(report_cmd)
    app.command("summary")(summary_cmd)
    app.command("demo")(demo)
