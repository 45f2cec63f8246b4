"""The Padhye & Dowdy configs' claims judged on the simulator alone, before any live run.

Each config's cells (its streams, policies, rates, replications) go through
`scheduler.engine` with the config's cached profiles where this machine has them for every
class (the models a live run's predictions use), else with the classes measured on the raw-cap
now8 (experiments/configs/MEASUREMENTS.md, 22 Nov 2026: Sevcik W, alpha, beta, pmax, the mean
of the 8->4 and 4->8 resize costs, launch ~1.1 s + 0.3 s per workstation), and every claim of the config is judged on those
cells with experiments.reporting.cell_claims, as a report judges the measured ones. It previews which claims
the model expects to hold, and how many replications a verdict needs to stand outside its
95% interval; it is not evidence for the paper (nothing here is measured live).

Usage: .venv/bin/python -m experiments.studies.padhye_dowdy.analyses.claims_preview [--replications N] [--equi] [--cost-scale F]
       [--results STORE.sqlite] CONFIG.toml...
  --results: a finished run's store; its kept profiles are the models (what-ifs on a run).
  --equi: also run Fig. 3 with EQUI (remainder handed out) beside EQUI-FLOOR (the paper's).
  --cost-scale: multiply the resize costs (0: free preemption, nearer the Paragon's 0.5-2 MB
  moves than now8's 50-128 MB ones), to see which claims turn on this difference; with the
  22 Nov fits (no cached profiles) the launch costs are multiplied too.
"""
from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import pandas as pd
from rich.progress import track

from experiments import sync_delay
from experiments.config import ExperimentConfig, load
from experiments.predict import ClassModel, engine_jobs, predict
from experiments.report import md_table
from experiments.reporting.run_stats import cell_table, claims_table, summarize
from experiments.runner import cells, stream_for
from scheduler.engine import simulate

# MEASUREMENTS.md, "Recommendation": W, alpha, beta (s), pmax, resize cost loser / winner (s).
FITS = {"syn50": (31.74, 0.0, 0.110, 8, (2.3, 3.5)), "syn15": (9.48, 0.0, 0.028, 8, (2.3, 3.5)),
        "cg300": (16.45, 0.0, 0.469, 4, (3.3, 4.9)), "cg500": (46.56, 0.0, 0.497, 8, (3.8, 6.1))}
LAUNCH_S, LAUNCH_PER_PROC_S = 1.1, 0.3  # "about 1.1 s at p=1, 1.7-2 s at p=2-4, 3.2-4.2 s at p=8"


def stored_models(config: ExperimentConfig, results: Path) -> dict[str, ClassModel]:
    """The models a finished run predicted with: the profiles kept in its results store."""
    from experiments.replay import class_models
    from experiments.store import ResultsStore

    store = ResultsStore.open(results, readonly=True)
    found = store.profiles()
    missing = [name for name in config.classes if name not in found]
    if missing:
        raise SystemExit(f"--results: {results} has no profile for class {missing[0]}")
    return class_models(config, found)


def cached_models(config: ExperimentConfig) -> dict[str, ClassModel] | None:
    """The models `nowlab run` would predict with, when every class's profile is cached."""
    from experiments.profiles import cached
    from experiments.replay import class_models
    from experiments.runner import cluster_spec, profile_keys

    spec = cluster_spec(config)
    found = {name: cached(key) for name, key in profile_keys(config, spec, spec.names).items()}
    return class_models(config, found) if all(found.values()) else None


def scaled(model: ClassModel, scale: float) -> ClassModel:
    """A cached model with its resize costs multiplied by `scale`, the data moved included (0.1
    is a link ten times as fast next to the same compute). Launches are left alone: a cached
    model's launch pause is mostly the job's own set-up work (CG generating its matrix)."""
    if scale == 1.0:
        return model
    resize = model.resize and dataclasses.replace(model.resize, **{
        f: scale * getattr(model.resize, f) for f in ("fixed_s", "per_proc_s", "data_bytes", "grow_s")})
    return dataclasses.replace(model, reconfig_s=scale * model.reconfig_s, resize=resize)


def models(config: ExperimentConfig, scale: float = 1.0, results: Path | None = None) -> dict[str, ClassModel]:
    if results is not None:
        return {name: scaled(m, scale) for name, m in stored_models(config, results).items()}
    if (found := cached_models(config)) is not None:
        return {name: scaled(m, scale) for name, m in found.items()}
    out = {}
    for name, cls in config.classes.items():
        W, alpha, beta, pmax, (loser, winner) = FITS[name]
        out[name] = ClassModel(name=name, W=W, alpha=alpha, beta=beta, pmax=cls.pmax or pmax,
                               phases=cls.base_demand, reconfig_s=scale * (loser + winner) / 2,
                               launch_s=scale * LAUNCH_S, launch_per_proc_s=scale * LAUNCH_PER_PROC_S)
    return out


def simulated_cells(config: ExperimentConfig, P: int, scale: float = 1.0, results: Path | None = None) -> pd.DataFrame:
    """cell_table of every (policy, rate, replication) simulated, sync delay included."""
    ms = models(config, scale, results)
    rows, delays = [], []
    for policy, rate, rep in track(cells(config), description=config.name, transient=True):
        stream = stream_for(config, rate, rep)
        for o in predict(stream, ms, policy, P):
            rows.append({"policy": policy, "rate": rate, "replication": rep, "job_id": o.id, "status": o.status,
                         "wait": o.wait_s, "execution": o.execution_s,
                         "response": o.response_s, "mean_procs": o.mean_procs,
                         "preemptions": float(o.preemptions)})
        timeline = simulate(engine_jobs(stream, ms), policy, P).timeline
        mean, n = sync_delay.cell_mean(sync_delay.timeline_delays(timeline), config.arrivals.warmup)
        delays.append({"policy": policy, "rate": rate, "replication": rep, "sync_delay": mean, "resizes": n})
    reps = summarize(pd.DataFrame(rows), config.arrivals.warmup)
    return cell_table(sync_delay.merge(reps, pd.DataFrame(delays)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("configs", nargs="+", type=Path)
    parser.add_argument("--replications", type=int, default=None, help="override the config's replications")
    parser.add_argument("--equi", action="store_true", help="Fig. 3: EQUI beside EQUI-FLOOR")
    parser.add_argument("--results", type=Path, default=None,
                        help="a finished run's results store: predict with the profiles it kept (one config only)")
    parser.add_argument("--cost-scale", type=float, default=1.0, help="factor on resize costs (and launches, with the 22 Nov fits)")
    args = parser.parse_args(argv)
    for path in args.configs:
        config = load(path)
        if args.replications:
            config = config.model_copy(update={"arrivals": config.arrivals.model_copy(
                update={"replications": args.replications})})
        if args.equi and "EQUI-FLOOR" in config.policies:
            config = config.model_copy(update={"policies": [*config.policies, "EQUI"]})
        P = 16 if "16" in config.cluster.stem else 8
        table = simulated_cells(config, P, args.cost_scale, args.results)
        fits = (f"the profiles kept in {args.results.name}" if args.results is not None else
                "cached profiles" if cached_models(config) is not None else "now8's 22 Nov fits")
        print(f"\n## {config.name} (simulated, P={P}, {config.arrivals.replications} replications, "
              f"costs x{args.cost_scale:g}, {fits})\n")
        show = table[["policy", "rate", "response", "response_ci", "wait", "execution", "mean_procs", "preemptions",
                      "sync_delay"]].round(2)
        print(md_table(show))
        claims = claims_table(config.dump()["claim"], table, table, config.arrivals.rates)
        print()
        print(md_table(claims[["claim", "paper", "verdict", "ours", "outside the 95% interval"]]))
        if args.equi and "EQUI" in config.policies:
            swapped = [{**c, **{k: "EQUI" for k in ("lower", "than") if c.get(k) == "EQUI-FLOOR"}}
                       for c in config.dump()["claim"]]
            print("\nThe same claims with EQUI (remainder handed out) in place of EQUI-FLOOR:\n")
            print(md_table(claims_table(swapped, table, table, config.arrivals.rates)[
                ["claim", "verdict", "ours", "outside the 95% interval"]]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
