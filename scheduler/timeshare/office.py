"""The registration office of one workstation (Zhou & Brent §4, Figs. 2 and 4b).

A circular linked list: one node per registered parallel process (checked in when its job
starts, out when it ends) and dummy nodes, whose pointer is None, for slots that belong to
sequential work only. A servant stands on one node: that process is marked *out* (it may
run); every other is *in* (kept blocked). The office manager's timer moves the servant on
when the node's slot is over; here the timer is a pure function of the time it is given,
so a daemon calls `advance(now)` and stops or continues the processes the answer names.
Which slot holds a time is workloads/wire/timeshare_table.py's `dispatch_at`, the arithmetic
the local job manager in each workstation follows too.

Nodes of registered processes the current table does not name have width 0: the servant
passes them by, so they stay *in* until a table gives them a slot.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from scheduler.timeshare.slots import SlotError
from scheduler.timeshare.tables import WorkstationTable
from workloads.wire.timeshare_table import dispatch_at


class OfficeError(SlotError):
    """A request the office cannot follow (unknown process, double check-in): one line."""


class _Node:
    """A node of the list: `process` None is a dummy; widths are this node's slot in a round."""

    __slots__ = ("process", "parallel_s", "sequential_s", "next")

    def __init__(self, process: str | None, parallel_s: float = 0.0, sequential_s: float = 0.0) -> None:
        self.process = process
        self.parallel_s = parallel_s
        self.sequential_s = sequential_s
        self.next: _Node = self

    @property
    def width_s(self) -> float:
        return self.parallel_s + self.sequential_s


@dataclass(frozen=True, slots=True)
class Dispatch:
    """What the timer says at a time: who is marked out, and until when.

    `process` is None in a dummy slot or in the sequential part of a slot (only sequential
    work runs); `slot_process` is the node's own process either way.
    """

    process: str | None
    slot_process: str | None
    sequential: bool
    until_s: float
    slot_start_s: float


@dataclass(frozen=True, slots=True)
class NodeView:
    process: str | None
    parallel_s: float
    sequential_s: float


class RegistrationOffice:
    """One workstation's office: check in, check out, follow a table, dispatch by the timer."""

    def __init__(self, workstation: str) -> None:
        self.workstation = workstation
        self._head: _Node | None = None    # the node the servant stands on
        self._slot_start_s = 0.0           # when the servant came to it
        self._round_s: float | None = None
        self._out: str | None = None       # the process the last advance() dispatched
        self._now_s = float("-inf")        # the time of the last advance()

    # the list ---------------------------------------------------------------------------
    def _nodes(self) -> Iterator[_Node]:
        if self._head is None:
            return
        node = self._head
        while True:
            yield node
            node = node.next
            if node is self._head:
                return

    def _append(self, node: _Node) -> None:
        """Insert just behind the servant: the new node is served last in the current round."""
        if self._head is None:
            self._head = node
            node.next = node
            return
        tail = self._head
        while tail.next is not self._head:
            tail = tail.next
        tail.next = node
        node.next = self._head

    @property
    def registered(self) -> tuple[str, ...]:
        return tuple(n.process for n in self._nodes() if n.process is not None)

    def check_in(self, process: str) -> None:
        """A parallel process registers when its job starts; it gets a slot from the next table."""
        if not process:
            raise OfficeError(f"{self.workstation}: check in: a process needs a name")
        if process in self.registered:
            raise OfficeError(f"{self.workstation}: check in: {process} is already registered")
        self._append(_Node(process))

    def check_out(self, process: str, now_s: float | None = None) -> None:
        """A parallel process leaves when its job ends; its node goes, and the servant moves on if it was there.

        The node after it then gets its whole slot from `now_s` (the round shifts until the next
        table or resync); without `now_s` its slot counts from where the gone one's began.
        """
        if process not in self.registered:
            raise OfficeError(f"{self.workstation}: check out: {process} is not registered "
                              f"(registered: {', '.join(self.registered) or 'none'})")
        nodes = list(self._nodes())
        i = next(k for k, n in enumerate(nodes) if n.process == process)
        if self._out == process:
            self._out = None
        if len(nodes) == 1:
            self._head = None
            return
        before, gone = nodes[i - 1], nodes[i]
        before.next = gone.next
        if gone is self._head:
            self._head = gone.next
            if now_s is not None:
                self._slot_start_s = now_s

    def add_dummy(self, sequential_s: float) -> None:
        """A slot for sequential work only: a node whose pointer is None."""
        if not sequential_s >= 0:
            raise OfficeError(f"{self.workstation}: dummy slot: width must be >= 0, got {sequential_s}")
        self._append(_Node(None, 0.0, sequential_s))

    def follow(self, table: WorkstationTable, now_s: float = 0.0) -> None:
        """Rebuild the list in the table's order (dummies included); the servant starts on its first node at now_s.

        Every process the table names must have checked in here.
        """
        if table.workstation != self.workstation:
            raise OfficeError(f"{self.workstation}: given the table of {table.workstation}")
        registered = self.registered
        unknown = [p for p in table.processes if p not in registered]
        if unknown:
            raise OfficeError(f"{self.workstation}: table names unknown process {unknown[0]} "
                              f"(registered: {', '.join(registered) or 'none'})")
        nodes = [_Node(s.process, s.parallel_s, s.sequential_s) for s in table.slots]
        nodes += [_Node(p) for p in registered if p not in table.processes]
        self._head = None
        for n in nodes:
            self._append(n)
        self._round_s = table.round_s
        self._slot_start_s = now_s
        self._now_s = float("-inf")  # a new table (a resync) may set the clock back

    # the servant and the timer ----------------------------------------------------------
    def dispatch_order(self) -> tuple[NodeView, ...]:
        """The nodes from the servant's, once round the list: the order it dispatches them in."""
        return tuple(NodeView(n.process, n.parallel_s, n.sequential_s) for n in self._nodes())

    def marks(self) -> dict[str, str]:
        """'out' for the one process the last advance() dispatched, 'in' for every other."""
        return {p: ("out" if p == self._out else "in") for p in self.registered}

    def advance(self, now_s: float) -> Dispatch:
        """Move the servant on by the timer to `now_s` (not before the last call) and say who runs."""
        if now_s < self._now_s:
            raise OfficeError(f"{self.workstation}: the timer cannot go back from {self._now_s:g} s to {now_s:g} s")
        self._now_s = now_s
        if self._head is None or self._round_s is None or not any(n.width_s > 0 for n in self._nodes()):
            self._out = None
            return Dispatch(None, None, True, float("inf"), self._slot_start_s)
        nodes = list(self._nodes())
        lap_s = sum(n.width_s for n in nodes)  # the round, as the list now stands
        # The servant's node begins its round; before it has begun (now_s earlier), it stands there.
        at = dispatch_at([(n.process, n.parallel_s, n.sequential_s) for n in nodes], lap_s,
                         self._slot_start_s, max(now_s, self._slot_start_s))
        self._head, self._slot_start_s = nodes[at.index], at.slot_start_s
        self._out = None if at.sequential else at.job
        return Dispatch(self._out, at.job, at.sequential, at.until_s, at.slot_start_s)
