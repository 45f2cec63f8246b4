"""What a study is, validated before anything runs.

A spec only *describes* the study (Table 3 and the Section 6 procedure); the
``study`` module executes it.  Keeping the two apart lets the tests and the
``--quick`` preset change run lengths without touching the procedure.

Units: times are in the paper's unit, thousands of seconds (ks); loads are
fractions of the capacity of the P processors (0.9 means 90%).
"""
from __future__ import annotations

import math
from typing import Annotated

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from experiments.studies.anastasiadis_sevcik import paper
from scheduler.policies.dif import VARIANTS, DifReading, same_as
from testbed.config_loader import one_line

#: The DIF readings run beside the default one unless told otherwise (``scheduler.policies.dif``).
DIF_VARIANTS: tuple[str, ...] = tuple(r.value for r in VARIANTS)


class WorkloadSpec(BaseModel):
    """One workload of Section 5.2: the speedup exponents mu its jobs draw from.

    mu = inf means alpha = 0 (good speedup, WK1).  A workload with several mu
    values (WK4) gives each job one of them with equal probability.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    mus: tuple[Annotated[float, Field(gt=0)], ...] = Field(min_length=1)


#: The four workloads of Section 5.2.
WORKLOADS: dict[str, WorkloadSpec] = {
    "WK1": WorkloadSpec(name="WK1", mus=(math.inf,)),
    "WK2": WorkloadSpec(name="WK2", mus=(0.4,)),
    "WK3": WorkloadSpec(name="WK3", mus=(0.2,)),
    "WK4": WorkloadSpec(name="WK4", mus=(0.2, 0.4, math.inf)),
}


class GeneratorSpec(BaseModel):
    """Table 3's job characteristics, independent of the workload.

    ``work_branches`` are the (probability, mean in ks) pairs of the two-stage
    hyperexponential F(W) = 0.125(1 - e^{-W/101}) + 0.875(1 - e^{-W/1.3}).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    processors: int = Field(32, gt=0)
    work_branches: tuple[tuple[float, float], ...] = ((0.125, 101.0), (0.875, 1.3))
    pmax_choices: tuple[Annotated[int, Field(gt=1)], ...] = (4, 16, 64)

    @field_validator("work_branches")
    @classmethod
    def _probabilities_sum_to_one(cls, v: tuple[tuple[float, float], ...]) -> tuple[tuple[float, float], ...]:
        if not v or any(p <= 0 or m <= 0 for p, m in v):
            raise ValueError("each branch needs probability > 0 and mean > 0 ks")
        if abs(sum(p for p, _ in v) - 1.0) > 1e-9:
            raise ValueError(f"branch probabilities sum to {sum(p for p, _ in v)}, not 1")
        return v


class StudySpec(BaseModel):
    """The whole study: which cells, how long each replication, how precise.

    Defaults are the paper's Section 6 procedure.  ``saturation_extra_jobs`` is
    the paper's 10,000: a cell is saturated if that many further jobs arrive
    before the measured jobs have all finished.  ``dif_variants`` names the
    other readings of DIF whose ASP(2), AP1(2), AEP(2) run beside the
    policies (as ASP(2)-FREE ...).  ``max_replications`` is a cap high enough
    that the heavy-tailed 90% cells reach the 5% target (a few hundred
    replications for DYN-EQUI on WK2, perhaps a thousand); it only bounds a run
    that goes wrong.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    generator: GeneratorSpec = GeneratorSpec()
    workloads: tuple[str, ...] = tuple(WORKLOADS)
    loads: tuple[Annotated[float, Field(gt=0, le=1.5)], ...] = paper.LOADS
    policies: tuple[str, ...] = paper.POLICIES
    jobs_per_replication: int = Field(20_000, gt=0)
    warmup_jobs: int = Field(500, ge=0)
    saturation_extra_jobs: int = Field(10_000, gt=0)
    confidence: float = Field(0.95, gt=0, lt=1)
    target_rel_halfwidth: float = Field(0.05, gt=0)
    min_replications: int = Field(3, ge=2)
    max_replications: int = Field(2000, ge=2)
    seed: int = Field(1996, ge=0)
    workers: int = Field(2, ge=1)
    dif_variants: tuple[str, ...] = DIF_VARIANTS

    @field_validator("workloads")
    @classmethod
    def _known_workloads(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [w for w in v if w not in WORKLOADS]
        if unknown or not v:
            raise ValueError(f"unknown workload(s) {unknown}; choose from {list(WORKLOADS)}")
        return v

    @field_validator("policies")
    @classmethod
    def _has_baseline(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        # Every result is normalised to DYN-EQUI, so it must be in the study.
        if "DYN-EQUI" not in v:
            raise ValueError("must include DYN-EQUI, the normalisation baseline")
        return v

    @field_validator("dif_variants")
    @classmethod
    def _known_readings(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        known = [r.value for r in VARIANTS]
        unknown = [x for x in v if x not in known]
        if unknown:
            raise ValueError(f"unknown DIF reading(s) {unknown}; choose from {known} (the default, "
                             f"{DifReading.GREEDY_TOTAL.value}, always runs)")
        return tuple(dict.fromkeys(v))

    @model_validator(mode="after")
    def _consistent_lengths(self) -> StudySpec:
        if self.warmup_jobs >= self.jobs_per_replication:
            raise ValueError(f"warmup_jobs ({self.warmup_jobs}) must be < jobs_per_replication "
                             f"({self.jobs_per_replication})")
        if self.min_replications > self.max_replications:
            raise ValueError(f"min_replications ({self.min_replications}) must be <= "
                             f"max_replications ({self.max_replications})")
        return self

    @property
    def cell_policies(self) -> tuple[str, ...]:
        """Every policy run: ``policies``, then ASP(2), AP1(2), AEP(2) under each DIF variant (a variant that
        repeats another's rounds exactly, ASP(2)-SHARE and AP1(2)-SHARE, is run once under that other's name)."""
        extra = [f"{b}(2){same_as(b, DifReading(r)).suffix}" for r in self.dif_variants for b in ("ASP", "AP1", "AEP")]
        return tuple(dict.fromkeys([*self.policies, *extra]))

    @property
    def measured_jobs(self) -> int:
        """Jobs whose statistics count in each replication (the paper's 19,500)."""
        return self.jobs_per_replication - self.warmup_jobs


def full_spec(**overrides: object) -> StudySpec:
    """The paper's procedure at full scale (20,000 jobs, 5% half-width)."""
    return build_spec(**overrides)


def quick_spec(**overrides: object) -> StudySpec:
    """Same cells and outputs with ~7x fewer jobs and a fixed two replications.

    The confidence interval is still computed and reported, but not chased,
    so the run time is bounded.  The saturation window keeps the paper's
    10,000 additional jobs: it is really a *time* window (about 5,600 ks at
    90% load) that must outlast the run of the largest jobs (W up to ~800 ks
    on one processor); scaled down with the job count it declared stable
    policies saturated.  Only saturated cells pay for the long window, since
    unsaturated ones simulate just the jobs that can affect the measured ones.
    """
    base: dict[str, object] = {"jobs_per_replication": 3_000, "warmup_jobs": 300,
                               "saturation_extra_jobs": 10_000, "min_replications": 2,
                               "max_replications": 2}
    base.update(overrides)
    return build_spec(**base)


def build_spec(**fields: object) -> StudySpec:
    """Build a spec, turning pydantic's multi-line error into one clear line."""
    try:
        return StudySpec(**fields)
    except ValidationError as exc:
        raise SpecError(one_line_error(exc)) from None


class SpecError(ValueError):
    """Bad study input; the message is one line naming the offending field."""


def one_line_error(exc: ValidationError) -> str:
    """'invalid study spec: loads[0]: Input should be greater than 0, got -0.1'."""
    return "invalid study spec: " + one_line(exc, StudySpec)
