"""The policy interface: pure decisions from a snapshot, no I/O, no clock."""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from scheduler.actions import Action
from scheduler.model import Knowledge
from scheduler.snapshot import JobView, Snapshot


class Policy(ABC):
    """A space-sharing scheduling rule.

    `needs` declares which application facts it uses (Table 2), so jobs whose
    models cannot supply them are refused before a run. `zero_overhead`
    asks the *simulator* to model reconfiguration as free: preemption requests
    are acknowledged at once (no wait for a safe point) and resizes cost no
    time. That is how the idealised DYN-EQUI of Anastasiadis & Sevcik (§5.1)
    is expressed; a live executor ignores the flag because real jobs cannot.
    `run_to_completion` promises the policy never preempts and only starts
    queued jobs on free processors, so a caller may skip calling it while
    the queue is empty or no processor is free (half the events of a run).
    """

    name: ClassVar[str]
    needs: ClassVar[frozenset[Knowledge]] = frozenset({Knowledge.PMAX})
    zero_overhead: ClassVar[bool] = False
    run_to_completion: ClassVar[bool] = False

    def queue_key(self, job: JobView) -> object:
        """Sort key of the waiting queue; FIFO by default."""
        return job.seq

    @abstractmethod
    def decide(self, snap: Snapshot) -> list[Action]:
        """Answer one event with actions, applied in the order given."""

    def __repr__(self) -> str:
        return f"<policy {self.name}>"
