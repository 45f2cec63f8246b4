"""What `nowlab select train` and `nowlab select live` are asked to do, checked before anything runs.

Every problem is one `LiveInputError` naming the command-line option (`--sizes: 0 is not > 0`).
The application is one of the malleable mpi4py workloads; its problem size N is the grid or
matrix order (`--n`), and the iteration count is fixed per command so that N alone moves Eq. 1.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from experiments.models.sv_model import SvModel, SvModelError
from experiments.models.sv_store import load_model
from scheduler.selection import algorithm_names

APPLICATIONS = ("cg", "stencil")


class LiveInputError(ValueError):
    """Bad input to a live Sanjay & Vadhiyar command: one line naming the option."""


@dataclass(frozen=True)
class LiveApp:
    """A workload run at problem size N: `python3 -m workloads.<name> --n N --iterations I`."""

    name: str
    iterations: int

    def __post_init__(self) -> None:
        if self.name not in APPLICATIONS:
            raise LiveInputError(f"--application: unknown {self.name!r}; known: {', '.join(APPLICATIONS)}")
        if self.iterations < 1:
            raise LiveInputError(f"--iterations: {self.iterations} is not >= 1")

    def argv(self, problem_size: int) -> tuple[str, ...]:
        return ("python3", "-m", f"workloads.{self.name}", "--n", str(int(problem_size)),
                "--iterations", str(self.iterations))


def _items(option: str, text: str) -> list[str]:
    items = [s.strip() for s in text.split(",") if s.strip()]
    if not items:
        raise LiveInputError(f"{option}: give one or more values, comma-separated")
    return items


def parse_sizes(text: str, option: str = "--sizes") -> tuple[int, ...]:
    """`--sizes 1000,2000`: whole problem sizes > 0."""
    out = []
    for item in _items(option, text):
        try:
            value = float(item)
        except ValueError:
            raise LiveInputError(f"{option}: {item!r} is not a number") from None
        if not value > 0:
            raise LiveInputError(f"{option}: {item} is not > 0")
        if value != int(value):
            raise LiveInputError(f"{option}: {item} is not a whole number (it is the workload's --n)")
        out.append(int(value))
    return tuple(out)


def parse_budgets(text: str) -> tuple[float, ...]:
    """`--budget-s 0.5,2`: seconds of search per algorithm (Fig. 7's x-axis), each > 0."""
    out = []
    for item in _items("--budget-s", text):
        try:
            value = float(item)
        except ValueError:
            raise LiveInputError(f"--budget-s: {item!r} is not a number of seconds") from None
        if not (value > 0 and value < float("inf")):
            raise LiveInputError(f"--budget-s: {item} is not a number of seconds > 0")
        out.append(value)
    return tuple(out)


def parse_algorithms(text: str, option: str = "--algorithms") -> tuple[str, ...]:
    """`--algorithms SA,GA,DP,BE`: known selection algorithms, in the order given."""
    known = algorithm_names()
    out = []
    for item in _items(option, text):
        key = item.upper()
        if key not in known:
            raise LiveInputError(f"{option}: unknown {item!r}; known: {', '.join(known)}")
        if key not in out:
            out.append(key)
    return tuple(out)


def at_least(option: str, value: int, low: int = 1) -> int:
    if value < low:
        raise LiveInputError(f"{option}: {value} is not >= {low}")
    return value


def positive_s(option: str, value: float) -> float:
    if not (value > 0 and value < float("inf")):
        raise LiveInputError(f"{option}: {value:g} is not a number of seconds > 0")
    return value


def model_for(path: Path, application: str, sizes: Sequence[int], option: str = "--sizes") -> SvModel:
    """The stored model of `application`, checked to cover every size asked for."""
    try:
        model = load_model(path, application)
    except SvModelError as exc:
        raise LiveInputError(f"--model: {exc}") from None
    for size in sizes:
        try:
            model.check_problem_size(size)
        except SvModelError as exc:
            raise LiveInputError(f"{option}: {str(exc).removeprefix('problem_size: ')}") from None
    return model


def check_cluster_size(option: str, workstations: Sequence[str], most_procs: int | None) -> None:
    """The cluster must hold a job and a traffic pair; --max-procs at most its size."""
    if len(workstations) < 2:
        raise LiveInputError(f"--cluster: {len(workstations)} workstation(s); the experiment needs 2 or more")
    if most_procs is not None and not 1 <= most_procs <= len(workstations):
        raise LiveInputError(f"{option}: {most_procs} is not in 1..{len(workstations)}")
