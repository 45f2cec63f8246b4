"""Experiment configs: one validated TOML file per experiment.

A config names everything a live comparison needs (the cluster, its load,
the workload classes, the policies, the arrival process and the claims of
the paper it reproduces) and nothing about how to run it, so it can be
checked, rendered and compared without starting a container. Every problem
is one `ConfigError` line naming the key, raised before anything starts.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from experiments import workload_args
from scheduler import user_policies
from scheduler.registry import get_policy
from testbed.config_loader import load_toml, validate
from testbed.spec import OwnerLoad
from workloads import synthetic_demand
from testbed.units import parse_rate
from workloads.reference import MATVEC_FLOP_PER_REF_S, mults_to_ref_seconds, ref_seconds_to_mults
from workloads import stencildata
from workloads.synthetic_demand import DEFAULT_MULTS

# The workload argument that sets a job's demand (its safe points are these
# phases or iterations, so demand and the engine's `phases` move together).
DEMAND_ARG = {"synthetic": "phases", "cg": "iterations", "stencil": "iterations"}
MODULE = {"synthetic": "workloads.synthetic", "cg": "workloads.cg", "stencil": "workloads.stencil"}
METRICS = ("response", "wait", "execution", "mean_procs", "preemptions", "sync_delay")
CG_DEFAULT_N = 500  # workloads.cg --n default (matrix order)


class ConfigError(ValueError):
    """A config problem, as one line naming the key."""


class _Strict(BaseModel):
    # NaN and infinity are never valid here (NaN passes every `> 0` check and fails much later)
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, allow_inf_nan=False)


class ClassSpec(_Strict):
    """A workload class: the program, its arguments and what a policy may assume."""

    workload: Literal["synthetic", "cg", "stencil"]
    args: dict[str, int | float | str] = Field(default_factory=dict,
                                               description="workload options without dashes, e.g. {n = 2000}")
    pmax: int | None = Field(None, ge=1, description="largest useful partition; None: from the Sevcik fit")

    # args may hold inf or NaN here: workload_args refuses them naming the option, as _work does for work
    model_config = ConfigDict(allow_inf_nan=True)

    @field_validator("args")
    @classmethod
    def _args(cls, v: dict[str, Any]) -> dict[str, Any]:
        for key in v:
            if key in workload_args.RUNNER_SET:
                raise ValueError(f"{key!r} is set by the runner")
        return v

    @model_validator(mode="after")
    def _work(self) -> "ClassSpec":
        """A synthetic class states its phase's demand as `mults` or as `work` (reference-seconds)."""
        if "work" not in self.args:
            return self
        if self.workload != "synthetic":
            raise ValueError(f"args.work: only the synthetic workload takes work, not {self.workload}")
        if "mults" in self.args:
            raise ValueError("args.work: give mults or work, not both")
        w = self.args["work"]
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not (math.isfinite(w) and w > 0):
            raise ValueError(f"args.work: must be a number > 0 (reference-seconds per phase), got {w!r}")
        return self

    @model_validator(mode="after")
    def _workload_takes_them(self) -> "ClassSpec":
        """Each arg as the workload's command line takes it (`phases = -3` is refused here, at load)."""
        workload_args.check(self.workload, self.args)
        return self

    @property
    def mults_per_phase(self) -> int | None:
        """A synthetic phase's multiplies, converted from `work` as the workload converts it (None: not synthetic)."""
        if self.workload != "synthetic":
            return None
        if "work" in self.args:
            return ref_seconds_to_mults(float(self.args["work"]))
        return int(self.args.get("mults", DEFAULT_MULTS))

    @property
    def work_per_phase_ref_s(self) -> float | None:
        """A safe point's compute work in reference-seconds: a synthetic phase's multiplies, or a CG
        iteration's matrix-vector product, 2·n² flop (its dot products and updates are O(n), left out)."""
        if self.workload == "cg":
            n = int(self.args.get("n", CG_DEFAULT_N))
            return 2.0 * n * n / MATVEC_FLOP_PER_REF_S
        if self.workload == "stencil":  # a Jacobi sweep, 5 flop a point (workloads/stencildata.py)
            return stencildata.work_per_iteration_ref_s(
                int(self.args.get("n", stencildata.DEFAULT_N)),
                int(self.args.get("residual_every", stencildata.DEFAULT_RESIDUAL_EVERY)))
        mults = self.mults_per_phase
        return None if mults is None else mults_to_ref_seconds(mults)

    def work_ref_s(self, demand: float = 1.0) -> float | None:
        """A job's compute work in reference-seconds: its whole phases times the work per phase."""
        per_phase = self.work_per_phase_ref_s
        return None if per_phase is None else self.units(demand) * per_phase

    @property
    def base_demand(self) -> int:
        """The class's mean demand, in phases or iterations."""
        value = self.args.get(DEMAND_ARG[self.workload])
        if value is None:
            defaults = {"synthetic": 50, "cg": 250, "stencil": stencildata.DEFAULT_ITERATIONS}  # the workloads' own
            return defaults[self.workload]
        return int(value)

    def argv(self, demand: float = 1.0) -> list[str]:
        """The workload command line for a job of `demand` times the mean (rounded to whole phases)."""
        args = dict(self.args)
        args[DEMAND_ARG[self.workload]] = self.units(demand)
        out = ["python3", "-m", MODULE[self.workload]]
        for key, value in args.items():
            out += [f"--{key.replace('_', '-')}", str(value)]
        return out

    def units(self, demand: float) -> int:
        """Whole phases or iterations for `demand` (at least one)."""
        return max(1, round(self.base_demand * demand))

    def realized(self, demand: float) -> float:
        """The demand a job actually gets once rounded to whole phases."""
        return self.units(demand) / self.base_demand


class SwfSource(_Strict):
    """A Parallel Workloads Archive trace instead of Poisson arrivals.

    Its first `arrivals.jobs` jobs keep their order, gaps and relative sizes;
    each cell rescales the gaps so the mean arrival rate is the cell's rate,
    and processors are scaled to the cluster (experiments/traces/swf.py).
    """

    path: Path
    classes: str | dict[str, tuple[int, int]] = Field(
        description="one class for every job, or class -> (lo, hi) requested processors in the trace")
    demand_from: Literal["run", "requested"] = "run"


class Arrivals(_Strict):
    """The open arrival process (Padhye & Dowdy §4): Poisson arrivals, one stream per cell."""

    rates: list[float] = Field(min_length=1, description="arrival rates, jobs per second")
    jobs: int = Field(ge=1, description="jobs per run, warm-up included")
    warmup: int = Field(0, ge=0, description="first jobs of each run left out of every statistic")
    replications: int = Field(1, ge=1)
    seed: int = 1
    demand: Literal["constant", "exponential"] = "constant"
    mix: dict[str, float] = Field(default_factory=dict, description="class name -> fraction of jobs")
    swf: SwfSource | None = Field(None, description="replay a trace instead of drawing Poisson arrivals")

    @field_validator("rates")
    @classmethod
    def _rates(cls, v: list[float]) -> list[float]:
        for r in v:
            if not (math.isfinite(r) and r > 0):
                raise ValueError(f"every rate must be > 0 jobs/s, got {r}")
        if len(set(v)) != len(v):
            raise ValueError("rates must be distinct")
        return v

    @field_validator("mix")
    @classmethod
    def _mix(cls, v: dict[str, float]) -> dict[str, float]:
        for name, w in v.items():
            if not (math.isfinite(w) and w > 0):
                raise ValueError(f"{name}: fraction must be > 0, got {w}")
        return v

    @model_validator(mode="after")
    def _warmup(self) -> "Arrivals":
        if self.warmup >= self.jobs:
            raise ValueError(f"warmup ({self.warmup}) must be below jobs ({self.jobs})")
        if not self.mix and self.swf is None:
            raise ValueError("give mix (Poisson arrivals) or swf (a trace)")
        if self.mix and self.swf is not None:
            raise ValueError("give mix or swf, not both")
        return self

    @property
    def class_names(self) -> list[str]:
        if self.swf is None:
            return list(self.mix)
        c = self.swf.classes
        return [c] if isinstance(c, str) else list(c)


class Traffic(_Strict):
    """Background traffic from src to dst at rate (bit/s), for the whole run."""

    src: str
    dst: str
    rate: int

    @field_validator("rate", mode="before")
    @classmethod
    def _rate(cls, v: Any) -> int:
        return parse_rate(v)


class Load(_Strict):
    owner: dict[str, OwnerLoad] = Field(default_factory=dict, description="workstation -> owner load (N, Z, D)")
    owner_mode: Literal["daemon", "schedule"] = Field(
        "daemon", description="daemon: owner processes run inside the workstations for the whole run, "
        "and predictions see their mean; schedule: each replication's owner bursts are rendered "
        "from the seed (experiments/owner_schedules.py), carried out live by freezing the "
        "workstation for each burst, and replayed "
        "burst for burst by the predictions")
    traffic: list[Traffic] = Field(default_factory=list)


class Profiling(_Strict):
    """Dedicated runs that give each class its Sevcik fit (skipped when a stored profile matches)."""

    procs: list[int] = Field(default_factory=lambda: [1, 2, 4, 8], min_length=2)
    reps: int = Field(2, ge=1)
    demand: float = Field(1.0, gt=0, description="profile jobs of this many times the mean demand")
    speed_basis: Literal["reference", "as-profiled"] = Field("reference", description=(
        "what a prediction takes the speed to be (experiments/models/speed_basis.py): the profile's "
        "reference speed, each run's times brought to it by the meter, or the speed its runs on as many "
        "workstations were delivered, their times as measured"))
    between_cells: list[int] = Field(default_factory=list, description=(
        "profile again between cells, one job alone after each cell, on these of procs in turn "
        "(experiments/profile_checks.py)"))

    @model_validator(mode="after")
    def _checks_profiled(self) -> "Profiling":
        extra = sorted(set(self.between_cells) - set(self.procs))
        if extra:
            raise ValueError(f"between_cells: {', '.join(map(str, extra))} not among procs {self.procs} "
                             "(a check is compared with the profile's own runs on as many workstations)")
        return self


class Overhead(_Strict):
    """Extra delay per launch and per resize (seconds), for experiments that want a slower system's costs.

    Applied alike live (the executor waits that long before each mpiexec
    launch or relaunch) and in the replay (added to launch and resize cost).
    """

    launch_s: float = Field(0.0, ge=0, allow_inf_nan=False, description="extra seconds before each job launch")
    resize_s: float = Field(0.0, ge=0, allow_inf_nan=False,
                            description="extra seconds before each relaunch onto a different set")


ClaimMetric = Literal["response", "wait", "execution", "mean_procs", "preemptions", "sync_delay"]
ClaimKind = Literal["below", "gap_grows", "peaks", "bound"]


class ClaimSpec(_Strict):
    """A claim of the paper, judged on the cells (experiments/reporting/cell_claims.py; kinds in experiments/README.md).

    below: `lower`'s mean metric is below `than`'s at every rate; with a magnitude
    (`at_least`, `up_to` or `about`, fractions of `than`'s figure, or seconds
    with gap = "absolute") it also says by how much. gap_grows: that gap
    increases from each rate to the next. peaks: `policy`'s metric is highest
    at a rate strictly inside the range. bound: `policy`'s metric stays below
    `under` (or above `over`) at every rate.
    """

    text: str
    quote: str = Field("", description="the paper's sentence the claim comes from")
    paper_value: str = Field("", description="the paper's number as it gives it, e.g. '17%'")
    kind: ClaimKind = "below"
    metric: ClaimMetric
    lower: str | None = None
    than: str | None = None
    policy: str | None = None
    rates: list[float] | None = None
    gap: Literal["relative", "increase", "absolute"] = "relative"
    at_least: float | None = Field(None, gt=0, allow_inf_nan=False)
    up_to: float | None = Field(None, gt=0, allow_inf_nan=False)
    about: float | None = Field(None, gt=0, allow_inf_nan=False)
    tolerance: float = Field(0.04, gt=0, allow_inf_nan=False,
                             description="about: how far ours may be from the paper's number (same unit as the gap)")
    under: float | None = Field(None, allow_inf_nan=False)
    over: float | None = Field(None, allow_inf_nan=False)

    @model_validator(mode="after")
    def _fields(self) -> "ClaimSpec":
        pair = self.kind in ("below", "gap_grows")
        if pair and (self.lower is None or self.than is None):
            raise ValueError(f"lower and than: a {self.kind} claim compares two policies")
        if not pair and self.policy is None:
            raise ValueError(f"policy: a {self.kind} claim is about one policy")
        if not pair and (self.lower is not None or self.than is not None):
            raise ValueError(f"lower/than: a {self.kind} claim names one policy (policy = ...)")
        if pair and self.policy is not None:
            raise ValueError(f"policy: a {self.kind} claim names lower and than")
        sizes = [k for k in ("at_least", "up_to", "about") if getattr(self, k) is not None]
        if sizes and self.kind != "below":
            raise ValueError(f"{sizes[0]}: only a below claim carries a magnitude")
        if len(sizes) > 1:
            raise ValueError(f"{sizes[1]}: give one of at_least, up_to, about")
        if self.kind == "bound" and (self.under is None) == (self.over is None):
            raise ValueError("under/over: a bound claim gives exactly one of them")
        if self.kind != "bound" and (self.under is not None or self.over is not None):
            raise ValueError(f"under/over: only a bound claim takes them, not {self.kind}")
        if self.kind in ("gap_grows", "peaks") and self.rates is not None and len(self.rates) < 3 - (
                self.kind == "gap_grows"):
            raise ValueError(f"rates: a {self.kind} claim needs at least {3 - (self.kind == 'gap_grows')} rates")
        return self

    @property
    def policies(self) -> list[str]:
        return [p for p in (self.lower, self.than, self.policy) if p is not None]


class Targets(_Strict):
    response_rel: float = Field(0.10, gt=0, description="mean response per cell, relative error")
    execution_rel: float = Field(0.05, gt=0, description="median execution per cell, relative error")


class ExperimentConfig(_Strict):
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    title: str
    paper: str = ""
    minutes: float = Field(gt=0, description="how long a run takes on the 2-core reference machine")
    cluster: Path = Field(description="cluster spec (TOML), relative to this file")
    # Set by `nowlab run --speed-scale` (and the demo's fit) for a host too slow for the spec's
    # speeds (testbed.speed_fit); stored with the run, so a resume keeps it and the report says it.
    speed_scale: float = Field(1.0, gt=0, le=1.0, description="every workstation speed (reference cores) "
                                                              "times this: the cluster, uniformly slower")
    work_follows_speed: bool = Field(
        False, description="with a speed_scale below 1, every class's work is scaled by it too (synthetic "
                           "work or mults per phase, CG and stencil iterations), so a job takes as long as "
                           "at the spec's speeds: a run with a time limit (the demo) keeps it on a slow host")
    load: Load = Field(default_factory=Load)
    classes: dict[str, ClassSpec] = Field(alias="class", min_length=1)
    policies: list[str] = Field(min_length=1)
    arrivals: Arrivals
    profile: Profiling = Field(default_factory=Profiling)
    on_failure: Literal["stop", "continue"] = Field(
        "stop", description="a workstation dies: stop (resume later) or go on without it")
    reconfig_default_s: float = Field(2.0, ge=0, description="resize cost when no resize was ever measured")
    overhead: Overhead = Field(default_factory=Overhead)
    targets: Targets = Field(default_factory=Targets)
    claims: list[ClaimSpec] = Field(default_factory=list, alias="claim")

    @field_validator("policies")
    @classmethod
    def _policies(cls, v: list[str]) -> list[str]:
        out = []
        for name in v:
            spec = name.strip()
            try:  # a name becomes its canonical spelling; the user's FILE.py:CLASS or module:CLASS stays
                if not user_policies.is_code_spec(spec):
                    spec = get_policy(spec).name
                elif not _relative_file(spec):  # a relative file is loaded from the config's folder (_relative_to)
                    get_policy(spec)
            except (KeyError, ValueError) as exc:
                raise ValueError(str(exc)) from None
            out.append(spec)
        if len(set(out)) != len(out):
            raise ValueError("a policy is named twice")
        return out

    @model_validator(mode="after")
    def _cross(self) -> "ExperimentConfig":
        unknown = sorted(set(self.arrivals.class_names) - set(self.classes))
        if unknown:
            where = "arrivals.mix" if self.arrivals.swf is None else "arrivals.swf.classes"
            raise ValueError(f"{where} names unknown class {unknown[0]!r} (classes: {', '.join(self.classes)})")
        for i, claim in enumerate(self.claims):
            for who in claim.policies:
                if who not in self.policies:
                    raise ValueError(f"claim[{i}] names {who!r}, which is not among the policies")
            for r in claim.rates or []:
                if r not in self.arrivals.rates:
                    raise ValueError(f"claim[{i}] names rate {r}, which is not among arrivals.rates")
            if claim.kind in ("gap_grows", "peaks") and claim.rates is None and len(self.arrivals.rates) < 3 - (
                    claim.kind == "gap_grows"):
                raise ValueError(f"claim[{i}]: a {claim.kind} claim needs more arrival rates")
        return self

    def with_work_scaled(self) -> "ExperimentConfig":
        """This config with each class's work times its speed_scale, when `work_follows_speed`
        asks for it and the scale is below 1 (else itself). What is scaled is the work a job
        does in reference units: a synthetic phase's `work` (or `mults`), CG's and the
        stencil's `iterations` (their defaults when not given); safe points, data sizes and
        pmax stay, so resizes cost what they cost at full scale. Stored with the run: its
        profiles, predictions and report are of the scaled classes."""
        k = self.speed_scale
        if not self.work_follows_speed or k >= 1.0:
            return self
        classes = {}
        for name, c in self.classes.items():
            args = dict(c.args)
            if c.workload == "synthetic":
                if "work" in args:
                    args["work"] = round(float(args["work"]) * k, 6)
                else:
                    args["mults"] = max(1, round(int(args.get("mults", synthetic_demand.DEFAULT_MULTS)) * k))
            else:
                default = workload_args.MODELS[c.workload].model_fields["iterations"].default
                args["iterations"] = max(1, round(int(args.get("iterations", default)) * k))
            classes[name] = c.model_copy(update={"args": args})
        return self.model_copy(update={"classes": classes})

    def dump(self) -> dict[str, Any]:
        """JSON-able, with the keys as written in TOML (stored with every result)."""
        return self.model_dump(mode="json", by_alias=True)


def from_dict(raw: dict[str, Any], *, base: Path = Path(".")) -> ExperimentConfig:
    """Validate a raw mapping; paths in it are taken relative to `base`."""
    return _relative_to(validate(ExperimentConfig, raw, ConfigError), base)


def _relative_to(config: ExperimentConfig, base: Path) -> ExperimentConfig:
    moved = {name: _policy_at(name, base, i) for i, name in enumerate(config.policies)}
    moved = {old: new for old, new in moved.items() if old != new}
    if moved:
        claims = [c.model_copy(update={k: moved[getattr(c, k)] for k in ("lower", "than", "policy")
                                       if getattr(c, k) in moved}) for c in config.claims]
        config = config.model_copy(update={"policies": [moved.get(p, p) for p in config.policies],
                                           "claims": claims})
    if not config.cluster.is_absolute():
        config = config.model_copy(update={"cluster": (base / config.cluster).resolve()})
    swf = config.arrivals.swf
    if swf is not None and not swf.path.is_absolute():
        swf = swf.model_copy(update={"path": (base / swf.path).resolve()})
        config = config.model_copy(update={"arrivals": config.arrivals.model_copy(update={"swf": swf})})
    return config


def _relative_file(spec: str) -> bool:
    """A `FILE.py:CLASS` policy whose file is given relative (to the config's folder)."""
    return (user_policies.is_code_spec(spec) and user_policies.is_file_spec(spec)
            and not Path(spec.rpartition(":")[0].strip()).expanduser().is_absolute())


def _policy_at(name: str, base: Path, i: int) -> str:
    """A `FILE.py:CLASS` policy with its file taken relative to the config (absolute, so every cell,
    the predictions and a later `nowlab report` load the same file), checked to load."""
    if not _relative_file(name):
        return name
    target, _, cls_name = name.rpartition(":")
    spec = f"{(base / Path(target.strip()).expanduser()).resolve()}:{cls_name.strip()}"
    try:
        get_policy(spec)
    except ValueError as exc:
        raise ConfigError(f"policies[{i}]: {exc}") from None
    return spec


def load(path: str | Path) -> ExperimentConfig:
    """Read and validate a config; the cluster spec is checked too (it must load)."""
    path = Path(path)
    config = _relative_to(load_toml(path, ExperimentConfig, ConfigError), path.parent)
    check_cluster(config, path)
    return config


def check_cluster(config: ExperimentConfig, where: Path | str = "config") -> None:
    """The spec must load and every workstation the load names must be in it."""
    from testbed.spec import SpecError, load as load_spec

    try:
        spec = load_spec(config.cluster)
    except SpecError as exc:
        raise ConfigError(f"{where}: cluster: {exc}") from None
    names = set(spec.names)
    if config.arrivals.swf is not None and not config.arrivals.swf.path.is_file():
        raise ConfigError(f"{where}: arrivals.swf.path: no such file {config.arrivals.swf.path}")
    for ws in config.load.owner:
        if ws not in names:
            raise ConfigError(f"{where}: load.owner.{ws}: no such workstation in {config.cluster.name}")
    for i, t in enumerate(config.load.traffic):
        for key in ("src", "dst"):
            if getattr(t, key) not in names:
                raise ConfigError(f"{where}: load.traffic[{i}].{key}: no such workstation {getattr(t, key)!r}")
        if t.src == t.dst:
            raise ConfigError(f"{where}: load.traffic[{i}]: src and dst are the same workstation")
