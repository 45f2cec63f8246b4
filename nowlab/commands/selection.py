"""`nowlab select`: Sanjay & Vadhiyar's Eq. 1 (fit, show) and machine selection (hosts).

Parses and checks the input, calls `experiments.models` (Eq. 1, its regression and files)
and `scheduler.selection` (the algorithms), and prints. No Docker: the availability comes
from a file (the monitor's averages, as `testbed.load.monitor.summarize` gives them).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from nowlab.errors import user_errors

app = typer.Typer(no_args_is_help=True, help="Choose workstations for a tightly coupled job (Sanjay & Vadhiyar).")

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
