"""A live run beside its simulation: each job's measured times next to the simulated ones.

Two simulated figures stand beside each measured job: the model's run time for its profile on
the allocation it really got (`platform.run_time_s`, kept by the live server), and, when the same
workload was also served simulated to the same scheduler, that run's start, finish and
allocation. The schedules may part (a job that ran longer live moves every later decision), so
the rows are by job, not by position.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from experiments.batsim.outputs import JobRecord
from experiments.traces.intervals import format_intervals


@dataclass(frozen=True)
class Beside:
    job: str
    state: str  # measured
    alloc: str  # measured (the scheduler's live decision), Batsim's interval set
    start_s: float | None
    finish_s: float | None
    run_s: float | None  # measured: finish - start
    model_run_s: float | None  # simulated time of its profile on that allocation
    sim_state: str | None = None
    sim_alloc: str | None = None
    sim_start_s: float | None = None
    sim_finish_s: float | None = None

    @property
    def run_excess_s(self) -> float | None:
        """Measured run time beyond the model's (launch, exit and the host's own speed)."""
        if self.run_s is None or self.model_run_s is None:
            return None
        return self.run_s - self.model_run_s


def beside(live: Sequence[JobRecord], model_run_s: Mapping[str, float],
           simulated: Sequence[JobRecord] | None = None) -> list[Beside]:
    """One row per job of the live run, in its order."""
    sim = {r.id: r for r in simulated or ()}
    rows = []
    for r in live:
        s = sim.get(r.id)
        run = r.finish_s - r.start_s if r.finish_s is not None and r.start_s is not None else None
        rows.append(Beside(r.id, r.final_state, format_intervals(r.alloc), r.start_s, r.finish_s, run,
                           model_run_s.get(r.id),
                           s.final_state if s else None, format_intervals(s.alloc) if s else None,
                           s.start_s if s else None, s.finish_s if s else None))
    return rows


def makespans(rows: Sequence[Beside]) -> tuple[float, float | None]:
    """(measured, simulated) last finish; simulated None without a simulated run."""
    measured = max((r.finish_s for r in rows if r.finish_s is not None), default=0.0)
    sims = [r.sim_finish_s for r in rows if r.sim_finish_s is not None]
    return measured, (max(sims) if sims else None)


def _s(x: float | None) -> str:
    return "" if x is None else f"{x:.3f}"


def table_rows(rows: Sequence[Beside]) -> list[list[str]]:
    """The printed table's cells: job, state, allocation, measured start/finish/run, model run, excess,
    simulated allocation/start/finish."""
    return [[r.job, r.state, r.alloc, _s(r.start_s), _s(r.finish_s), _s(r.run_s), _s(r.model_run_s),
             _s(r.run_excess_s), r.sim_alloc or "", _s(r.sim_start_s), _s(r.sim_finish_s)] for r in rows]


COLUMNS = ("job", "state", "alloc", "start s", "finish s", "run s", "model run s", "excess s",
           "sim alloc", "sim start s", "sim finish s")

__all__ = ["COLUMNS", "Beside", "beside", "makespans", "table_rows"]
