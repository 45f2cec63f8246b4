"""Bad input is one line on stderr naming what was wrong, and exit code 2; never a traceback."""
from __future__ import annotations

import contextlib
from typing import Iterator, NoReturn

import typer
from rich.console import Console

err = Console(stderr=True)


def fail(message: str, code: int = 2) -> NoReturn:
    """One clear line on stderr, no traceback (plain text: a message's "[ws2]" is not markup)."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


@contextlib.contextmanager
def user_errors() -> Iterator[None]:
    """The errors a user's input or environment can cause, as one line each."""
    import docker.errors

    from testbed.backends.base import BackendError

    try:
        yield
    except KeyError as exc:  # str(KeyError) adds quotes around the message
        fail(str(exc.args[0]) if exc.args else "unknown name")
    except (ValueError, LookupError, TimeoutError, RuntimeError, OSError,
            docker.errors.DockerException, BackendError) as exc:
        fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
