"""How long the paper-volume configs would run, and what the simulator expects of them, before any live run.

    python -m experiments.studies.padhye_dowdy.analyses.paper_volumes [--seeds 20] [CONFIG.toml ...]

`nowlab run CONFIG --estimate` on a config whose classes have no cached profile gives a floor
(the matrix-vector work alone): for CG at n = 300 and 500 it leaves out nearly all of a job's
time. This estimates each config of `configs/paper-volumes/` with the class models its source
run (the same config without `-paper-volumes`) kept in its store, changed only where the config
changes the class: the bytes a resize moves times (new bytes / old bytes) (n^2 for CG, the
synthetic job's redist_bytes), the release of a shrink's workstations (the old processes' exit,
0.05 s at 0.5 MB, 0.7 s at 50 MB, 1.7 s at 128 MB as profiled) by the same factor down to
0.05 s, the launch's set-up over the start-up (CG building its rows
of A) times the same factor, the safe points the config's iterations, and for the synthetic job
the simulator's sublinear variant (a tenth of W moved into alpha, `resize_ratio.sublinear`).
The job's time is kept: the iterations were chosen to keep it (the configs' comments). It also
prints, per rate, Folding's mean response over RA's on these models (geometric mean over
`--seeds` paired streams, 95% interval): what the live run would be expected to show.
"""
from __future__ import annotations

import argparse
import dataclasses
import math
from pathlib import Path

import pandas as pd

from experiments.config import ClassSpec, ExperimentConfig, load
from experiments.estimate import estimate, owner_speeds
from experiments.predict import ClassModel
from experiments.report import md_table
from experiments.runner import cluster_spec
from experiments.studies.padhye_dowdy.analyses.resize_ratio import (
    POLICIES, RESULTS, cell_response, paired_ratio, sublinear)

CONFIGS = Path("experiments/studies/padhye_dowdy/configs/paper-volumes")
SUFFIX = "-paper-volumes"
SERIAL = 0.1  # the synthetic job's sublinear variant, as in resize_ratio's report
SYNTHETIC_REDIST_DEFAULT = 512 * 1024  # workloads/synthetic.py's default, which the source runs used
RELEASE_FLOOR_S = 0.05  # the synthetic job's profiled release at 0.5 MB (fig4's store: 0.053 s)


def data_bytes(cls: ClassSpec) -> float:
    """What a resize of the class redistributes: CG's n x n doubles, the synthetic job's redist_bytes."""
    if cls.workload == "cg":
        return 8.0 * int(cls.args["n"]) ** 2
    if cls.workload == "synthetic":
        return float(cls.args.get("redist_bytes", SYNTHETIC_REDIST_DEFAULT))
    raise ValueError(f"workload {cls.workload}: no data volume known")


def rescaled(model: ClassModel, old: ClassSpec, new: ClassSpec) -> ClassModel:
    """The source run's model of a class with the new config's data volume and safe points."""
    factor = data_bytes(new) / data_bytes(old)
    release = min(model.release_s, max(RELEASE_FLOOR_S, factor * model.release_s))
    resize = model.resize and dataclasses.replace(model.resize, data_bytes=factor * model.resize.data_bytes,
                                                  release_s=release)
    out = dataclasses.replace(model, resize=resize, phases=new.base_demand, release_s=release)
    if new.workload == "cg":  # the set-up builds the rows of A: n^2 entries
        start = model.startup_s or 0.0
        out = dataclasses.replace(out, setup_work_s=factor * model.setup_work_s,
                                  hello_s=tuple((p, start + factor * max(0.0, t - start)) for p, t in model.hello_s))
    else:
        out = sublinear(out, SERIAL)
    return out


def models_for(config: ExperimentConfig) -> dict[str, ClassModel]:
    """Every class of a paper-volume config from its source run's store, rescaled."""
    from experiments.replay import class_models
    from experiments.store import ResultsStore

    if not config.name.endswith(SUFFIX):
        raise SystemExit(f"{config.name}: not a paper-volume config (name ends {SUFFIX})")
    source = config.name.removesuffix(SUFFIX)
    path = RESULTS / source / f"{source}.sqlite"
    if not path.exists():
        raise SystemExit(f"{config.name}: no committed store of its source run at {path}")
    store = ResultsStore.open(path, readonly=True)
    old = ExperimentConfig.model_validate(store.config)
    stored = class_models(old, store.profiles())
    missing = sorted(set(config.classes) - set(stored))
    if missing:
        raise SystemExit(f"{config.name}: the source run has no profile for class {missing[0]}")
    return {name: rescaled(stored[name], old.classes[name], cls) for name, cls in config.classes.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("configs", nargs="*", type=Path, help="default: every config in configs/paper-volumes/")
    parser.add_argument("--seeds", type=int, default=20, help="paired streams per rate for Folding over RA")
    args = parser.parse_args(argv)
    paths = args.configs or sorted(CONFIGS.glob("*.toml"))
    rows, expect = [], []
    for path in paths:
        config = load(path)
        spec = cluster_spec(config)
        P = len(spec.names)
        models = models_for(config)
        plan = estimate(config, models, P, source="profiles", detail="the source run's profiles, rescaled",
                        to_profile=tuple(config.classes), availability=owner_speeds(spec))
        rows.append({"config": path.name, "minutes": round(plan.total_s / 60, 1), "P": P,
                     **{f"{n} T(1) s": round(m.model().T(1), 1) for n, m in models.items()}})
        for rate in config.arrivals.rates:
            resp = {p: [cell_response(config, models, p, P, rate, s) for s in range(args.seeds)] for p in POLICIES}
            mean, lo, hi = paired_ratio(resp["FOLDING"], resp["RA"])
            expect.append({"config": config.name, "rate": rate, "folding_over_ra": round(mean, 3),
                           "ci": f"{lo:.3f}-{hi:.3f}" if math.isfinite(lo) else "-"})
    print(md_table(pd.DataFrame(rows).astype(object).fillna("")))
    print()
    print(md_table(pd.DataFrame(expect)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
