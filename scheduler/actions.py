"""What a policy answers with. Processor sets are tuples of workstation ids 0..P-1.

NamedTuples rather than dataclasses: policies create one per decision and
the engine handles tens of thousands per second.
"""
from __future__ import annotations

from typing import NamedTuple


class Start(NamedTuple):
    """Start a queued job on these processors."""

    job: int | str
    procs: tuple[int, ...]


class Preempt(NamedTuple):
    """Ask a running job to stop at its next safe point."""

    job: int | str


class Resize(NamedTuple):
    """Restart a preempted job on a new set; new ⊇ old or old ⊇ new (subset restriction)."""

    job: int | str
    procs: tuple[int, ...]


Action = Start | Preempt | Resize
