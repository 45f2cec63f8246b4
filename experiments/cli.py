"""CLI commands of the experiments package (`nowlab study ...`)."""
from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this package's commands to the `nowlab` app."""
