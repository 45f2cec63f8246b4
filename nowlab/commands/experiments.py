"""Experiment commands: run, report, demo and study (live experiments and simulated studies)."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from nowlab.errors import fail

DEMO_CONFIG = Path(__file__).resolve().parents[2] / "experiments" / "configs" / "demo.toml"

study_app = typer.Typer(no_args_is_help=True, add_completion=False,
                        help="Reproduce published scheduling studies on the simulator.")


@study_app.command("anastasiadis")
def anastasiadis(
    quick: Annotated[bool, typer.Option("--quick", help="Same outputs with ~7x fewer jobs (under 2 minutes).")] = False,
    out: Annotated[Path, typer.Option("--out", help="Directory for report.md, CSVs, PNGs.")] = Path(
        "results/anastasiadis"),
    workers: Annotated[int, typer.Option("--workers", help="Worker processes for replications.")] = 2,
    seed: Annotated[int, typer.Option("--seed", help="Seed of every job stream.")] = 1996,
    max_replications: Annotated[int | None, typer.Option("--max-replications",
                                                         help="Cap on replications per cell.")] = None,
    jobs: Annotated[int | None, typer.Option("--jobs", help="Jobs per replication, a tenth of them the warm-up "
                                             "(a smoke run's size; the paper's is 20,000).")] = None,
    dif_variants: Annotated[str | None, typer.Option(
        "--dif-variants", help="Other readings of DIF to run beside the default, comma-separated "
        "(all-free, share; 'none' for none). Default: all of them.")] = None,
) -> None:
    """Anastasiadis & Sevcik (1996): 4 workloads x 5 loads x 14 policies (+ DIF variants), report and claims."""
    # Imported here so `nowlab --help` does not pay for numpy/scipy/matplotlib.
    from experiments.studies.anastasiadis_sevcik.report import print_claims, write_outputs
    from experiments.studies.anastasiadis_sevcik.spec import SpecError, full_spec, quick_spec
    from experiments.studies.anastasiadis_sevcik.study import run_study

    overrides: dict[str, object] = {"workers": workers, "seed": seed}
    if max_replications is not None:
        overrides["max_replications"] = max_replications
    if jobs is not None:
        overrides.update(jobs_per_replication=jobs, warmup_jobs=jobs // 10)
    if dif_variants is not None:
        overrides["dif_variants"] = tuple(v.strip() for v in dif_variants.split(",") if v.strip() not in ("", "none"))
    try:
        spec = (quick_spec if quick else full_spec)(**overrides)
    except SpecError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    result = run_study(spec)
    outputs = write_outputs(result, out)
    print_claims(outputs.claims)
    typer.echo(f"wall time {result.wall_s:.1f} s; report: {outputs.report_md}")


@study_app.command("sanjay-vadhiyar")
def sanjay_vadhiyar(
    quick: Annotated[bool, typer.Option("--quick", help="Budgets at 1/100 of the paper's, fewer clusters "
                                        "(about 2 minutes).")] = False,
    out: Annotated[Path, typer.Option("--out", help="Directory for report.md, CSVs, PNGs.")] = Path(
        "results/sanjay-vadhiyar"),
) -> None:
    """Sanjay & Vadhiyar (2009): SA, GA, DP and Box Elimination on 32-1,024 processors (Figs. 8-12, Table I)."""
    from experiments.studies.sanjay_vadhiyar.report import print_claims, write_outputs
    from experiments.studies.sanjay_vadhiyar.spec import full_spec, quick_spec
    from experiments.studies.sanjay_vadhiyar.study import run_study

    spec = quick_spec() if quick else full_spec()
    typer.echo(f"{spec.name} run: at most {spec.upper_bound_s() / 60:.0f} min of search")
    result = run_study(spec)
    outputs = write_outputs(result, out)
    print_claims(outputs.claims)
    typer.echo(f"wall time {result.wall_s:.1f} s; report: {outputs.report_md}")




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
) -> None:
    """Run an experiment live: every (policy, rate, replication) cell, each job stored as it finishes.

    A failed post-processing step (artifacts, availability, predictions, report) does not stop the
    run: it is stored and printed, and `nowlab report` redoes it (exit 1 if the report failed)."""
    from experiments.live import failed_steps, run_experiment

    scale = speed_scale if speed_scale in (None, "fit") else _number(speed_scale, "--speed-scale")
    if estimate or speed is not None:
        _estimate(target, resume, speed, scale)
        return
    if target is None and not (resume and out):
        fail("give an experiment config, or --resume with the results file")
    try:
        path = run_experiment(target, out=out, resume=resume, report=report, reprofile=reprofile, backend=backend,
                              speed_scale=scale)
    except KeyboardInterrupt:
        typer.echo("interrupted: every finished job is stored; continue with `nowlab run --resume ...`", err=True)
        raise typer.Exit(130) from None
    except ValueError as exc:  # ConfigError, StoreError, SpecError: one line each
        fail(str(exc))
    except RuntimeError as exc:  # RunStopped and the like
        fail(str(exc))
    except Exception as exc:  # anything else (a bug): the cell is marked interrupted; one line, resumable
        fail(f"{_one_line(exc)}; every finished job is stored; continue with `nowlab run --resume ...`")
    _finished(path, failed_steps(path))


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
    app.add_typer(study_app, name="study")
    app.command("run")(run)
    app.command("report")(report_cmd)
    app.command("summary")(summary_cmd)
    app.command("demo")(demo)
