"""The `nowlab` command: one typer app, one module per command group (nowlab/commands/)."""
from __future__ import annotations

import sys
import warnings

import typer

from nowlab.commands import (batsim, cluster, experiments, load, replay, schedule, selection, studies, swarm, taskgraph,
                             timeshare, workloads)

app = typer.Typer(no_args_is_help=True, add_completion=False,
                  help="nowlab: an emulated network of workstations for parallel-job scheduling research.")

for group in (batsim, cluster, load, workloads, schedule, replay, experiments, taskgraph, timeshare, selection, swarm, studies):
    group.register(app)


def _one_line(message: Warning | str, category: type[Warning], filename: str, lineno: int,
              file: object = None, line: str | None = None) -> None:
    """A warning as the user reads it, one line, without the library's source line."""
    print(f"warning: {message}", file=sys.stderr)


def main() -> None:
    warnings.showwarning = _one_line
    app()
