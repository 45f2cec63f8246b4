"""How long an experiment will take, from its class fits, before anything starts.

Each cell's stream goes through the engine with the profiled models (as the
prediction does); the cell lasts until its last job finishes, plus a fixed
cost per cell (executor start, the first launch). Profiling, calibration and
cluster start-up are added once. `nowlab run CONFIG --estimate` prints this
when every class has a cached profile for the config's cluster.
"""
from __future__ import annotations

from dataclasses import dataclass

from experiments.config import ExperimentConfig
from experiments.predict import ClassModel, predict

CELL_OVERHEAD_S = 5.0  # executor and first launch, per cell (measured: 3-6 s)
RUN_OVERHEAD_S = 30.0  # cluster up, calibration, teardown


@dataclass(frozen=True)
class CellPlan:
    policy: str
    rate: float
    replication: int
    jobs: int
    makespan_s: float
    utilisation: float  # processor-seconds busy / (P x makespan)


@dataclass(frozen=True)
class Plan:
    cells: list[CellPlan]
    profiling_s: float

    @property
    def total_s(self) -> float:
        return RUN_OVERHEAD_S + self.profiling_s + sum(c.makespan_s + CELL_OVERHEAD_S for c in self.cells)


def profiling_seconds(config: ExperimentConfig, models: dict[str, ClassModel]) -> float:
    prof = config.profile
    return sum(prof.reps * m.model(prof.demand).T(p) for m in models.values() for p in prof.procs)


def estimate(config: ExperimentConfig, models: dict[str, ClassModel], P: int) -> Plan:
    from experiments.runner import cells, stream_for

    out = []
    for policy, rate, rep in cells(config):
        stream = stream_for(config, rate, rep)
        jobs = predict(stream, models, policy, P)
        makespan = max(j.finish for j in jobs)
        busy = sum(j.mean_procs * j.execution for j in jobs)
        out.append(CellPlan(policy, rate, rep, len(jobs), makespan, busy / (P * makespan)))
    return Plan(out, profiling_seconds(config, models))
