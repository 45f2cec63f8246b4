"""One resize, measured: the record both drivers of a malleable job fill.

A preemption goes: the request is made, the `preempt` line is sent, the job
acknowledges at a safe point, the new partition is sent, the job moves or
checkpoints its data and its old processes exit, a new mpiexec starts, and
the job reports it is running again. `ResizeRecord` keeps the moment of each
step (seconds on its driver's clock: since the run started for the live
executor, since the job started for `MalleableJob`) and what the job said it
moved; every duration is derived from those moments, so the two drivers
cannot disagree on what "release" or "total" means.

It sits at the bottom of the stack (workloads), because `MalleableJob` fills
it as well as the scheduler's live executor; the results store keeps it as a
typed table.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

KINDS = ("loser", "winner", "same")


@dataclass
class ResizeRecord:
    """One preemption request and what followed; times in seconds (None: did not happen)."""

    job: int | str
    requested_at: float  # the preemption was asked for (the policy's Preempt)
    from_procs: tuple[int, ...] = ()  # processor ids (live executor); empty for MalleableJob
    to_procs: tuple[int, ...] = ()
    from_hosts: tuple[str, ...] = ()
    to_hosts: tuple[str, ...] = ()
    kind: str = ""  # loser, winner, same; empty if the job finished first
    outcome: str = "resized"  # or "finished first"
    iteration: int = -1  # safe point at which the job acknowledged
    sent_at: float | None = None  # preempt line sent (later than requested while the job was launching)
    ack_at: float | None = None
    partition_at: float | None = None  # the new partition sent (the policy's Resize)
    released_at: float | None = None  # the job reported its data moved or checkpointed
    exited_at: float | None = None  # its old mpiexec ended
    relaunched_at: float | None = None  # new mpiexec started (after its workstations were free)
    running_at: float | None = None  # restored reported (or released, for an unchanged set)
    bytes_moved: int = 0  # over MPI between workstations, both sides of the move
    redistribution_s: float = 0.0  # MPI data movement, job clock (loser before exit, winner after restart)
    checkpoint_s: float = 0.0  # blocks written to local disk before exit, job clock
    load_s: float = 0.0  # blocks read back after restart, job clock

    @staticmethod
    def _span(a: float | None, b: float | None) -> float | None:
        return None if a is None or b is None else b - a

    @property
    def ack_latency_s(self) -> float | None:
        """Preempt sent to acknowledged: how long the job took to reach a safe point."""
        return self._span(self.sent_at, self.ack_at)

    @property
    def held_s(self) -> float | None:
        """Ack to partition: how long the scheduler kept the job waiting (EQUI's synchronisation delay)."""
        return self._span(self.ack_at, self.partition_at)

    @property
    def release_s(self) -> float | None:
        """Ack to the old processes gone: the workstations the job gives up are free from then."""
        return self._span(self.ack_at, self.exited_at)

    @property
    def relaunch_s(self) -> float | None:
        """New mpiexec started to running again."""
        return self._span(self.relaunched_at, self.running_at)

    @property
    def reconfig_s(self) -> float | None:
        """Partition to running again: the cost of the reconfiguration itself."""
        return self._span(self.partition_at, self.running_at)

    @property
    def total_s(self) -> float | None:
        """Requested to running again."""
        return self._span(self.requested_at, self.running_at)

    def add_report(self, message: dict[str, Any]) -> None:
        """Add what a `released` or `restored` line says the job moved, wrote or read."""
        self.bytes_moved += int(message.get("bytes_moved", 0))
        self.redistribution_s += float(message.get("redistribution_s", 0.0))
        self.checkpoint_s += float(message.get("checkpoint_s", 0.0))
        self.load_s += float(message.get("load_s", 0.0))

    def row(self) -> dict[str, Any]:
        """Plain columns (sets as space-separated text), derived durations included."""
        d = asdict(self)
        for name in ("from_procs", "to_procs", "from_hosts", "to_hosts"):
            d[name] = " ".join(str(x) for x in d[name])
        d.update({name: getattr(self, name) for name in DERIVED})
        return d


FIELDS = tuple(f.name for f in fields(ResizeRecord))
DERIVED = ("ack_latency_s", "held_s", "release_s", "relaunch_s", "reconfig_s", "total_s")
