"""What a policy answers with. Processor sets are tuples of workstation ids 0..P-1."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Start:
    """Start a queued job on these processors."""

    job: int | str
    procs: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Preempt:
    """Ask a running job to stop at its next safe point."""

    job: int | str


@dataclass(frozen=True, slots=True)
class Resize:
    """Restart a preempted job on a new set; new ⊇ old or old ⊇ new (subset restriction)."""

    job: int | str
    procs: tuple[int, ...]


Action = Start | Preempt | Resize
