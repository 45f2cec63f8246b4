"""CLI commands of the experiments package (`nowlab study ...`)."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

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
) -> None:
    """Anastasiadis & Sevcik (1996): 4 workloads x 5 loads x 14 policies, report and claims."""
    # Imported here so `nowlab --help` does not pay for numpy/scipy/matplotlib.
    from experiments.anastasiadis.report import print_claims, write_outputs
    from experiments.anastasiadis.spec import SpecError, full_spec, quick_spec
    from experiments.anastasiadis.study import run_study

    overrides: dict[str, object] = {"workers": workers, "seed": seed}
    if max_replications is not None:
        overrides["max_replications"] = max_replications
    try:
        spec = (quick_spec if quick else full_spec)(**overrides)
    except SpecError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    result = run_study(spec)
    outputs = write_outputs(result, out)
    print_claims(outputs.claims)
    typer.echo(f"wall time {result.wall_s:.1f} s; report: {outputs.report_md}")


def register(app: typer.Typer) -> None:
    """Add this package's commands to the `nowlab` app."""
    app.add_typer(study_app, name="study")
