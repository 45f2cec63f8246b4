"""What the §5 figures and the §6 placement comparison share: the model's view of the chosen
workstations, one prediction (TGS with eq. 7, the Monte Carlo of Fig. 2) and repeated live
runs with the owner daemons, the way `tables.measure_row` does them.

The placement is decided once, by the policy inside TGS at the spec's speeds (the policy knows
what the scheduler would know); the live runs and every other prediction then use that same
placement (`pinned`), so a Monte Carlo draw or a profiled speed cannot move a task.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from experiments.models.tgs import Network, tgs
from experiments.models.tgs_montecarlo import MonteCarloSettings, monte_carlo
from experiments.studies.menasce_rao.owner_use import OwnerUse
from experiments.studies.menasce_rao.paper import CLASSES
from experiments.studies.menasce_rao.tables import repeat_runs, with_speeds
from experiments.studies.menasce_rao.live import makespan_s, workstations_of
from scheduler.taskgraph.placement import PlacementState, Policy
from scheduler.taskgraph.spec import TaskGraph, TaskSpec
from scheduler.taskgraph.workstations import Owners, Workstation
from testbed.cluster import Cluster
from testbed.load.model import available_fraction
from testbed.spec import ClusterSpec, OwnerLoad

Log = Callable[[str], None]
#: Seconds a live run costs besides the graph itself (the processes started, the go, the owners
#: started and stopped), for the estimate only.
RUN_OVERHEAD_S = 2.0


@dataclass(frozen=True)
class Planned:
    """A cluster as its spec describes it, before it runs: enough to predict (no live runs)."""

    spec: ClusterSpec

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def workstations(self) -> list[str]:
        return self.spec.names


def kind_of(name: str) -> str:
    """The class of one of compose/specs/menasce-rao.toml's workstations."""
    for kind, names in CLASSES.items():
        if name in names:
            return kind
    raise ValueError(f"workstation {name}: not one of the Menascé & Rao classes ({', '.join(CLASSES)})")


def model_workstations(cluster: Cluster | Planned, names: Sequence[str],
                       owners: Mapping[str, OwnerLoad]) -> list[Workstation]:
    """The named workstations as the model sees them, in the order given, with their owners."""
    ws = {w.name: w for w in workstations_of(cluster)}  # type: ignore[arg-type]  # Planned has what it reads
    missing = [n for n in names if n not in ws]
    if missing:
        raise ValueError(f"cluster {cluster.name}: no workstation {missing[0]} "
                         "(bring up compose/specs/menasce-rao.toml)")
    out = []
    for n in names:
        o = owners.get(n)
        out.append(ws[n].model_copy(update={"kind": kind_of(n), "owners": None if o is None or o.n == 0
                                            else Owners(n=o.n, z_s=o.z, d_s=o.d)}))
    return out


def network_of(cluster: Cluster | Planned, names: Sequence[str]) -> Network:
    return Network(bandwidth_bit_s=min(cluster.spec.egress(n) for n in names))


def availability(workstations: Sequence[Workstation]) -> dict[str, float]:
    """1 - U_ow of each loaded workstation (M/M/1//N): what the load/speed rule is told of owners."""
    return {w.name: available_fraction(w.owners.n, w.owners.z_s, w.owners.d_s)
            for w in workstations if w.owners is not None and w.owners.n > 0}


def pinned(placement: Mapping[str, str]) -> Policy:
    """A policy that answers a placement already made."""
    def policy(batch: Sequence[TaskSpec], workstations: Sequence[Workstation],
               state: PlacementState) -> dict[str, str]:
        del workstations, state
        return {t.name: placement[t.name] for t in batch}
    return policy


@dataclass(frozen=True)
class Prediction:
    placement: dict[str, str]         # task -> workstation, as the policy chose it in TGS
    tgs_s: float                      # TGS with eq. 7 at the spec's speeds (the paper's T_mod)
    tgs_profiled_s: float | None      # the same at the task-profiled speeds (None: no profile)
    mc_s: float                       # the Monte Carlo of Fig. 2, mean ...
    mc_half_s: float                  # ... and 95% half-width, at the profiled speeds if given


def predict(graph: TaskGraph, model_ws: Sequence[Workstation], policy: Policy, network: Network, *,
            profiled: Mapping[str, float] | None = None, seed: int = 0) -> Prediction:
    """`profiled`: class -> reference speed from `tables.profile_speeds`."""
    det = tgs(graph, model_ws, policy, network, available=availability(model_ws))
    placement = {t.task: t.workstation for t in det.timings}
    fixed = pinned(placement)
    at = model_ws if profiled is None else with_speeds(model_ws, {w.name: profiled[kind_of(w.name)]
                                                                  for w in model_ws})
    tgs_profiled = None if profiled is None else tgs(graph, at, fixed, network).makespan_s
    mc = monte_carlo(graph, at, fixed, network, MonteCarloSettings(seed=seed))
    return Prediction(placement, det.makespan_s, tgs_profiled, mc.mean_s, mc.half_width_s)


def run_reps(cluster: Cluster, graph: TaskGraph, placement: Mapping[str, str], owners: Mapping[str, OwnerLoad],
             reps: int, *, seed: int = 0, label: str = "", log: Log = lambda _m: None,
             uses: list[OwnerUse] | None = None) -> tuple[float, ...]:
    """`tables.repeat_runs`, one makespan per repetition (`uses`: the owners' utilisation, as there)."""
    runs = repeat_runs(cluster, graph, placement, owners, reps, seed=seed, label=label, log=log, uses=uses)
    return tuple(makespan_s(r) for r in runs)


def estimate_s(predicted_s: Sequence[float], reps: int) -> float:
    """How long live runs of graphs predicted to take `predicted_s` take, `reps` times each."""
    return reps * sum(t + RUN_OVERHEAD_S for t in predicted_s)
