"""The four placement policies of Menascé & Rao §6 (SimNOW), as pure functions.

A policy is asked to place a *batch*: the tasks that start together (TGS's next set N,
which is also the ready queue's head). It sees the workstations in host-list order and a
snapshot of what runs where, and answers task -> workstation. One signature for all four,
so TGS and a live runner call them the same way.

Choices the text leaves open (each policy's docstring says which it makes):
- "faster first" orders workstations by speed, fastest first, ties in host-list order;
- the cyclic policies (PVM default, workstation speed) keep one cursor over the whole run,
  as PVM's spawn does, counted by `PlacementState.placed`;
- only the workstation load/speed rule looks at load: there a workstation's speed is its
  speed in reference cores times the fraction of the CPU the owners leave (`available`,
  1.0 when not given), so owner load counts as lost speed. The other three use the
  nominal speed, as the text says (PVM default looks at neither).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from scheduler.taskgraph.spec import TaskSpec
from scheduler.taskgraph.workstations import Workstation


@dataclass(frozen=True)
class PlacementState:
    """What a policy may know when it places a batch.

    placed: tasks placed so far in this run (the round-robin cursor).
    executing: workstation -> demands (reference-seconds) of the guest tasks running there now.
    available: workstation -> fraction of its CPU the owners leave (1 - U_ow); missing is 1.0.
    """

    placed: int = 0
    executing: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    available: Mapping[str, float] = field(default_factory=dict)

    def speed(self, ws: Workstation) -> float:
        return ws.speed_ref_cores * self.available.get(ws.name, 1.0)


Policy = Callable[[Sequence[TaskSpec], Sequence[Workstation], PlacementState], dict[str, str]]


def _fastest_first(workstations: Sequence[Workstation], state: PlacementState) -> list[Workstation]:
    del state  # nominal speeds: owner load is the workstation load/speed rule's business
    return sorted(workstations, key=lambda w: -w.speed_ref_cores)  # stable: ties keep list order


def pvm_default(batch: Sequence[TaskSpec], workstations: Sequence[Workstation],
                state: PlacementState) -> dict[str, str]:
    """"Parallel tasks are allocated to workstations in a round-robin fashion regardless of the
    type of workstation or the interactive load. [...] the PVM scheduler allocates the task to
    the next workstation in its list of hosts."

    The cursor runs over the whole run (task k of the run goes to host k mod W), T1 included.
    """
    w = len(workstations)
    return {t.name: workstations[(state.placed + i) % w].name for i, t in enumerate(batch)}


def workstation_speed(batch: Sequence[TaskSpec], workstations: Sequence[Workstation],
                      state: PlacementState) -> dict[str, str]:
    """"This is a modification over the default PVM scheduling policy. In this policy, parallel
    tasks are allocated to faster workstations first and then to slower ones."

    Read as PVM's round robin over the host list sorted fastest first: the run's first task
    gets the fastest workstation, the next the second fastest, and so on, wrapping around.
    Task demands are not looked at, which is why small initial tasks take the fast hosts.
    """
    order = _fastest_first(workstations, state)
    return {t.name: order[(state.placed + i) % len(order)].name for i, t in enumerate(batch)}


def parallel_load_speed(batch: Sequence[TaskSpec], workstations: Sequence[Workstation],
                        state: PlacementState) -> dict[str, str]:
    """"Workstations are picked in the order of their speed with faster workstations chosen for
    allocation before slower ones. Then, the parallel task with the largest computation
    demand is allocated to a faster workstation."

    Within each batch: tasks sorted by demand, largest first (ties in batch order), go to
    the workstations sorted fastest first, wrapping around when the batch is larger than
    the cluster. What already runs on a workstation is not looked at (the next policy does).
    """
    order = _fastest_first(workstations, state)
    by_demand = sorted(batch, key=lambda t: -t.demand_ref_s)
    return {t.name: order[i % len(order)].name for i, t in enumerate(by_demand)}


def workstation_load_speed(batch: Sequence[TaskSpec], workstations: Sequence[Workstation],
                           state: PlacementState) -> dict[str, str]:
    """"1. Determine the total service demand at a workstation (existing + the proposed task
    demand). 2. Find α — the ratio of the total service demand to the workstation relative
    speed. Allocate the parallel task under consideration to the workstation for which α is
    the least." Tasks are taken "one after the other" from the ready queue.

    Existing demand is the whole demand (reference-seconds) of the guest tasks running on the
    workstation, plus those placed earlier in this batch (not what remains of them: the
    snapshot has no clock). The ready queue is taken in batch order; ties in α go to the
    faster workstation, then host-list order.
    """
    load = {w.name: sum(state.executing.get(w.name, ())) for w in workstations}
    out: dict[str, str] = {}
    for t in batch:
        best = min(workstations,
                   key=lambda w: ((load[w.name] + t.demand_ref_s) / state.speed(w), -state.speed(w)))
        out[t.name] = best.name
        load[best.name] += t.demand_ref_s
    return out


POLICIES: dict[str, Policy] = {
    "pvm-default": pvm_default,
    "workstation-speed": workstation_speed,
    "parallel-load-speed": parallel_load_speed,
    "workstation-load-speed": workstation_load_speed,
}


def get_policy(name: str) -> Policy:
    """A policy by name (case-insensitive, '_' as '-'); an unknown name lists the known ones."""
    key = name.strip().lower().replace("_", "-")
    if key not in POLICIES:
        raise ValueError(f"policy: unknown {name!r} (known: {', '.join(POLICIES)})")
    return POLICIES[key]
