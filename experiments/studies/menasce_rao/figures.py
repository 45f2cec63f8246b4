"""Menascé & Rao's Figs. 4, 5 and 6, live: the wave front on three workstations of each class
against the owners' D, N and Z (`sweeps.py`), measured and predicted.

Each point is predicted first (TGS with eq. 7 at the spec's speeds and at the task-profiled
ones, and the Monte Carlo of Fig. 2), every point before any live run, so the host's CPU is
quiet while the graph runs; then run `reps` times with the point's owners on the class's three
workstations (PVM's default placement, as Tables 2 and 3).
"""
from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from experiments.studies.menasce_rao import measure
from experiments.studies.menasce_rao.measure import (Log, Planned, Prediction, model_workstations, network_of,
                                                     predict, run_reps)
from experiments.studies.menasce_rao.owner_use import OwnerUse, mean_of_quota, mean_utilisation, model_utilisation
from experiments.studies.menasce_rao.paper import CLASSES
from experiments.studies.menasce_rao.sweeps import Point
from experiments.studies.menasce_rao.tables import POLICY
from experiments.studies.menasce_rao.files import load_graph
from scheduler.taskgraph.placement import get_policy
from testbed.cluster import Cluster

GRAPH = "wavefront"


@dataclass(frozen=True)
class PointResult:
    point: Point
    workstations: tuple[str, ...]
    prediction: Prediction
    measured_s: tuple[float, ...] = ()   # one makespan per repetition; () when not run live
    owner_use: tuple[OwnerUse, ...] = ()  # each workstation's owners over each repetition

    @property
    def owner_u_model(self) -> float:
        """The owners' utilisation of each workstation by M/M/1//N."""
        return model_utilisation(self.point.owners())

    @property
    def owner_u_measured(self) -> float | None:
        """Their measured share of the quota (eq. 7's U), the mean over workstations and repetitions;
        of the nominal cap where the meter recorded no quota (None: not run)."""
        if not self.owner_use:
            return None
        of_quota = mean_of_quota(self.owner_use)
        return mean_utilisation(self.owner_use) if of_quota is None else of_quota

    @property
    def median_s(self) -> float | None:
        return statistics.median(self.measured_s) if self.measured_s else None

    @property
    def error(self) -> float | None:
        """(Monte Carlo - measured) / measured: the model of §5 is the whole loop of Fig. 2."""
        m = self.median_s
        return None if m is None else (self.prediction.mc_s - m) / m


def predict_point(cluster: Cluster | Planned, p: Point, *, profiled: Mapping[str, float] | None = None,
                  seed: int = 0) -> PointResult:
    names = CLASSES[p.kind]
    owners = {n: p.owners() for n in names}
    ws = model_workstations(cluster, names, owners)
    pred = predict(load_graph(GRAPH), ws, get_policy(POLICY), network_of(cluster, names), profiled=profiled,
                   seed=seed)
    return PointResult(p, tuple(names), pred)


def measure_point(cluster: Cluster, predicted: PointResult, reps: int, *, seed: int = 0,
                  log: Log = lambda _m: None) -> PointResult:
    """The predicted point run live: its owners on its workstations, `reps` runs."""
    p = predicted.point
    label = f"{p.kind}, N = {p.n}, D = {p.d_s:g} s, Z = {p.z_s:g} s (MC {predicted.prediction.mc_s:.2f} s)"
    uses: list[OwnerUse] = []
    times = run_reps(cluster, load_graph(GRAPH), predicted.prediction.placement,
                     {n: p.owners() for n in predicted.workstations}, reps, seed=seed, label=label, log=log,
                     uses=uses)
    return PointResult(p, predicted.workstations, predicted.prediction, times, tuple(uses))


def estimate_s(predicted: Sequence[PointResult], reps: int) -> float:
    """How long the live sweep takes, by the Monte Carlo means."""
    return measure.estimate_s([r.prediction.mc_s for r in predicted], reps)
