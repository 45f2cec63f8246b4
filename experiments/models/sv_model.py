"""Sanjay & Vadhiyar's performance model, Eq. 1, and where it meets the monitor and selection.

T(N, P, cpu, bw) = a_comp f_comp(N) / (f_cpu(cpu) f_Pcomp(P)) + a_comm f_comm(N) / (f_bw(bw) f_Pcomm(P))

cpu is minAvgAvailCPU (a fraction) and bw minAvgAvailBW (here in Gbit/s) over the machines
and links a job uses: the slowest of each sets the pace of a tightly coupled job (§3). A
fitted model (`sv_regression.fit`) is stored by `sv_store` as JSON with its application and
the problem sizes it was trained on. This module does no I/O.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from experiments.models.sv_functions import LOAD, PROBLEM_SIZE, PROCESSORS, ROLES, shown
from scheduler.selection import SelectionProblem, SubsetSummary, Workstation
from testbed.load.monitor import Availability

GBIT = 1e9


class SvModelError(ValueError):
    """Bad model file or bad input to a model: one line naming the field."""


class SvModel(BaseModel):
    """Eq. 1 with its chosen functions and fitted coefficients."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    application: str = Field(min_length=1)
    problem_size_range: tuple[float, float]
    f_comp: str
    f_comm: str
    f_cpu: str
    f_bw: str
    f_pcomp: str
    f_pcomm: str
    a_comp_s: float = Field(ge=0)  # seconds per unit of f_comp, unloaded
    a_comm_s: float = Field(ge=0)
    mape: float | None = Field(default=None, ge=0)  # mean absolute percentage error on its training runs
    runs: int = Field(default=0, ge=0)

    @field_validator("f_comp", "f_comm", "f_cpu", "f_bw", "f_pcomp", "f_pcomm")
    @classmethod
    def _known(cls, value: str, info) -> str:  # type: ignore[no-untyped-def]
        known = ROLES[info.field_name]
        if value not in known:
            raise ValueError(f"unknown function {value!r}; known: {', '.join(known)}")
        return value

    @model_validator(mode="after")
    def _range(self) -> SvModel:
        lo, hi = self.problem_size_range
        if not (0 < lo <= hi):
            raise ValueError(f"problem_size_range: [{lo}, {hi}] is not 0 < low <= high")
        return self

    # ---- prediction ------------------------------------------------------------------------------

    def terms_s(self, problem_size: float | np.ndarray, procs: float | np.ndarray, min_avail_cpu: float | np.ndarray,
                min_avail_bw_bit_s: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The computation and communication terms of Eq. 1, in seconds."""
        n, p = np.asarray(problem_size, float), np.asarray(procs, float)
        cpu, bw = np.asarray(min_avail_cpu, float), np.asarray(min_avail_bw_bit_s, float) / GBIT
        comp = self.a_comp_s * PROBLEM_SIZE[self.f_comp](n) / (LOAD[self.f_cpu](cpu) * PROCESSORS[self.f_pcomp](p))
        comm = self.a_comm_s * PROBLEM_SIZE[self.f_comm](n) / (LOAD[self.f_bw](bw) * PROCESSORS[self.f_pcomm](p))
        return comp, comm

    def predict_s(self, problem_size: float, procs: int, min_avail_cpu: float, min_avail_bw_bit_s: float) -> float:
        self.check_problem_size(problem_size)
        if procs < 1:
            raise SvModelError(f"procs: {procs} is not >= 1")
        comp, comm = self.terms_s(problem_size, procs, min_avail_cpu, min_avail_bw_bit_s)
        return float(comp + comm)

    def check_problem_size(self, problem_size: float) -> None:
        if not problem_size > 0:
            raise SvModelError(f"problem_size: {problem_size:g} is not > 0")
        lo, hi = self.problem_size_range
        if not lo <= problem_size <= hi:
            raise SvModelError(f"problem_size: {problem_size:g} is outside the range {self.application} "
                               f"was trained on, [{lo:g}, {hi:g}]")

    def predictor(self, problem_size: float):  # -> scheduler.selection.problem.Predictor
        """Eq. 1 at one problem size, as the selection algorithms call it."""
        self.check_problem_size(problem_size)
        n = float(problem_size)
        fc, fm = PROBLEM_SIZE[self.f_comp], PROBLEM_SIZE[self.f_comm]
        comp_num = self.a_comp_s * float(fc(np.float64(n)))
        comm_num = self.a_comm_s * float(fm(np.float64(n)))
        f_cpu, f_bw, f_pc, f_pm = LOAD[self.f_cpu], LOAD[self.f_bw], PROCESSORS[self.f_pcomp], PROCESSORS[self.f_pcomm]

        def predict(s: SubsetSummary) -> float:
            p = np.float64(s.procs)
            return float(comp_num / (f_cpu(np.float64(s.min_avail_cpu)) * f_pc(p))
                         + comm_num / (f_bw(np.float64(s.min_avail_bw_bit_s / GBIT)) * f_pm(p)))

        return predict

    def describe(self) -> str:
        """The fitted functions, as Eq. 1 with numbers, and the training error."""
        comp = f"{self.a_comp_s:.4g}·{shown(self.f_comp, 'N')} / ({shown(self.f_cpu, 'cpu')}·{shown(self.f_pcomp, 'P')})"
        comm = f"{self.a_comm_s:.4g}·{shown(self.f_comm, 'N')} / ({shown(self.f_bw, 'bw')}·{shown(self.f_pcomm, 'P')})"
        lo, hi = self.problem_size_range
        return (f"{self.application}: T = {comp} + {comm}  [s; cpu a fraction, bw in Gbit/s; "
                f"N in {lo:g}..{hi:g}]; " + (f"mean abs error {100 * self.mape:.1f}% over {self.runs} runs"
                                             if self.mape is not None else "not fitted"))


# ---- from the monitor ------------------------------------------------------------------------------

def selection_problem(model: SvModel, problem_size: float, availability: Availability,
                      workstations: Sequence[str], speeds: dict[str, float] | None = None) -> SelectionProblem:
    """The selection problem for `workstations`, from the monitor's averages (AvgAvailCPU per
    workstation, AvgAvailBW per link) and Eq. 1 at `problem_size`."""
    speeds = speeds or {}
    missing = [w for w in workstations if w not in availability.avg_avail_cpu]
    if missing:
        raise SvModelError(f"availability: no AvgAvailCPU for workstation {missing[0]}")
    machines = [Workstation(w, min(1.0, float(availability.avg_avail_cpu[w])), speeds.get(w, 1.0))
                for w in workstations]
    try:
        return SelectionProblem.from_links(machines, availability.avg_avail_bw, model.predictor(problem_size))
    except ValueError as exc:
        if isinstance(exc, SvModelError):
            raise
        raise SvModelError(str(exc).replace("bw_bit_s: no available bandwidth", "availability: no AvgAvailBW")) from None


def predict_on(model: SvModel, problem_size: float, availability: Availability, workstations: Sequence[str]) -> float:
    """Eq. 1 for a job on exactly `workstations`, with the monitor's averages."""
    problem = selection_problem(model, problem_size, availability, workstations)
    return problem.predict_subset_s(range(problem.size))
