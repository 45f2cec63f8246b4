"""Predictions for a stored run: every cell's stream replayed through the engine.

Everything the replay uses was measured by the run and stored with it:
the class fits from dedicated profiling, the workstations' delivered CPU
from calibration, what owners left of each CPU (the monitor's AvgAvailCPU
over the cell, or the M/M/1//N formula when no monitor ran), and the
preemption-overhead model: the median cost of the resizes measured across
all cells of the run (per class when a class has three or more, else over
all classes, else the config's default), and how long a shrinking job's old
processes keep the workstations it gives up. No measured job time goes in.
"""
from __future__ import annotations

import io
import statistics
from typing import Callable

import pandas as pd

from experiments.config import ExperimentConfig
from experiments.models.owner import owner_utilization
from experiments.predict import ClassModel, OverheadModel, predict, workstation_speeds
from experiments.store import ResultsStore

Log = Callable[[str], None]


def resize_samples(store: ResultsStore, cells: pd.DataFrame) -> pd.DataFrame:
    """Every measured resize onto a different set, with the class of its job."""
    frames = []
    for cell_id in cells["cell_id"]:
        classes = {j.id: j.cls for j in store.stream_of(int(cell_id))}
        for name, text in store.artifacts(int(cell_id)).items():
            if not name.startswith("resizes-") or not text.strip():
                continue
            df = pd.read_csv(io.StringIO(text))
            if df.empty or "kind" not in df:
                continue
            df = df[df["kind"].isin(["loser", "winner"]) & df["reconfig_s"].notna()].copy()
            df["cls"] = [classes.get(int(j), "") for j in df["job"]]
            frames.append(df)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["cls", "reconfig_s",
                                                                                      "bytes_moved"])


def overheads(config: ExperimentConfig, samples: pd.DataFrame) -> dict[str, OverheadModel]:
    pooled = OverheadModel.fit(samples, default_s=config.reconfig_default_s)
    out = {}
    for name in config.classes:
        own = samples[samples["cls"] == name]
        out[name] = OverheadModel.fit(own, default_s=pooled.cost()) if len(own) >= 3 else pooled
    return out


def releases(config: ExperimentConfig, samples: pd.DataFrame) -> dict[str, float]:
    """Per class, the median time from a shrinking resize to its old mpiexec's exit (0 if none measured)."""
    out = {}
    losers = samples[samples["kind"] == "loser"] if "kind" in samples else samples.iloc[0:0]
    if len(losers):
        losers = losers.assign(release=losers["exited_at"] - losers["partition_at"]).dropna(subset=["release"])
    pooled = float(losers["release"].median()) if len(losers) else 0.0
    for name in config.classes:
        own = losers[losers["cls"] == name] if len(losers) else losers
        out[name] = float(own["release"].median()) if len(own) >= 3 else pooled
    return out


def class_models(config: ExperimentConfig, profiles: dict[str, dict],
                 costs: dict[str, OverheadModel], release: dict[str, float]) -> dict[str, ClassModel]:
    return {name: ClassModel(name=name, W=p["W"], alpha=p["alpha"], beta=p["beta"], pmax=config.classes[name].pmax,
                             phases=int(p["phases"]), reconfig_s=costs[name].cost(), launch_s=float(p["launch_s"]),
                             launch_per_proc_s=float(p.get("launch_per_proc_s", 0.0)),
                             teardown_s=float(p.get("teardown_s", 0.0)), release_s=max(0.0, release[name]))
            for name, p in profiles.items()}


def speeds_for(config: ExperimentConfig, calibration: dict | None, availability: dict | None,
               hosts: list[str]) -> list[float] | None:
    """Delivered CPU relative to the median workstation, times what owners left (None: all alike)."""
    delivered = {c["workstation"]: float(c["measured"]) for c in (calibration or {}).get("cpu", [])}
    if availability and availability.get("avg_avail_cpu"):
        avail = {ws: float(v) for ws, v in availability["avg_avail_cpu"].items()}
    elif config.load.owner:
        avail = {ws: 1.0 - owner_utilization(o.n, o.z, o.d) for ws, o in config.load.owner.items()}
    else:
        avail = None
    if not delivered and avail is None:
        return None
    if not delivered:
        delivered = {ws: 1.0 for ws in hosts}
    reference = statistics.median(delivered[ws] for ws in hosts if ws in delivered)
    return workstation_speeds(delivered, reference, avail, hosts)


def replay(store: ResultsStore, log: Log = lambda _msg: None) -> int:
    """Predict every cell that has measured jobs; returns how many cells were predicted."""
    config = ExperimentConfig.model_validate(store.config)
    cells = store.cells_frame()
    if cells.empty:
        return 0
    profiles = store.profiles()
    missing = sorted(set(config.classes) - set(profiles))
    if missing:
        raise ValueError(f"no profile stored for class {', '.join(missing)}: the run never got that far")
    samples = resize_samples(store, cells)
    costs = overheads(config, samples)
    models = class_models(config, profiles, costs, releases(config, samples))
    calibration = store.latest_calibration()
    done = 0
    for row in cells.itertuples():
        cell_id = int(row.cell_id)
        hosts = store.segments(cell_id)[0]["hosts"] if store.segments(cell_id) else []
        if not hosts:
            continue
        stream = store.stream_of(cell_id)
        speeds = speeds_for(config, calibration, store.availability(cell_id), hosts)
        store.set_predictions(cell_id, predict(stream, models, row.policy, len(hosts), speeds=speeds))
        done += 1
    log(f"predicted {done} cells; resize cost {', '.join(f'{k} {m.cost():.2f} s (n={m.samples})' for k, m in costs.items())}")
    return done
