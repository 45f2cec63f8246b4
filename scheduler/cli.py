"""CLI commands of the scheduler package (`nowlab simulate`)."""
from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this package's commands to the `nowlab` app."""
