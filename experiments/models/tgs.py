"""The Task Graph Scan (TGS) algorithm of Menascé & Rao, Table 1 (§3.3).

Box 3 of Fig. 2: given where each task runs (the placement policy W(T, S)) and how long it
takes there (SD(T, w), eq. 7), scan the graph and give the application's execution time and
every task's start, finish and workstation: what a live runner needs to place the tasks and
what it compares its measured timeline with.

Where Table 1 leaves a choice, this module makes one (all in `tgs`'s docstring):
- c_ij is in bytes and startdelay adds it to a time: it becomes latency + 8 c_ij / bandwidth
  (`Network`). It is charged on every arc, whether or not the two tasks share a workstation,
  because startdelay is computed before W() places the task.
- W() is asked once per next set N (all tasks that start together), so a policy that sorts
  the ready queue (parallel load/speed) sees the whole queue.
- P_i of eq. 7, the number of guest tasks on workstation i, is counted with `GuestCount`.
"""
from __future__ import annotations

import enum
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from experiments.models.mva import guest_time_s
from scheduler.taskgraph.placement import PlacementState, Policy
from scheduler.taskgraph.spec import TaskGraph, TaskSpec
from scheduler.taskgraph.workstations import Workstation

NA, EX, FD = "NA", "EX", "FD"  # status(T): not assigned, executing, finished


class GuestCount(str, enum.Enum):
    """How P_i is counted when a task starts on workstation i.

    RUNNING: the tasks of the executing set X on i that have not finished by the new task's
      start, with every task of the same next set N on i counted (they start together, so
      they share the CPU alike). The default.
    LITERAL: Table 1 word for word: X as it stands when the loop reaches the task, so the
      first of two tasks started together on i gets P = 1 and the second P = 2, and a task of
      X that finished earlier but has not yet been through FinishTasks still counts.
    """

    RUNNING = "running"
    LITERAL = "literal"


@dataclass(frozen=True)
class Network:
    """How long c_ij bytes take from one task to the next: latency + 8 bytes / bandwidth."""

    bandwidth_bit_s: int = 10_000_000   # the paper's first choice: 10 Mbps Ethernet
    latency_s: float = 0.0

    def __post_init__(self) -> None:
        if self.bandwidth_bit_s <= 0:
            raise ValueError(f"bandwidth_bit_s: must be > 0, got {self.bandwidth_bit_s}")
        if self.latency_s < 0:
            raise ValueError(f"latency_s: must be >= 0, got {self.latency_s}")

    def transfer_s(self, size_bytes: int) -> float:
        return self.latency_s + 8.0 * size_bytes / self.bandwidth_bit_s


@dataclass(frozen=True)
class TaskTiming:
    """One task's prediction: where it runs, when it starts and ends, with how many guests."""

    task: str
    workstation: str
    start_s: float
    finish_s: float
    guests: int      # P_i used in eq. 7 for this task


@dataclass(frozen=True)
class TgsResult:
    makespan_s: float                   # the application's execution time: the last finish
    timings: tuple[TaskTiming, ...]     # in the order the tasks started

    def of(self, task: str) -> TaskTiming:
        return next(t for t in self.timings if t.task == task)


# SD(T_j, w) given the number of guests and the start time (a trace of owner activity needs it).
ServiceTime = Callable[[TaskSpec, Workstation, int, float], float]


def eq7_service(task: TaskSpec, ws: Workstation, guests: int, start_s: float) -> float:
    """SD(T_j, w) = t_j^w of eq. 7: the mean-value owner inflation, shared by P guests."""
    del start_s  # eq. 7 is a mean: it does not depend on when the task runs
    return guest_time_s(task.demand_ref_s, ws, guests)


def _same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def tgs(graph: TaskGraph, workstations: Sequence[Workstation], policy: Policy,
        network: Network = Network(), service: ServiceTime = eq7_service,
        guest_count: GuestCount = GuestCount.RUNNING,
        available: Mapping[str, float] | None = None) -> TgsResult:
    """Scan `graph` on `workstations` placed by `policy`: Table 1, step by step.

    `available` (workstation -> 1 - U_ow) is what the placement policy is told of owner load.
    """
    if not workstations:
        raise ValueError("workstations: at least one")
    wsx = {w.name: w for w in workstations}
    avail = dict(available or {})
    status = {t.name: NA for t in graph.tasks}
    start: dict[str, float] = {}
    finish: dict[str, float] = {}
    where: dict[str, str | None] = {}   # WS(T): reset to Φ (None) when T finishes
    guests: dict[str, int] = {}
    placed_on: dict[str, str] = {}      # WS(T) kept for the result after FinishTasks clears it
    executing: list[str] = []           # the set X, in start order
    placed = 0

    def W(batch: list[str], at_s: float) -> dict[str, str]:
        """W(T, S) for every task of a next set: the policy sees what runs where at `at_s`."""
        nonlocal placed
        running: dict[str, list[float]] = {}
        for k in executing:
            if k not in batch and (guest_count is GuestCount.LITERAL or finish[k] > at_s):
                running.setdefault(where[k], []).append(graph.task[k].demand_ref_s)
        state = PlacementState(placed=placed, executing={w: tuple(d) for w, d in running.items()},
                               available=avail)
        chosen = policy([graph.task[k] for k in batch], workstations, state)
        placed += len(batch)
        return chosen

    def startdelay(k: str) -> float:
        """max over pred(T_k) of finish(T_i) + c_ik (0 for a task without predecessors)."""
        return max((finish[i] + network.transfer_s(graph.arc_bytes[(i, k)]) for i in graph.pred[k]),
                   default=0.0)

    def ready() -> list[str]:
        """R: tasks NA whose predecessors are all FD, in file order."""
        return [t.name for t in graph.tasks
                if status[t.name] == NA and all(status[p] == FD for p in graph.pred[t.name])]

    # /* Initialization */ status(T_i) <- NA; start(T_1) <- 0; WS(T_1) <- W(T_1, S);
    # finish(T_1) <- SD(T_1, WS(T_1)); status(T_1) <- FD
    t1 = graph.initial
    start[t1] = 0.0
    where[t1] = placed_on[t1] = W([t1], 0.0)[t1]
    guests[t1] = 1
    finish[t1] = start[t1] + service(graph.task[t1], wsx[where[t1]], 1, 0.0)
    status[t1] = FD
    where[t1] = None

    # /* task scan */ Repeat ComputeNextSet(); StartTasks(); FinishTasks(); Until all FD
    while any(s != FD for s in status.values()):
        # Procedure ComputeNextSet: N <- tasks of R with the minimum startdelay
        r = ready()
        delays = {k: startdelay(k) for k in r}
        first = min(delays.values(), default=math.inf)
        nxt = [k for k in r if _same(delays[k], first)]

        # Procedure StartTasks: for each T_k in N: status <- EX; X <- X ∪ {T_k};
        # start(T_k) <- startdelay(T_k); WS(T_k) <- W(T_k, S); finish <- start + SD(T_k, WS(T_k))
        if nxt:
            chosen = W(nxt, first)
            for k in nxt:
                status[k] = EX
                executing.append(k)
                start[k] = delays[k]
                where[k] = placed_on[k] = chosen[k]
                if guest_count is GuestCount.LITERAL:
                    guests[k] = sum(1 for j in executing if where[j] == where[k])
                    finish[k] = start[k] + service(graph.task[k], wsx[where[k]], guests[k], start[k])
            if guest_count is GuestCount.RUNNING:
                for k in nxt:
                    guests[k] = sum(1 for j in executing if where[j] == where[k]
                                    and (j in nxt or finish[j] > start[k]))
                for k in nxt:
                    finish[k] = start[k] + service(graph.task[k], wsx[where[k]], guests[k], start[k])

        # Procedure FinishTasks: F <- tasks of X with the minimum finish;
        # for each: status <- FD; WS <- Φ; X <- X - {T_k}
        if not executing:
            raise RuntimeError("TGS: nothing ready and nothing executing before every task finished")
        earliest = min(finish[k] for k in executing)
        for k in [k for k in executing if _same(finish[k], earliest)]:
            status[k] = FD
            where[k] = None
            executing.remove(k)

    order = sorted(start, key=start.__getitem__)  # stable: ties keep the order the scan started them
    timings = tuple(TaskTiming(k, placed_on[k], start[k], finish[k], guests[k]) for k in order)
    return TgsResult(makespan_s=max(finish.values()), timings=timings)
