"""How long an experiment will take, before anything starts (`nowlab run CONFIG --estimate`).

Each cell's stream goes through the engine with the class models, as the
prediction does (owners leave 1 - U_ow of their workstation, M/M/1//N); a
cell lasts until its last job finishes, plus a small cost per cell. Cluster
start-up with calibration, the dedicated profiling of every class without a
cached profile (its runs alone on each p, then its resize runs, through the
same engine) and teardown with the report are added once.

The class models come from the cached profiles (keyed exactly as the runner
keys them, `runner.profile_keys`) when every class has one. Otherwise from
each class's work in reference-seconds (`work_models`) at the workstations'
speed: no launch, coupling or resize cost, so the estimate is a floor.

The fixed costs were measured on the demo's stored runs (8 workstations,
now8, 23 Nov 2026; `plan_vs_real` recomputes the comparison from any run):
- start-up to the calibration stored: 20.7, 20.7, 21.7 s;
- a cell's wall time less its last job's finish (executor start, the last
  segment's artifacts): 0.17-0.48 s on the resident-pool launch path
  (0.41-1.2 s on the older per-job mpiexec path);
- the last cell to the report written: 1.8, 3 and 2.8 s;
- each profiling run's executor and bookkeeping around the job
  (`PROFILE_RUN_S`): the synthetic class's profiling span less the engine's
  runs, over its 10 runs: 0.04 and 0.64 s. (CG's gives -0.6 and -1.9 s: its
  profiled resize fit prices a resize at 2-4 s where the runs took 0.7-2.3 s,
  an error of the fit, not of the overhead.)

Checked the same way (each run's estimate from its own stored profiles, to
its last cell): 16.2 against 16.4 min (-1%, old launch path, profiled),
15.3 against 15.1 (+1%, profiled), 10.4 against 11.0 (-5%, cached profiles;
other helpers shared the CPU). Per cell -20% to +0.4%, median |error| 1-5%;
the cells at 0.25 jobs/s run long (-5% to -20%), as the prediction does.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

from experiments.config import ExperimentConfig
from testbed.load.model import available_fraction
from experiments.predict import ClassModel, predict
from scheduler.engine import PolicyError
from scheduler.jobs import SubmittedJob
from scheduler.policy import Policy
from testbed.spec import ClusterSpec
from workloads.reference import MULTIPLY_PER_REF_S

SETUP_S = 21.0  # cluster up and calibration, to the first profile or cell (measured 20.7-21.7 s)
CELL_OVERHEAD_S = 0.3  # a cell's wall time beyond its last job's finish (measured 0.17-0.48 s)
TEARDOWN_S = 3.0  # last cell to the report written: cluster down, predictions, report (measured 1.8-3 s)
PROFILE_RUN_S = 0.35  # per profiling run, beyond the job's launch-to-exit (fitted, see module docstring)

# Reference cores of the fastest host core seen on this project's machines (2.36e8 multiplies/s at
# a 0.2-core cap, i.e. 1.18e9 per CPU-second, workloads/reference.py; the 23 Nov machines gave
# 4.2e8-7.3e8): a raw cpu cap of c cores gives at most c times this, so the floor stays a floor.
FASTEST_CORE_REF = 2.36e8 / 0.2 / MULTIPLY_PER_REF_S

Source = Literal["profiles", "floor"]


@dataclass(frozen=True)
class CellPlan:
    policy: str
    rate: float  # jobs/s
    replication: int
    jobs: int
    makespan_s: float  # first arrival's clock to the last job's finish
    utilisation: float  # processor-seconds busy / (P x makespan)

    @property
    def total_s(self) -> float:
        return self.makespan_s + CELL_OVERHEAD_S


@dataclass(frozen=True)
class Plan:
    """The estimate, broken down; `source` says where the class models came from."""

    source: Source
    detail: str  # which profiles, or the speed of the floor
    cells: list[CellPlan]
    profiling_s: dict[str, float]  # class -> seconds of profiling still to do (none when cached)
    setup_s: float = SETUP_S
    teardown_s: float = TEARDOWN_S
    checks_s: float = 0.0  # the profile checks after the cells (`[profile] between_cells`)

    @property
    def cells_s(self) -> float:
        return sum(c.total_s for c in self.cells)

    @property
    def total_s(self) -> float:
        return self.setup_s + sum(self.profiling_s.values()) + self.cells_s + self.checks_s + self.teardown_s

    @property
    def label(self) -> str:
        return "from profiles" if self.source == "profiles" else "floor from reference work"


def check_speed(speed: float, field: str = "speed") -> float:
    if not (isinstance(speed, (int, float)) and 0 < speed < float("inf")):
        raise ValueError(f"{field}: must be > 0 reference cores, got {speed}")
    return float(speed)


def work_models(config: ExperimentConfig, speed: float) -> dict[str, ClassModel]:
    """Compute-only models (alpha = beta = 0, no launch) of the classes whose work is in reference
    units, on workstations of `speed` reference cores: W = work of a demand-1 job / speed."""
    check_speed(speed)
    out = {}
    for name, cls in config.classes.items():
        work = cls.work_ref_s(1.0)
        if work is not None:
            out[name] = ClassModel(name=name, W=work / speed, alpha=0.0, beta=0.0, pmax=cls.pmax,
                                   phases=cls.base_demand)
    return out


def reference_speeds(spec: ClusterSpec) -> dict[str, float]:
    """Each workstation's speed in reference cores: its speed, or for a raw cpu cap the most that
    cap can give (cores x the fastest core seen, `FASTEST_CORE_REF`), so the floor stays a floor."""
    return {ws: spec.speed(ws) if spec.speed(ws) is not None else spec.cpu(ws) * FASTEST_CORE_REF
            for ws in spec.names}


def owner_speeds(spec: ClusterSpec) -> list[float]:
    """What owners leave of each workstation (1 - U_ow, M/M/1//N), in the spec's order."""
    out = []
    for ws in spec.names:
        o = spec.owner(ws)
        out.append(available_fraction(o.n, o.z, o.d) if o is not None and o.n > 0 else 1.0)
    return out


Cell = tuple[str, float, int]  # policy, rate (jobs/s), replication


def cell_plans(config: ExperimentConfig, models: dict[str, ClassModel], P: int,
               speeds: list[float] | None = None, streams: dict[Cell, list[SubmittedJob]] | None = None,
               availability: list[float] | None = None) -> list[CellPlan]:
    """Every cell's stream through the engine, in the runner's order; `streams` gives the ones
    already drawn (a stored run's), the others are drawn as the runner draws them."""
    from experiments import owner_schedules
    from experiments.runner import cells, cluster_spec, stream_for

    by_schedule = owner_schedules.in_use(config)
    hosts = cluster_spec(config).names[:P] if by_schedule else []
    out = []
    for policy, rate, rep in cells(config):
        stream = (streams or {}).get((policy, rate, rep)) or stream_for(config, rate, rep)
        if by_schedule:  # the replication's own bursts, as the replay will see them
            jobs = predict(stream, models, policy, P, speeds=speeds,
                           schedule=owner_schedules.for_engine(config, rep, hosts))
        else:
            jobs = predict(stream, models, policy, P, speeds=speeds, availability=availability)
        makespan = max(j.finish_s for j in jobs)
        busy = sum(j.mean_procs * j.execution_s for j in jobs)
        out.append(CellPlan(policy, rate, rep, len(jobs), makespan, busy / (P * makespan)))
    return out


def profile_run_seconds(config: ExperimentConfig, model: ClassModel, cls_name: str, p: int,
                        policy: str | Policy = "RA") -> float:
    """One dedicated profile run of the class (its demand as profiled) on p workstations under
    `policy` (RA: the job alone; a `ResizeScript`: its resizes), teardown and the run's own cost
    included."""
    job = [SubmittedJob(0, cls_name, 0.0, config.classes[cls_name].realized(config.profile.demand))]
    (o,) = predict(job, {cls_name: dataclasses.replace(model, pmax=p)}, policy, p)
    return o.finish_s + model.teardown_s + PROFILE_RUN_S


def profiling_seconds(config: ExperimentConfig, model: ClassModel, cls_name: str) -> float:
    """One class's dedicated profile, as `profiles.measure` runs it: per repetition the job alone
    on each p of procs, then one job resized by `ResizeScript` through `resize_sizes(procs)`."""
    from experiments.profiles import ResizeScript, resize_sizes

    prof = config.profile
    sizes = resize_sizes(prof.procs)
    one_rep = sum(profile_run_seconds(config, model, cls_name, p) for p in prof.procs)
    one_rep += profile_run_seconds(config, model, cls_name, max(sizes), ResizeScript(sizes))
    return prof.reps * one_rep


def checks_seconds(config: ExperimentConfig, models: dict[str, ClassModel], cells: int) -> float:
    """The profile checks a run of `cells` cells takes, one after each (experiments/profile_checks.py),
    each a job alone as `profiling_seconds` prices one."""
    from experiments.profile_checks import next_check

    total = 0.0
    for k in range(cells):
        nxt = next_check(list(config.classes), config.profile.between_cells, k)
        if nxt is None:
            return 0.0
        name, p = nxt
        total += profile_run_seconds(config, models[name], name, p)
    return total


def estimate(config: ExperimentConfig, models: dict[str, ClassModel], P: int, *, source: Source = "profiles",
             detail: str = "", to_profile: tuple[str, ...] = (), speeds: list[float] | None = None,
             streams: dict[Cell, list[SubmittedJob]] | None = None,
             availability: list[float] | None = None) -> Plan:
    """The plan for `config` with these class models on P workstations; `to_profile`: the classes
    the run will profile first (those without a cached profile)."""
    missing = sorted(set(config.classes) - set(models))
    if missing:
        raise ValueError(f"class.{missing[0]}: no model to estimate it with")
    plans = cell_plans(config, models, P, speeds, streams, availability)
    return Plan(source, detail, plans, {name: profiling_seconds(config, models[name], name) for name in to_profile},
                checks_s=checks_seconds(config, models, len(plans)))


def plan_for(config: ExperimentConfig, speed: float | None = None, *, first_run: bool = False) -> Plan:
    """`nowlab run CONFIG --estimate`: cached profiles when every class has one, else the floor.

    `speed` (reference cores) replaces the spec's workstation speeds for the floor. `first_run`:
    count every class's profiling, as on a machine without the cache (a config's `minutes`)."""
    from experiments.profiles import cached
    from experiments.replay import class_models
    from experiments.runner import cluster_spec, profile_keys

    spec = cluster_spec(config)
    P = len(spec.names)
    owners = owner_speeds(spec)
    keys = profile_keys(config, spec, spec.names)
    found = {name: cached(key) for name, key in keys.items()}
    if speed is None and all(found.values()):
        models = class_models(config, found)
        detail = ", ".join(f"{name} {keys[name]}" for name in config.classes)
        return estimate(config, models, P, source="profiles", detail=f"cached profiles: {detail}",
                        availability=owners, to_profile=tuple(config.classes) if first_run else ())
    ref = ({ws: check_speed(speed) for ws in spec.names} if speed is not None else reference_speeds(spec))
    top = max(ref.values())
    models = work_models(config, top)
    speeds = [ref[ws] / top for ws in spec.names]
    why = "--speed given" if speed is not None else (
        "no cached profile for " + ", ".join(n for n, d in found.items() if d is None))
    return estimate(config, models, P, source="floor", detail=f"{why}; work at {top:g} reference cores",
                    to_profile=tuple(config.classes), speeds=speeds, availability=owners)


@dataclass(frozen=True)
class CellVsReal:
    policy: str
    rate: float
    replication: int
    estimated_s: float
    real_s: float  # the cell's wall time, created to last update

    @property
    def error(self) -> float:
        return (self.estimated_s - self.real_s) / self.real_s


@dataclass(frozen=True)
class PlanVsReal:
    """A stored run's estimate (from its own stored profiles) beside what it took.

    Both run from the start to the last cell's end: teardown and the report
    come after the last write to the store, so no run records them."""

    plan: Plan
    profiled: tuple[str, ...]  # classes the run profiled (the others reused a cached profile)
    cells: list[CellVsReal]
    estimated_s: float
    real_s: float
    complete: bool  # every cell done, in one segment (else `real_s` is not one clean run)

    @property
    def error(self) -> float:
        return (self.estimated_s - self.real_s) / self.real_s

    def line(self) -> str:
        note = "" if self.complete else " (cells resumed or not done: not one clean run)"
        return (f"estimated {self.estimated_s / 60:.1f} min ({self.plan.label}), took {self.real_s / 60:.1f} min "
                f"to the last cell ({self.error:+.0%}){note}")


def profiled_in_run(timeline: dict) -> tuple[str, ...]:
    """The classes a run measured: a profile reused from the cache is stored within a second of the
    step before it (the calibration, or the previous class's profile); a measured one takes minutes."""
    if not timeline["calibrations"]:
        return ()
    prev, out = timeline["calibrations"][0], []
    for name, t in sorted(timeline["profiles"].items(), key=lambda kv: kv[1]):
        if t - prev > 1.0:
            out.append(name)
        prev = t
    return tuple(out)


def plan_vs_real(store) -> PlanVsReal | None:
    """The estimate a run's stored profiles give beside its real durations (None: no profile or cell yet)."""
    from experiments.replay import class_models
    from experiments.runner import cluster_spec

    config = ExperimentConfig.model_validate(store.config)
    profiles = store.profiles()
    tl = store.timeline()
    if set(config.classes) - set(profiles) or not tl["cells"]:
        return None
    spec = cluster_spec(config)
    profiled = profiled_in_run(tl)
    # the stored streams: a config read back from the store has its mix in sorted order, which
    # draws another stream than the TOML's order did
    streams = {(c["policy"], c["rate"], c["replication"]): store.stream_of(c["cell_id"]) for c in tl["cells"]}
    plan = estimate(config, class_models(config, profiles), len(spec.names), source="profiles",
                    detail="stored profiles", to_profile=profiled, availability=owner_speeds(spec),
                    streams=streams)
    planned = {(c.policy, c.rate, c.replication): c for c in plan.cells}
    cells = []
    for c in tl["cells"]:
        key = (c["policy"], c["rate"], c["replication"])
        if key in planned:
            cells.append(CellVsReal(*key, planned[key].total_s, c["updated_at"] - c["created_at"]))
    frame = store.cells_frame()
    complete = (len(tl["cells"]) == len(plan.cells) and bool((frame.status == "done").all())
                and not bool(frame.resumed.any()))
    real = max(c["updated_at"] for c in tl["cells"]) - tl["created_at"]
    estimated = plan.total_s - plan.teardown_s
    return PlanVsReal(plan, profiled, cells, estimated, real, complete)


@dataclass(frozen=True)
class Step:
    """One line of the breakdown."""

    step: str
    seconds: float
    note: str = ""


def breakdown(plan: Plan) -> list[Step]:
    """The plan as the lines `--estimate` prints, in the order the run does them."""
    out = [Step("cluster up + calibration", plan.setup_s, "measured on now8")]
    for name, s in plan.profiling_s.items():
        out.append(Step(f"profiling {name}", s, "runs alone on each p, then resize runs"))
    if not plan.profiling_s:
        out.append(Step("profiling", 0.0, "every class has a cached profile"))
    for c in plan.cells:
        out.append(Step(f"{c.policy} at {c.rate:g}/s, rep {c.replication}", c.total_s,
                        f"{c.jobs} jobs, makespan {c.makespan_s:.1f} s + {CELL_OVERHEAD_S:g} s, "
                        f"utilisation {c.utilisation:.2f}"))
    if plan.checks_s:
        out.append(Step("profile checks", plan.checks_s, "one job alone after each cell (profile.between_cells)"))
    out.append(Step("teardown + report", plan.teardown_s, "measured on now8"))
    return out


def duration_line(store) -> str:
    """The report's "estimated N min (...), took M min" line; a run the estimate cannot read
    (no profile or cell yet, an older config) gets a short note instead of failing the report."""
    try:
        versus = plan_vs_real(store)
    except (ValueError, KeyError, PolicyError) as exc:  # ConfigError, a policy refusing, a profile without a field
        return f"not estimated ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else exc!r})"
    return versus.line() if versus is not None else ""
