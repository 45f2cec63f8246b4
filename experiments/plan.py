"""How long an experiment will take, from its class fits, before anything starts.

Each cell's stream goes through the engine with the profiled models (as the
prediction does); the cell lasts until its last job finishes, plus a fixed
cost per cell (executor start, the first launch). Profiling, calibration and
cluster start-up are added once. `nowlab run CONFIG --estimate` prints this
when every class has a cached profile for the config's cluster.

Before any profile exists, `work_models` gives a floor from what a class
states in reference units: a synthetic job of w reference-seconds computes
for at least w / (p·s) seconds on p workstations of speed s reference cores.
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


def work_models(config: ExperimentConfig, speed: float) -> dict[str, ClassModel]:
    """Compute-only models (alpha = beta = 0, no launch) of the classes whose work is in reference
    units (synthetic), on workstations of `speed` reference cores: W = work of a demand-1 job / speed."""
    if not (speed > 0 and speed != float("inf")):
        raise ValueError(f"speed: must be > 0 reference cores, got {speed}")
    out = {}
    for name, cls in config.classes.items():
        work = cls.work_ref_s(1.0)
        if work is not None:
            out[name] = ClassModel(name=name, W=work / speed, alpha=0.0, beta=0.0, pmax=cls.pmax,
                                   phases=cls.base_demand)
    return out


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
