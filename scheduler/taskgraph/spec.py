"""A task-graph application: tasks with a demand, arcs with the bytes sent (Menascé & Rao §2).

The paper's tuple (T, P, D, C): tasks T, precedence P (the arcs), execution times D and
communication demands C. A task's demand is in reference-seconds (`workloads/reference.py`):
seconds on a workstation of speed 1.0 reference core, so one graph runs on any mix of speeds.
Every check of a bad graph is made here, once, and says in one line which task or arc is wrong;
pydantic only checks the types.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from functools import cached_property
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator


class TaskGraphError(ValueError):
    """A task graph that cannot be run: one line naming the task or arc."""


class TaskSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    demand_ref_s: float  # seconds on a workstation of speed 1.0 reference core


class ArcSpec(BaseModel):
    """`source` sends `size_bytes` to `target`; `target` starts only once they have arrived."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    source: str = Field(alias="from")
    target: str = Field(alias="to")
    size_bytes: int = Field(alias="bytes")

    @property
    def label(self) -> str:
        return f"{self.source}->{self.target}"


class TaskGraph(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    name: str = "taskgraph"
    description: str = ""
    tasks: tuple[TaskSpec, ...] = Field(alias="task", min_length=1)
    arcs: tuple[ArcSpec, ...] = Field(default=(), alias="arc")

    @model_validator(mode="after")
    def _check(self) -> TaskGraph:
        dup = [n for n, k in Counter(t.name for t in self.tasks).items() if k > 1]
        if dup:
            raise ValueError(f"task {dup[0]!r}: duplicate task name")
        for t in self.tasks:
            if not t.demand_ref_s > 0:  # also refuses NaN
                raise ValueError(f"task {t.name!r}: demand_ref_s must be > 0 reference-seconds, got {t.demand_ref_s}")
        names = {t.name for t in self.tasks}
        seen: set[tuple[str, str]] = set()
        for a in self.arcs:
            for end in (a.source, a.target):
                if end not in names:
                    raise ValueError(f"arc {a.label}: unknown task {end!r}")
            if a.size_bytes < 0:
                raise ValueError(f"arc {a.label}: bytes must be >= 0, got {a.size_bytes}")
            if (a.source, a.target) in seen:
                raise ValueError(f"arc {a.label}: given twice")
            seen.add((a.source, a.target))
        cycle = _find_cycle([t.name for t in self.tasks], [(a.source, a.target) for a in self.arcs])
        if cycle:
            raise ValueError(f"task {cycle[0]!r}: on a cycle ({' -> '.join([*cycle, cycle[0]])})")
        return self

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> TaskGraph:
        """A changed graph is checked again and computes its queries afresh.

        pydantic's own copy skips validation and would carry the cached queries over.
        """
        del deep  # every copy is a new validated model, deep by construction
        return type(self).model_validate({**self.model_dump(), **(update or {})})

    # --- queries (the graph is frozen, so they are computed once) ---
    @cached_property
    def task(self) -> dict[str, TaskSpec]:
        return {t.name: t for t in self.tasks}

    @cached_property
    def pred(self) -> dict[str, tuple[str, ...]]:
        """pred(T): the tasks T waits for, in arc order."""
        out: dict[str, list[str]] = {t.name: [] for t in self.tasks}
        for a in self.arcs:
            out[a.target].append(a.source)
        return {k: tuple(v) for k, v in out.items()}

    @cached_property
    def succ(self) -> dict[str, tuple[str, ...]]:
        out: dict[str, list[str]] = {t.name: [] for t in self.tasks}
        for a in self.arcs:
            out[a.source].append(a.target)
        return {k: tuple(v) for k, v in out.items()}

    @cached_property
    def arc_bytes(self) -> dict[tuple[str, str], int]:
        return {(a.source, a.target): a.size_bytes for a in self.arcs}

    @cached_property
    def levels(self) -> dict[str, int]:
        """Level of each task: 0 for a task without predecessors, else 1 + its deepest predecessor's."""
        level: dict[str, int] = {}
        for name in self.topological_order:
            level[name] = 1 + max((level[p] for p in self.pred[name]), default=-1)
        return level

    @cached_property
    def topological_order(self) -> tuple[str, ...]:
        """Tasks in an order that respects every arc; ties in file order."""
        indeg = {t.name: len(self.pred[t.name]) for t in self.tasks}
        order: list[str] = []
        ready = [t.name for t in self.tasks if indeg[t.name] == 0]
        while ready:
            name = ready.pop(0)
            order.append(name)
            for s in self.succ[name]:
                indeg[s] -= 1
                if indeg[s] == 0:
                    ready.append(s)
        return tuple(order)

    @property
    def initial(self) -> str:
        """T1 of the paper: the first task in the file without a predecessor."""
        return next(t.name for t in self.tasks if not self.pred[t.name])


def _find_cycle(names: list[str], edges: list[tuple[str, str]]) -> list[str]:
    """One cycle as a list of tasks (first task in file order that lies on it first), or []."""
    succ: dict[str, list[str]] = {n: [] for n in names}
    for a, b in edges:
        succ[a].append(b)
    colour = dict.fromkeys(names, 0)  # 0 unseen, 1 on the current path, 2 done
    for root in names:
        if colour[root]:
            continue
        path: list[str] = []
        stack: list[tuple[str, int]] = [(root, 0)]
        while stack:
            node, i = stack.pop()
            if i == 0:
                colour[node] = 1
                path.append(node)
            if i < len(succ[node]):
                stack.append((node, i + 1))
                nxt = succ[node][i]
                if colour[nxt] == 1:
                    cyc = path[path.index(nxt):]
                    first = min(cyc, key=names.index)
                    k = cyc.index(first)
                    return cyc[k:] + cyc[:k]
                if colour[nxt] == 0:
                    stack.append((nxt, 0))
            else:
                colour[node] = 2
                path.pop()
    return []
