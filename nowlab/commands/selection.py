"""`nowlab select`: Sanjay & Vadhiyar's Eq. 1 (fit, show) and machine selection (hosts), and
§5.1 live (train, live, avoid).

Parses and checks the input, calls `experiments.models` (Eq. 1, its regression and files)
and `scheduler.selection` (the algorithms), and prints. fit, show and hosts need no Docker:
the availability comes from a file (the monitor's averages, as
`testbed.load.monitor.summarize` gives them). train, live and avoid drive a running cluster
through `experiments.studies.sanjay_vadhiyar.live`; every input is checked before it is attached.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from nowlab.errors import user_errors

app = typer.Typer(no_args_is_help=True, help="Choose workstations for a tightly coupled job (Sanjay & Vadhiyar).")

console = Console(stderr=True)  # the live commands' plan, progress and log lines; results go to stdout
APP_HELP = "the application the model is for (a model file of another one is refused)"


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="select")


@app.command("fit")
def fit_cmd(
    runs: Annotated[Path, typer.Argument(help="CSV: problem_size, procs, min_avail_cpu, min_avail_bw_bit_s, elapsed_s")],
    application: Annotated[str, typer.Option("--application", help=APP_HELP)],
    out: Annotated[Path, typer.Option("--out", help="where to store the model (JSON)")],
) -> None:
    """Fit Eq. 1 by the multi-phase regression, store it, print the functions and their error."""
    from experiments.models.sv_regression import fit
    from experiments.models.sv_store import read_runs, save_model

    with user_errors():
        model = fit(read_runs(runs), application)
        save_model(model, out)
    typer.echo(model.describe())
    typer.echo(f"stored: {out}")


@app.command("show")
def show_cmd(
    model_file: Annotated[Path, typer.Argument(help="a stored model (JSON)")],
    application: Annotated[str, typer.Option("--application", help=APP_HELP)],
) -> None:
    """Print a stored model's functions and training error."""
    from experiments.models.sv_store import load_model

    with user_errors():
        typer.echo(load_model(model_file, application).describe())


def _availability(path: Path):
    """{"cpu": {ws: fraction}, "bw_bit_s": {"src,dst": bit/s}} -> the monitor's Availability."""
    from testbed.load.monitor import Availability

    try:
        raw = json.loads(path.read_text())
        cpu = {str(k): float(v) for k, v in raw["cpu"].items()}
        bw = {tuple(k.split(",")): float(v) for k, v in raw["bw_bit_s"].items()}
    except FileNotFoundError:
        raise ValueError(f"--availability: {path} not found") from None
    except (KeyError, AttributeError, TypeError, ValueError) as exc:
        raise ValueError(f"--availability: {path.name} is not {{\"cpu\": {{ws: fraction}}, "
                         f"\"bw_bit_s\": {{\"src,dst\": bit/s}}}} ({type(exc).__name__}: {exc})") from None
    if any(len(k) != 2 for k in bw):
        raise ValueError(f"--availability: a bw_bit_s key is not \"src,dst\" in {path.name}")
    return Availability(cpu, bw, min(cpu.values(), default=float("nan")), min(bw.values(), default=float("nan")))


@app.command("hosts")
def hosts_cmd(
    model_file: Annotated[Path, typer.Argument(help="a stored model (JSON)")],
    application: Annotated[str, typer.Option("--application", help=APP_HELP)],
    problem_size: Annotated[float, typer.Option("--problem-size", help="N of Eq. 1")],
    availability: Annotated[Path, typer.Option("--availability", help="JSON of the monitor's averages")],
    algorithm: Annotated[str, typer.Option("--algorithm", help="SA, GA, DP, BE or BRUTE")] = "BE",
    budget_s: Annotated[float, typer.Option("--budget-s", help="seconds of search")] = 2.0,
    seed: Annotated[int, typer.Option("--seed")] = 0,
) -> None:
    """Choose the workstations with the least predicted time for the job."""
    from experiments.models.sv_model import selection_problem
    from experiments.models.sv_store import load_model
    from scheduler.selection import select_hosts

    with user_errors():
        model = load_model(model_file, application)
        avail = _availability(availability)
        problem = selection_problem(model, problem_size, avail, sorted(avail.avg_avail_cpu))
        best = select_hosts(problem, algorithm, budget_s, seed)
    state = "searched everything" if best.finished else "budget ran out"
    typer.echo(f"{best.algorithm}: {', '.join(best.workstations)}")
    typer.echo(f"predicted {best.predicted_s:.2f} s on {len(best.workstations)} workstations; "
               f"{best.evaluations} evaluations in {best.elapsed_s:.3f} s ({state})")


# ---- live, on a running cluster (§5.1) -------------------------------------------------------------

ITERATIONS_HELP = "iterations of every run (fixed, so that N alone moves Eq. 1)"
TIMING_HELP = {"settle": "seconds a load settles before it is read", "window": "seconds the monitor averages over",
               "interval": "seconds between monitor samples", "timeout": "a run still going after this is stopped"}


def _timing(settle_s: float, window_s: float, interval_s: float, run_timeout_s: float):
    from experiments.studies.sanjay_vadhiyar.live import Timing
    from experiments.studies.sanjay_vadhiyar.live_inputs import positive_s

    return Timing(positive_s("--settle-s", settle_s), positive_s("--window-s", window_s),
                  positive_s("--interval-s", interval_s), positive_s("--run-timeout-s", run_timeout_s))


@app.command("train")
def train_cmd(
    application: Annotated[str, typer.Option("--application", help="cg or stencil")],
    sizes: Annotated[str, typer.Option("--sizes", help="problem sizes N (the workload's --n), comma-separated")],
    out: Annotated[Path, typer.Option("--out", help="the runs CSV that `nowlab select fit` reads")],
    cluster: Annotated[str | None, typer.Option("--cluster", "-c", help="a running cluster")] = None,
    runs: Annotated[int, typer.Option("--runs", help="runs per size, each on its own set and load")] = 12,
    iterations: Annotated[int, typer.Option("--iterations", help=ITERATIONS_HELP)] = 100,
    unloaded_every: Annotated[int, typer.Option("--unloaded-every", help="every k-th run of a size has no load")] = 3,
    max_procs: Annotated[int | None, typer.Option("--max-procs", help="largest set drawn (default: all)")] = None,
    window: Annotated[str, typer.Option("--window", help="availability for the model: before the run or over it")] = "before",
    seed: Annotated[int, typer.Option("--seed")] = 0,
    resume: Annotated[bool, typer.Option("--resume", help="continue --out: skip the runs already in it")] = False,
    settle_s: Annotated[float, typer.Option("--settle-s", help=TIMING_HELP["settle"])] = 6.0,
    window_s: Annotated[float, typer.Option("--window-s", help=TIMING_HELP["window"])] = 8.0,
    interval_s: Annotated[float, typer.Option("--interval-s", help=TIMING_HELP["interval"])] = 2.0,
    run_timeout_s: Annotated[float, typer.Option("--run-timeout-s", help=TIMING_HELP["timeout"])] = 1800.0,
) -> None:
    """Training runs for Eq. 1 (§3, §5.1): random sets under random CPU caps and link loads.

    The plan is the seed's: --resume with the same options continues a cut run where it stopped."""
    from experiments.studies.sanjay_vadhiyar import live, live_inputs as li
    from experiments.studies.sanjay_vadhiyar.live_records import WINDOWS, finished_runs, ran
    from experiments.studies.sanjay_vadhiyar.load_draws import plan_training
    from testbed.cluster import Cluster
    from testbed.progress import progress_bar

    with user_errors():
        app_ = li.LiveApp(application, iterations)
        size_list = li.parse_sizes(sizes)
        li.at_least("--runs", runs)
        li.at_least("--unloaded-every", unloaded_every)
        if window not in WINDOWS:
            raise li.LiveInputError(f"--window: {window!r} is not one of {', '.join(WINDOWS)}")
        timing = _timing(settle_s, window_s, interval_s, run_timeout_s)
        if out.exists() and not resume:
            raise li.LiveInputError(f"--out: {out} exists; add --resume to continue it, or name another file")
        finished_runs(out, window)  # a file to resume is checked before the cluster is touched
        c = Cluster.attach(cluster)
        li.check_cluster_size("--max-procs", c.workstations, max_procs)
        plan = plan_training(c.workstations, size_list, runs, seed, c.spec.link_rate,
                             unloaded_every=unloaded_every, most_procs=max_procs)
        console.print(f"{len(plan)} training runs of {application} on {c.name} ({len(c.workstations)} workstations), "
                      f"seed {seed}; each waits {timing.settle_s + timing.window_s:g} s for its load")
        with progress_bar(console) as update:
            records = live.train(c, app_, plan, out, window=window, timing=timing, update=update, log=console.log)
    failed = sum(not ran(r.outcome) for r in records)
    typer.echo(f"{len(records) - failed} runs added to {out}" + (f"; {failed} failed (listed beside it)" if failed else ""))
    typer.echo(f"next: nowlab select fit {out} --application {application} --out MODEL.json")


@app.command("live")
def live_cmd(
    model_file: Annotated[Path, typer.Option("--model", help="the stored Eq. 1 model (JSON)")],
    application: Annotated[str, typer.Option("--application", help=APP_HELP)],
    sizes: Annotated[str, typer.Option("--sizes", help="problem sizes N, comma-separated")],
    out: Annotated[Path, typer.Option("--out", help="folder for runs.csv, fig7.csv, fig7.png, report.md")],
    cluster: Annotated[str | None, typer.Option("--cluster", "-c", help="a running cluster")] = None,
    algorithms: Annotated[str, typer.Option("--algorithms", help="comma-separated: SA, GA, DP, BE, BRUTE, SA-FIG1, GA-FIG2")] = "SA,GA,DP,BE",
    budget_s: Annotated[str, typer.Option("--budget-s", help="seconds of search, comma-separated (Fig. 7's x-axis)")] = "0.5,2",
    experiments: Annotated[int, typer.Option("--experiments", help="loads drawn (the paper averages 10)")] = 10,
    iterations: Annotated[int, typer.Option("--iterations", help=ITERATIONS_HELP)] = 100,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    settle_s: Annotated[float, typer.Option("--settle-s", help=TIMING_HELP["settle"])] = 6.0,
    window_s: Annotated[float, typer.Option("--window-s", help=TIMING_HELP["window"])] = 8.0,
    interval_s: Annotated[float, typer.Option("--interval-s", help=TIMING_HELP["interval"])] = 2.0,
    run_timeout_s: Annotated[float, typer.Option("--run-timeout-s", help=TIMING_HELP["timeout"])] = 1800.0,
    resume: Annotated[bool, typer.Option("--resume", help="continue --out: keep the loads it finished, run the rest")] = False,
) -> None:
    """Fig. 7 live: load the cluster, let each algorithm choose, run each choice, compare with Eq. 1.

    --resume with the cut run's options keeps each load (experiment) it finished whole and runs the others."""
    from experiments.studies.sanjay_vadhiyar import live, live_inputs as li, live_report
    from experiments.studies.sanjay_vadhiyar.load_draws import PAPER, plan_experiments
    from testbed.cluster import Cluster
    from testbed.progress import progress_bar

    with user_errors():
        app_ = li.LiveApp(application, iterations)
        size_list = li.parse_sizes(sizes)
        budgets = li.parse_budgets(budget_s)
        algs = li.parse_algorithms(algorithms)
        li.at_least("--experiments", experiments)
        model = li.model_for(model_file, application, size_list)
        timing = _timing(settle_s, window_s, interval_s, run_timeout_s)
        if (out / "runs.csv").exists() and not resume:
            raise li.LiveInputError(f"--out: {out} holds a Fig. 7 run already; add --resume to continue it, "
                                    f"or name another folder")
        c = Cluster.attach(cluster)
        li.check_cluster_size("--cluster", c.workstations, None)
        plan = live.Fig7Plan(size_list, algs, budgets, tuple(plan_experiments(c.workstations, experiments, seed,
                                                                                c.spec.link_rate)), seed)
        console.print(f"Fig. 7 on {c.name}: {experiments} loads x {len(size_list)} sizes x {len(budgets)} budgets x "
                      f"{len(algs)} algorithms = {plan.choices} choices (a set chosen twice in one load runs once)")
        conditions = [f"cluster {c.name}, {len(c.workstations)} workstations; application {application}, "
                      f"{iterations} iterations; sizes {', '.join(map(str, size_list))}",
                      f"model {model_file.name}: {model.describe()}",
                      f"{experiments} experiments (loads), seed {seed}: CPU left {PAPER.cpu_left[0]:.1%}-"
                      f"{PAPER.cpu_left[1]:.0%} on 1 to all workstations, {PAPER.pairs[0]}-{PAPER.pairs[1]} pairs "
                      f"with {PAPER.bw_left[0]:.0%}-{PAPER.bw_left[1]:.0%} of the link left (loads.json)",
                      f"availability: the monitor's averages over {timing.window_s:g} s after {timing.settle_s:g} s "
                      f"of settling, before the runs; algorithms {', '.join(algs)} at "
                      f"{', '.join(f'{b:g}' for b in budgets)} s"]
        heading = f"Sanjay & Vadhiyar Fig. 7 live: {application}"
        prior = live.kept(out, plan) if resume else None  # not this plan's cut run: refused before anything changes
        live_report.save_conditions(out, heading, conditions)
        with progress_bar(console) as update:
            df = live.fig7(c, app_, model, plan, out, timing=timing, update=update, log=console.log, prior=prior)
        paths = live_report.write_report(df, out, heading, conditions)
    typer.echo(live_report.model_error(df).line())
    typer.echo(f"report: {paths.markdown}")


@app.command("report")
def report_cmd(
    folder: Annotated[Path, typer.Argument(help="the --out folder of `nowlab select live`")],
) -> None:
    """Redo a live Fig. 7 report from its runs.csv (a run cut short is reported as far as it got)."""
    from experiments.studies.sanjay_vadhiyar import live_report

    with user_errors():
        paths = live_report.report_folder(folder)
        df = live_report.read_runs(folder)
    typer.echo(live_report.model_error(df).line())
    typer.echo(f"report: {paths.markdown}")


@app.command("avoid")
def avoid_cmd(
    model_file: Annotated[Path, typer.Option("--model", help="the stored Eq. 1 model (JSON)")],
    application: Annotated[str, typer.Option("--application", help=APP_HELP)],
    problem_size: Annotated[int, typer.Option("--problem-size", help="N (the workload's --n)")],
    cluster: Annotated[str | None, typer.Option("--cluster", "-c", help="a running cluster, 5 or more workstations")] = None,
    algorithm: Annotated[str, typer.Option("--algorithm", help="SA, GA, DP, BE or BRUTE")] = "BE",
    budget_s: Annotated[float, typer.Option("--budget-s", help="seconds of search")] = 2.0,
    iterations: Annotated[int, typer.Option("--iterations", help=ITERATIONS_HELP)] = 100,
) -> None:
    """The issue's live test: two workstations loaded, one link congested; the set chosen avoids them and runs."""
    from experiments.studies.sanjay_vadhiyar import live, live_inputs as li
    from experiments.studies.sanjay_vadhiyar.live_records import compute_s, ran
    from testbed.cluster import Cluster

    with user_errors():
        app_ = li.LiveApp(application, iterations)
        (size,) = li.parse_sizes(str(problem_size), "--problem-size")
        (alg,) = li.parse_algorithms(algorithm, "--algorithm")
        li.positive_s("--budget-s", budget_s)
        model = li.model_for(model_file, application, [size], "--problem-size")
        result = live.avoidance_check(Cluster.attach(cluster), app_, model, size, algorithm=alg, budget_s=budget_s)
    typer.echo(f"load: {result.load.describe()}")
    typer.echo(f"{result.chosen.algorithm} chose {', '.join(result.chosen.workstations)} "
               f"(predicted {result.chosen.predicted_s:.2f} s)")
    typer.echo("avoided the loaded workstations and the congested link" if not result.violations
               else "did not avoid: " + "; ".join(result.violations))
    typer.echo(f"run: {result.outcome.status}" + (f", {compute_s(result.outcome):.2f} s" if ran(result.outcome)
                                                  else f" {result.outcome.error}"))
    if not result.passed:
        raise typer.Exit(1)
