"""The `nowlab` command: one typer app; each package contributes its own commands."""
from __future__ import annotations

import typer

app = typer.Typer(no_args_is_help=True, add_completion=False,
                  help="nowlab: an emulated network of workstations for parallel-job scheduling research.")


def _register() -> None:
    # Each package owns a small `cli` module with a `register(app)` function, so the
    # command tree grows without this file knowing any command's details.
    from testbed import cli_cluster, cli_load
    from scheduler import cli as scheduler_cli
    from experiments import cli as experiments_cli
    from workloads import cli as workloads_cli

    for module in (cli_cluster, cli_load, workloads_cli, scheduler_cli, experiments_cli):
        module.register(app)


def main() -> None:
    _register()
    app()
