"""The four placement policies of Menascé & Rao §6 compared live (issue 15, item 6): the wave
front and `small-then-large` (the case the paper says defeats speed-only placement), each
under every policy, without owners and with them, measured beside TGS and the Monte Carlo.

Which workstations: two of each class, in the cluster's host-list order (lx1, lx2, sp5a,
sp5b, sp20a, sp20b). Mixed classes so the policies differ at all (on one class they all
reduce to round robin); six hosts, more than the graphs' parallelism of three, so a cyclic
policy's cursor has moved past the fast hosts by the time the large tasks of
`small-then-large` are placed: the speed-only policy then gives them the LX's, as §6 says.
The host list starts with the slowest class, as the cluster's does, which is what PVM's
default is given.

With owners: the paper's baseline owners (N = 2, D = 1 s, Z = 5 s, scaled) on the SPARC20s
only (`DEFAULT_LOADED`). Owners on every host would leave 1 - U_ow the same everywhere and
every policy's choice unchanged; on the fastest hosts they leave a SPARC20 0.265 x 0.676 =
0.179 reference cores, below a SPARC5's 0.206, which only the workstation load/speed rule
is told (`PlacementState.available`): the one difference load can make to a placement.
"""
from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from experiments.studies.menasce_rao import measure
from experiments.studies.menasce_rao.measure import (Log, Planned, Prediction, kind_of, model_workstations,
                                                     network_of, predict, run_reps)
from experiments.studies.menasce_rao.paper import CLASSES
from experiments.studies.menasce_rao.sweeps import BASELINE_D_S, BASELINE_N, BASELINE_Z_S, Point
from experiments.studies.menasce_rao.files import load_graph
from scheduler.taskgraph.placement import POLICIES, get_policy
from testbed.cluster import Cluster
from testbed.spec import OwnerLoad

WORKSTATIONS = ("lx1", "lx2", "sp5a", "sp5b", "sp20a", "sp20b")
GRAPHS = ("wavefront", "small-then-large")
DEFAULT_LOADED = ("SPARC20",)


@dataclass(frozen=True)
class Case:
    graph: str
    policy: str
    owners: bool      # the baseline owners on the loaded classes' workstations


@dataclass(frozen=True)
class CaseResult:
    case: Case
    loaded: tuple[str, ...]          # the workstations with owners (empty without)
    prediction: Prediction
    measured_s: tuple[float, ...] = ()

    @property
    def median_s(self) -> float | None:
        return statistics.median(self.measured_s) if self.measured_s else None

    @property
    def error(self) -> float | None:
        m = self.median_s
        return None if m is None else (self.prediction.mc_s - m) / m


def loaded_classes(text: str) -> tuple[str, ...]:
    """'SPARC20' or 'LX,SPARC5' or 'all' -> the classes whose workstations get owners."""
    if text.strip().lower() == "all":
        return tuple(CLASSES)
    chosen = tuple(p.strip() for p in text.split(",") if p.strip())
    bad = [c for c in chosen if c not in CLASSES]
    if bad or not chosen:
        raise ValueError(f"--owners-on: {bad[0] if bad else 'nothing'!r} is not a class "
                         f"(known: {', '.join(CLASSES)}, or all)")
    return chosen


def cases(graphs: Sequence[str] = GRAPHS) -> list[Case]:
    return [Case(g, p, o) for g in graphs for o in (False, True) for p in POLICIES]


def owners_of(case: Case, loaded: Sequence[str]) -> dict[str, OwnerLoad]:
    if not case.owners:
        return {}
    o = Point("", BASELINE_N, BASELINE_D_S, BASELINE_Z_S).owners()
    return {n: o for n in WORKSTATIONS if kind_of(n) in loaded}


def predict_case(cluster: Cluster | Planned, case: Case, loaded: Sequence[str], *,
                 profiled: Mapping[str, float] | None = None, seed: int = 0) -> CaseResult:
    owners = owners_of(case, loaded)
    ws = model_workstations(cluster, WORKSTATIONS, owners)
    pred = predict(load_graph(case.graph), ws, get_policy(case.policy), network_of(cluster, WORKSTATIONS),
                   profiled=profiled, seed=seed)
    return CaseResult(case, tuple(sorted(owners)), pred)


def measure_case(cluster: Cluster, predicted: CaseResult, reps: int, loaded: Sequence[str], *, seed: int = 0,
                 log: Log = lambda _m: None) -> CaseResult:
    c = predicted.case
    label = f"{c.graph}, {c.policy}, {'owners' if c.owners else 'no owners'} (MC {predicted.prediction.mc_s:.2f} s)"
    times = run_reps(cluster, load_graph(c.graph), predicted.prediction.placement, owners_of(c, loaded), reps,
                     seed=seed, label=label, log=log)
    return CaseResult(c, predicted.loaded, predicted.prediction, times)


def estimate_s(predicted: Sequence[CaseResult], reps: int) -> float:
    """How long the live comparison takes, by the Monte Carlo means."""
    return measure.estimate_s([r.prediction.mc_s for r in predicted], reps)
