"""A time-sharing spec (TOML): workstations, jobs with β or a demand, the round, the simulation setup.

Turned into the pure objects of scheduler/timeshare: the allocations (by hand, or the allocation
rule for jobs that give no β), the scheduling tables, the jobs and the simulation setup. Demands
are in reference-seconds (workloads/reference.py); a workstation of `speed_ref_cores` does that
many reference-seconds per second.
"""
from __future__ import annotations

from pathlib import Path
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from scheduler.model import Job, SevcikModel
from scheduler.timeshare.allocation import Allocation, AllocationRule, Demand, allocate
from scheduler.timeshare.manager import GlobalManager
from scheduler.timeshare.simulate import Clock, LocalPolicy, TimeshareResult, TimeshareSetup, simulate_timeshare
from scheduler.timeshare.slots import Distribution, SlotError
from scheduler.timeshare.tables import JobShare, Resync, ResyncPlan, WorkstationTable, build_tables
from experiments.studies.zhou_brent.owners import OwnerSetup
from testbed.config_loader import load_toml


class TimeshareSpecError(ValueError):
    """A bad time-sharing spec: one line naming the field."""


# How a job's ranks wait on MPI (workloads/polite.py's WaitMode, named again here so a spec is read without
# importing mpi4py): politely (test, then sleep: the other processes get the core) or spinning (the core
# stays busy: quick when the peers run at the same time, the slot wasted when they do not; Zhou & Brent §1).
Wait = Literal["polite", "spin"]
WAITS: tuple[str, ...] = get_args(Wait)


class _Strict(BaseModel):
    # NaN and infinity are never a valid number here: `speed_ref_cores = inf` (found by the fuzzing)
    # passed gt=0 and made every job's work 0, which the Sevcik model then refused naming no field.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class CgSize(_Strict):
    """A CG job's problem: its matrix order and its iteration count (workloads/cg.py)."""
    n: int = Field(gt=0, description="matrix order")
    iterations: int = Field(gt=0)


class JobEntry(_Strict):
    id: str
    demand_ref_s: float = Field(gt=0, description="T_d(1): the work on one reference core")
    # what a live run runs: the synthetic workload sized by demand_ref_s, or CG of the given size
    # (demand_ref_s then only feeds the tables' prediction and the simulation)
    workload: Literal["synthetic", "cg"] = "synthetic"
    cg: CgSize | None = None
    wait: Wait = "polite"  # `nowlab timeshare run --wait` sets every job's for one run
    overhead_s: float = Field(0.0, ge=0, description="Sevcik's alpha: fixed seconds at any p")
    per_processor_s: float = Field(0.0, ge=0, description="Sevcik's beta: seconds added per processor")
    arrival_s: float = Field(0.0, ge=0)
    beta: float | None = Field(None, gt=0, le=1, description="utilisation ratio; none: the allocation rule picks")
    workstations: tuple[str, ...] | None = None
    processors: int | None = Field(None, ge=1)

    @model_validator(mode="after")
    def _placement(self) -> "JobEntry":
        if self.workstations is not None and self.processors is not None:
            raise ValueError(f"job {self.id}: give workstations or processors, not both")
        if self.beta is None and (self.workstations is not None or self.processors is not None):
            raise ValueError(f"job {self.id}: workstations or processors need a beta (without one the rule picks both)")
        if self.beta is not None and self.workstations is None and self.processors is None:
            raise ValueError(f"job {self.id}: a beta needs workstations or processors")
        if (self.workload == "cg") != (self.cg is not None):
            raise ValueError(f"job {self.id}: workload cg needs cg = {{ n = ..., iterations = ... }}, "
                             f"and only cg takes it (workload: {self.workload})")
        return self


class AllocationEntry(_Strict):
    gamma: float = Field(2.0, gt=0)
    short_beta: float = Field(0.5, gt=0, le=1)
    short_t1_s: float = Field(60.0, gt=0)
    sequential_share: float = Field(0.0, ge=0, lt=1)


class SimulateEntry(_Strict):
    policy: LocalPolicy = LocalPolicy.DEDICATED
    resync: Resync = Resync.LOOSE
    every_rounds: int = Field(1, ge=1)
    horizon_s: float = Field(100_000.0, gt=0)
    drift: dict[str, float] = Field(default_factory=dict, description="clock rate error per workstation")
    offset_s: dict[str, float] = Field(default_factory=dict, description="clock error at t = 0 per workstation")
    owners: dict[str, int] = Field(default_factory=dict, description="CPU-bound owner processes per workstation")
    replan: bool = Field(False, description="the global manager replans at arrivals and ends (every job without beta)")


class OwnerEntry(_Strict):
    """Live owners (experiments/studies/zhou_brent/owners.py) on the workstations [simulate] owners names, as many
    processes as it gives: each thinks (exponential, mean think_s), then runs a command of exponential
    demand (mean demand_s: seconds of the workstation at its cap, alone; Menascé & Rao's D). The
    simulation then gives each owner the chance demand_s / (think_s + demand_s) of being ready."""
    think_s: float = Field(gt=0)
    demand_s: float = Field(gt=0)
    seed: int = 1


class TimeshareSpec(_Strict):
    name: str = "timeshare"
    title: str = ""
    workstations: tuple[str, ...] = Field(min_length=1)
    speed_ref_cores: float = Field(1.0, gt=0)
    round_s: float = Field(gt=0)
    max_round_s: float | None = Field(None, gt=0)
    distribution: Distribution = Distribution.PROPORTIONAL
    job: tuple[JobEntry, ...] = Field(min_length=1)
    allocation: AllocationEntry = AllocationEntry()
    simulate: SimulateEntry = SimulateEntry()
    owner: OwnerEntry | None = None

    @field_validator("workstations")
    @classmethod
    def _unique(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        if len(set(v)) != len(v):
            raise ValueError(f"names repeat in {list(v)}")
        return v

    @model_validator(mode="after")
    def _names(self) -> "TimeshareSpec":
        known = set(self.workstations)
        for i, j in enumerate(self.job):
            bad = [w for w in (j.workstations or ()) if w not in known]
            if bad:
                raise ValueError(f"job[{i}].workstations: unknown {bad} (known: {', '.join(self.workstations)})")
        if self.simulate.replan:
            fixed = [j.id for j in self.job if j.beta is not None]
            if fixed:
                raise ValueError(f"simulate.replan: the global manager allocates every job, but {fixed[0]} gives a beta")
        if self.owner is not None and not self.simulate.owners:
            raise ValueError("owner: live owners need [simulate] owners = { wsN = processes, ... } to say where")
        for field in ("drift", "offset_s", "owners"):
            bad = [w for w in getattr(self.simulate, field) if w not in known]
            if bad:
                raise ValueError(f"simulate.{field}: unknown workstation {bad[0]}")
        return self

    # the pure objects ---------------------------------------------------------------------
    def model_of(self, entry: JobEntry) -> SevcikModel:
        """T_d(p) in seconds on these workstations: Sevcik's W/p + alpha + beta p, W = demand / speed."""
        return SevcikModel(W=entry.demand_ref_s / self.speed_ref_cores, alpha=entry.overhead_s,
                           beta=entry.per_processor_s)

    def allocations(self) -> tuple[Allocation, ...]:
        """By hand where the spec gives β (processors: the least loaded first), the rule for the rest.

        With `simulate.replan`, the manager's plan as if every job were present: those that do
        not fit are left out (they would wait).
        """
        if self.simulate.replan:
            return self.manager().admit(tuple(e.id for e in self.job), {})
        order = {w: i for i, w in enumerate(self.workstations)}
        load = {w: 0.0 for w in self.workstations}
        rule = AllocationRule(**self.allocation.model_dump())
        fixed: dict[str, Allocation] = {}
        for e in self.job:
            if e.beta is None:
                continue
            hosts = e.workstations or tuple(sorted(sorted(self.workstations, key=lambda w: (load[w], order[w]))
                                                   [:e.processors], key=order.__getitem__))
            if len(hosts) > len(self.workstations):
                raise SlotError(f"job {e.id}: processors: {e.processors} > {len(self.workstations)} workstations")
            for w in hosts:
                load[w] += e.beta
            model = self.model_of(e)
            s_d = model.T(1) / model.T(len(hosts))
            fixed[e.id] = Allocation(JobShare(e.id, tuple(hosts), e.beta), model.T(1) <= rule.short_t1_s, s_d,
                                     e.beta * s_d, e.beta * s_d >= rule.gamma)
        ruled = [e for e in self.job if e.beta is None]
        chosen = allocate([Demand(e.id, self.model_of(e)) for e in ruled], self.workstations, rule, load) if ruled else ()
        by_id = {**fixed, **{a.share.job: a for a in chosen}}
        return tuple(by_id[e.id] for e in self.job)

    def tables(self, allocations: tuple[Allocation, ...] | None = None) -> dict[str, WorkstationTable]:
        allocations = self.allocations() if allocations is None else allocations
        return build_tables([a.share for a in allocations], self.workstations, self.round_s, self.distribution,
                            self.max_round_s)

    def manager(self) -> GlobalManager:
        """The global manager that replans this spec's jobs as they arrive and end."""
        return GlobalManager(self.workstations, {e.id: Demand(e.id, self.model_of(e)) for e in self.job},
                             AllocationRule(**self.allocation.model_dump()), self.round_s, self.distribution,
                             self.max_round_s)

    def simulate_run(self, setup: TimeshareSetup) -> TimeshareResult:
        """The simulation: fixed tables, or with `simulate.replan` the manager's, planned from the jobs at t = 0."""
        if not self.simulate.replan:
            return simulate_timeshare(self.tables(), self.jobs(), setup)
        manager = self.manager()
        first = manager.plan(tuple(e.id for e in self.job if e.arrival_s == 0.0), {})
        return simulate_timeshare(first, self.jobs(), setup, replan=manager.plan)

    def with_wait(self, wait: str) -> "TimeshareSpec":
        """This spec with every job waiting `wait`: a run's --wait, so one spec serves the polite and the
        spinning arm. A bad mode is one TimeshareSpecError line naming the field."""
        mode = wait.strip().lower()
        if mode not in WAITS:
            raise TimeshareSpecError(f"wait: unknown {wait!r} (known: {', '.join(WAITS)})")
        return self.model_copy(update={"job": tuple(e.model_copy(update={"wait": mode}) for e in self.job)})

    def live_owners(self) -> OwnerSetup | None:
        """The owners a live run starts ([owner] on the workstations of [simulate] owners), or None."""
        if self.owner is None:
            return None
        return OwnerSetup(dict(self.simulate.owners), self.owner.think_s, self.owner.demand_s, self.owner.seed)

    def jobs(self) -> list[Job]:
        return [Job(e.id, e.arrival_s, self.model_of(e)) for e in self.job]

    def setup(self, policy: LocalPolicy | None = None, resync: Resync | None = None,
              every_rounds: int | None = None) -> TimeshareSetup:
        s = self.simulate
        clocks = {w: Clock(s.drift.get(w, 0.0), s.offset_s.get(w, 0.0)) for w in set(s.drift) | set(s.offset_s)}
        owners = self.live_owners()  # interactive owners ([owner]) are ready only part of the time
        ready = {w: owners.ready for w in s.owners} if owners is not None else {}
        return TimeshareSetup(policy or s.policy, ResyncPlan(resync or s.resync, every_rounds or s.every_rounds),
                              clocks, dict(s.owners), s.horizon_s, ready)


def load_timeshare_spec(path: str | Path) -> TimeshareSpec:
    """The spec in a TOML file; any bad value is one TimeshareSpecError line naming the file and the field."""
    return load_toml(path, TimeshareSpec, TimeshareSpecError, kind="time-sharing spec")
