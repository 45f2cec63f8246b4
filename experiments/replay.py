"""Predictions for a stored run: every cell's stream replayed through the engine.

Everything the replay uses comes from profiling and calibration, never
from the run it predicts: the class fits from dedicated profiling (T(p),
launch, teardown, and the resize cost: fixed + bytes over the link, with
how long a shrinking job's old processes keep the workstations it gives
up), the workstations' delivered CPU from calibration, what owners left of
each CPU (the monitor's AvgAvailCPU over the cell, or the M/M/1//N formula
when no monitor ran), and the config's overhead knob. A profile without a
resize fit (measured before resizes were profiled) falls back to the
config's reconfig_default_s, and says so. The run's own resizes are only a
diagnostic (`measured_overheads`), shown in the report beside the profiled
cost; no measured job time or resize cost goes in. Besides the one replay per
cell, an ensemble of replays with each job's work drawn from the profile's
run-to-run noise (`predict.ensemble`) gives the cell's expected figures and
their 90% band; of the run it takes only which jobs finished, so both sides
average the same jobs.
"""
from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pandas as pd

from experiments.config import ExperimentConfig
from experiments import noise, owner_schedules
from experiments.models import loop
from experiments.models.launch import stored_fit
from testbed.load.model import owner_utilization
from experiments.models.resize import ResizeFit, ResizeSample
from experiments.models import speed_basis
from experiments.predict import ClassModel, OverheadModel, ensemble, predict, workstation_speeds
from experiments.store import ResultsStore
from scheduler.engine import Schedule
from scheduler.jobs import Outcome

Log = Callable[[str], None]


#: Replays per cell in the ensemble prediction: the 5% and 95% points of 100 values move by
#: a few percent between seeds, and 100 replays of a 14-job cell take about 0.25 s.
ENSEMBLE_REPLICAS = 100


def resize_samples(store: ResultsStore, cells: pd.DataFrame) -> pd.DataFrame:
    """Every measured resize onto a different set that ran again, with the class of its job."""
    rows = []
    for cell_id in cells["cell_id"]:
        classes = {j.id: j.cls for j in store.stream_of(int(cell_id))}
        rows += [{**r.row(), "cls": classes.get(int(r.job), "")} for r in store.resizes(int(cell_id))
                 if r.kind in ("loser", "winner") and r.reconfig_s is not None]
    return pd.DataFrame(rows) if rows else pd.DataFrame(columns=["cls", "reconfig_s", "bytes_moved"])


def measured_overheads(config: ExperimentConfig, samples: pd.DataFrame) -> dict[str, OverheadModel]:
    """Diagnostic only: the median measured resize cost per class (pooled when a class has fewer than 3)."""
    pooled = OverheadModel.fit(samples, default_s=config.reconfig_default_s)
    out = {}
    for name in config.classes:
        own = samples[samples["cls"] == name]
        out[name] = OverheadModel.fit(own, default_s=pooled.cost()) if len(own) >= 3 else pooled
    return out


def profiled_resize(profile: dict) -> ResizeFit | None:
    """The profile's resize fit, refitted from its samples whenever it has them (so a profile
    stored before a change of the model is read as today's), else as stored; None: no resize
    was profiled. Profiling resizes the class on the first p workstations, so its sets are
    0..p-1."""
    stored = profile.get("resize")
    if not isinstance(stored, dict):
        return None
    samples = [ResizeSample(tuple(range(int(s["from"]))), tuple(range(int(s["to"]))), float(s["reconfig_s"]),
                            int(s["bytes_moved"]), s.get("release_s")) for s in profile.get("resize_samples") or []]
    return ResizeFit.fit(samples, float(stored["link_bit_s"])) if samples else ResizeFit.from_dict(stored)


def class_models(config: ExperimentConfig, profiles: dict[str, dict]) -> dict[str, ClassModel]:
    """Every class from its profile and the config alone (overhead knob included)."""
    out = {}
    for name, stored_profile in profiles.items():
        p = speed_basis.profile_for(stored_profile, config.profile.speed_basis)
        fit = profiled_resize(p)
        launch = stored_fit(p)
        W, alpha, beta = loop.stored(p)
        out[name] = ClassModel(
            name=name, W=W, alpha=alpha, beta=beta, pmax=config.classes[name].pmax,
            phases=int(p["phases"]), reconfig_s=config.reconfig_default_s, launch_s=launch["launch_s"],
            launch_per_proc_s=launch["launch_per_proc_s"], setup_work_s=launch["setup_work_s"], teardown_s=float(p.get("teardown_s", 0.0)),
            release_s=fit.release_s if fit is not None else 0.0, resize=fit,
            extra_launch_s=config.overhead.launch_s, extra_resize_s=config.overhead.resize_s,
            startup_s=launch.get("startup_s", None if p.get("startup_s") is None else float(p["startup_s"])),
            run_sigma=loop.run_sigma(p.get("samples") or [], p.get("ref_speed")),
            hello_s=loop.hellos(p.get("samples") or [], p.get("ref_speed")))
    return out


def speeds_for(calibration: dict | None, hosts: list[str]) -> list[float] | None:
    """Delivered speed relative to the median workstation (None: no calibration, all alike).

    Governed workstations (a speed in reference cores, held by the governor) deliver their
    spec's speed: theirs are used. The CPU share calibration measures is then no guide: the
    governor gives each the cores its own core's factor calls for (0.13-0.16 core for the
    same 0.3 reference cores, demo 24 Nov 2026), which read as 17% slower workstations."""
    governed = (calibration or {}).get("speed_ref_cores") or {}
    if hosts and all(h in governed for h in hosts):
        reference = statistics.median(float(governed[h]) for h in hosts)
        return [float(governed[h]) / reference for h in hosts]
    delivered = {c["workstation"]: float(c["measured"]) for c in (calibration or {}).get("cpu", [])}
    if not delivered:
        return None
    reference = statistics.median(delivered[ws] for ws in hosts if ws in delivered)
    return workstation_speeds(delivered, reference, None, hosts)


def availability_for(config: ExperimentConfig, availability: dict | None, hosts: list[str]) -> list[float] | None:
    """What owners left of each workstation: the monitor's mean, else M/M/1//N (None: no owners).

    Kept apart from the speeds: a coupled job pays the product over its members."""
    if availability and availability.get("avg_avail_cpu"):
        avail = {ws: float(v) for ws, v in availability["avg_avail_cpu"].items()}
    elif config.load.owner:
        avail = {ws: 1.0 - owner_utilization(o.n, o.z, o.d) for ws, o in config.load.owner.items()}
    else:
        return None
    return [min(1.0, max(1e-6, avail.get(ws, 1.0))) for ws in hosts]


def owner_load(config: ExperimentConfig, store: ResultsStore, cell_id: int, replication: int,
               hosts: list[str]) -> tuple[list[float] | None, list[Schedule] | None]:
    """What a cell's prediction knows of its owners: (availability, schedule), one of them None.
    A schedule is the bursts the run met, rendered again from the seed; daemons leave only means."""
    if owner_schedules.in_use(config):
        return None, owner_schedules.for_engine(config, replication, hosts)
    return availability_for(config, store.availability(cell_id), hosts), None


@dataclass(frozen=True)
class CellReplay:
    """Everything one cell's prediction is made from: its stream, machine and owners, and the
    jobs that finished live past the warm-up (so both sides average the same jobs)."""

    cell_id: int
    policy: str
    rate: float
    replication: int
    stream: list
    P: int
    speeds: list[float] | None
    availability: list[float] | None
    schedule: list[Schedule] | None
    counted: frozenset[int]


def cell_replays(store: ResultsStore, config: ExperimentConfig) -> list[CellReplay]:
    """One CellReplay per cell that ran on workstations (cells never started have no hosts)."""
    cells = store.cells_frame()
    if cells.empty:
        return []
    calibration = store.latest_calibration()
    jobs = store.jobs_frame()
    warmup = config.arrivals.warmup
    out = []
    for row in cells.itertuples():
        cell_id = int(row.cell_id)
        segments = store.segments(cell_id)
        hosts = segments[0]["hosts"] if segments else []
        if not hosts:
            continue
        avail, schedule = owner_load(config, store, cell_id, int(row.replication), hosts)
        counted = frozenset(int(j) for j in jobs.job_id[(jobs.cell_id == cell_id) & (jobs.status == Outcome.DONE)
                                                       & (jobs.job_id >= warmup)]) if not jobs.empty else frozenset()
        out.append(CellReplay(cell_id, str(row.policy), float(row.rate), int(row.replication), store.stream_of(cell_id),
                              len(hosts), speeds_for(calibration, hosts), avail, schedule, counted))
    return out


def run_identity(path: Path, config: Mapping) -> tuple[str, str, str]:
    """(run, family, paper) of a store for the noise library: its path under
    experiments/results (else as given), its config's name, and its results folder (else the
    config's paper, up to its year)."""
    path = Path(path).resolve()
    try:
        rel = path.relative_to(noise.RESULTS.resolve())
        return str(rel), str(config.get("name", "")), rel.parts[0]
    except ValueError:
        return str(path), str(config.get("name", "")), str(config.get("paper", "")).split("(")[0].strip()


def noise_for(store: ResultsStore, library: noise.Library | None = None) -> noise.NoiseModel | None:
    """The noise model a store's bands are drawn with: from every committed run but its own."""
    library = noise.Library.load(noise.LIBRARY) if library is None else library
    return noise.for_run(library.runs, *run_identity(store.path, store.config),
                         created_at=float(store.timeline()["created_at"] or 0.0))


def band_values(cell: CellReplay, models: Mapping[str, ClassModel], draws: list[noise.RunDraw] | None,
                replicas: int = ENSEMBLE_REPLICAS) -> dict[str, list[float]]:
    """The cell's ensemble (each statistic per replay), seeded by its cell id; `draws`: the
    run's (`NoiseModel.draws`, one list for every cell of the run)."""
    return ensemble(cell.stream, models, cell.policy, cell.P, counted=cell.counted, replicas=replicas,
                    seed=cell.cell_id, speeds=cell.speeds, availability=cell.availability,
                    schedule=cell.schedule, noise=draws)


def replay(store: ResultsStore, log: Log = lambda _msg: None, *, basis: str | None = None,
           library: noise.Library | None = None) -> int:
    """Predict every cell that has measured jobs; returns how many cells were predicted.
    `basis`: predict under this `[profile] speed_basis` instead of the run's own (to compare
    the two on one run, experiments/studies/padhye_dowdy/analyses/prediction_variants.py).
    `library`: the noise evidence the bands draw from (default: the committed one)."""
    config = ExperimentConfig.model_validate(store.config)
    if basis is not None:
        config = config.model_copy(update={"profile": config.profile.model_copy(
            update={"speed_basis": speed_basis.check(basis)})})
    cells = store.cells_frame()
    if cells.empty:
        return 0
    profiles = store.profiles()
    missing = sorted(set(config.classes) - set(profiles))
    if missing:
        raise ValueError(f"no profile stored for class {', '.join(missing)}: the run never got that far")
    models = class_models(config, profiles)
    measured = measured_overheads(config, resize_samples(store, cells))
    model = noise_for(store, library)
    draws = model.draws(ENSEMBLE_REPLICAS, seed=0) if model is not None else None
    done = 0
    for cell in cell_replays(store, config):
        store.set_predictions(cell.cell_id, predict(cell.stream, models, cell.policy, cell.P, speeds=cell.speeds,
                                                    availability=cell.availability, schedule=cell.schedule))
        if cell.counted:
            store.set_band(cell.cell_id, band_values(cell, models, draws),
                           {"noise": model.text() if model is not None else "profiled run_sigma per class (no noise library)",
                            **{name: m.run_sigma for name, m in models.items()}})
        done += 1
    parts = []
    for name, m in models.items():
        profiled = (f"profiled {m.resize.fixed_s:.2f} s + {m.resize.per_proc_s:.3f} s/p + bytes/link"
                    if m.resize is not None else f"no resize profile, default {m.reconfig_s:.2f} s")
        seen = measured.get(name)
        parts.append(f"{name} {profiled} (this run measured median {seen.cost():.2f} s, n={seen.samples})"
                     if seen is not None else f"{name} {profiled}")
    log(f"predicted {done} cells; resize cost {'; '.join(parts)}; "
        f"noise {model.text() if model is not None else 'none measured: profiled run_sigma'}")
    return done
