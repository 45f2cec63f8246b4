"""How likely a config's cells meet the prediction targets by chance alone, for other designs.

    python -m experiments.studies.padhye_dowdy.analyses.demo_chance results/demo-....sqlite
    python -m experiments.studies.padhye_dowdy.analyses.demo_chance STORE --variant '{"arrivals.rates": [0.1, 0.15]}' --variant '{"arrivals.jobs": 20}'

Takes a stored run's config, profiles and calibration, changes the config as each variant
says (dotted keys), and for every cell runs the prediction's ensemble (200 replays with each
job's work drawn from the profile's run-to-run noise). A cell's chance is the share of
replays whose mean response is within 10% and whose median execution is within 5% of the
ensemble's means: how often an exact model would pass that cell in one run. Printed per
cell, and the product over the cells. The report gives the same figure for the run itself
("chance within both by luck"); this asks it of a design before running it.
"""
from __future__ import annotations

import argparse
import copy
import json
from pathlib import Path

import numpy as np
from pydantic import ValidationError

from experiments import owner_schedules
from experiments.config import ExperimentConfig
from experiments.predict import ensemble
from experiments.replay import class_models, speeds_for
from experiments.runner import stream_for
from experiments.store import ResultsStore


def varied(raw: dict, variant: dict) -> ExperimentConfig:
    out = copy.deepcopy(raw)
    for key, value in variant.items():
        *path, last = key.split(".")
        node = out
        for part in path:
            node = node[part]
        node[last] = value
    return ExperimentConfig.model_validate(out)


def chances(store: ResultsStore, config: ExperimentConfig, replicas: int) -> list[tuple[str, float, float]]:
    profiles, calibration = store.profiles(), store.latest_calibration()
    models = class_models(config, profiles)
    hosts = sorted({h for c in store.cells_frame().cell_id for s in store.segments(int(c)) for h in s["hosts"]},
                   key=lambda h: (len(h), h))
    speeds = speeds_for(calibration, hosts)
    out = []
    for policy in config.policies:
        for rate in config.arrivals.rates:
            per_rep = []
            for rep in range(config.arrivals.replications):
                stream = stream_for(config, rate, rep)
                schedule = owner_schedules.for_engine(config, rep, hosts) if owner_schedules.in_use(config) else None
                counted = {j.id for j in stream if j.id >= config.arrivals.warmup}
                e = ensemble(stream, models, policy, len(hosts), counted=counted, replicas=replicas, seed=1,
                             speeds=speeds, schedule=schedule)
                r, x = np.array(e["response"]), np.array(e["median_execution"])
                per_rep.append(float(np.mean(np.abs(r / r.mean() - 1) <= 0.10)) *
                               float(np.mean(np.abs(x / x.mean() - 1) <= 0.05)))
            out.append((policy, rate, float(np.mean(per_rep))))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("store", type=Path, help="a results store (its config, profiles and calibration)")
    parser.add_argument("--variant", action="append", default=[], help="JSON of dotted config keys to change")
    parser.add_argument("--replicas", type=int, default=200)
    args = parser.parse_args()
    with ResultsStore.open(args.store, readonly=True) as store:
        raw = dict(store.config)
        for text in ["{}", *args.variant]:
            try:
                variant = json.loads(text)
                config = varied(raw, variant)
            except ValidationError as exc:
                first = exc.errors()[0]
                print(f"error: --variant {text}: {'.'.join(map(str, first['loc']))}: {first['msg']}")
                return 2
            except (ValueError, KeyError, TypeError) as exc:
                print(f"error: --variant {text}: no such key or not JSON ({exc})".splitlines()[0])
                return 2
            cells = chances(store, config, args.replicas)
            print(f"{variant or 'as run'}: all {len(cells)} cells pass one run with probability "
                  f"{np.prod([c for _, _, c in cells]):.0%}")
            for policy, rate, c in cells:
                print(f"    {policy} {rate:g}/s: {c:.0%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
