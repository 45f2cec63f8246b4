"""The noise model: its estimator recovers variances it is given, and bands drawn from it hold
what they claim on runs drawn from an exact model."""
from __future__ import annotations

import math
import random

import numpy as np
import pandas as pd
import pytest

from experiments import noise
from experiments.predict import ClassModel, engine_jobs, ensemble, summarize
from scheduler.engine import simulate
from scheduler.jobs import FinishedJob, SubmittedJob

TRUE = {"offset": 0.03, "run": 0.05, "cell": 0.04, "job": 0.08}


def synthetic_run(rng: random.Random, name: str, cells: int, jobs: int) -> list[list[float]]:
    """Log factors of one run: a run term, a cell term per cell, a job term per job."""
    run = TRUE["offset"] + rng.gauss(0, TRUE["run"])
    out = []
    for _ in range(cells):
        cell = run + rng.gauss(0, TRUE["cell"])
        out.append([cell + rng.gauss(0, TRUE["job"]) for _ in range(jobs)])
    return out


def as_evidence(logs: list[list[float]], name: str) -> noise.RunNoise:
    frame = pd.DataFrame([{"cell_id": c, "job_id": j, "ratio": math.exp(x), "ratio_norm": math.nan}
                          for c, xs in enumerate(logs) for j, x in enumerate(xs)])
    return noise.RunNoise.of(frame, name, "synthetic", "synthetic")


def test_the_estimator_recovers_the_variances_it_was_drawn_from():
    rng = random.Random(1)
    runs = [as_evidence(synthetic_run(rng, f"r{i}", 6, 8), f"r{i}") for i in range(200)]
    model = noise.estimate(runs)
    assert model.offset == pytest.approx(TRUE["offset"], abs=3 * model.offset_se)
    assert model.sigma_job == pytest.approx(TRUE["job"], rel=0.05)
    assert model.sigma_cell == pytest.approx(TRUE["cell"], rel=0.2)
    assert model.sigma_run == pytest.approx(TRUE["run"], rel=0.2)
    assert (model.runs, model.cells, model.jobs) == (200, 1200, 9600)
    assert model.run_dof == 199 and model.cell_dof == 1000 and model.job_dof == 8400


def test_a_run_is_never_its_own_evidence_and_the_pool_widens_when_the_config_has_too_few_runs():
    rng = random.Random(2)
    library = [noise.RunNoise(f"r{i}", "fig" if i < 3 else "other", "paper", tuple([8] * 4),
                              tuple(rng.gauss(0, 0.05) for _ in range(4)), 0.5) for i in range(6)]
    own = noise.for_run(library, "r0", "fig", "paper")
    assert own is not None and own.runs == 2 and "config fig" in own.source
    alone = noise.for_run(library[:2], "r0", "fig", "paper")  # one other run of its config: the paper's pool
    assert alone is not None and alone.runs == 1 and "paper paper" in alone.source
    assert noise.for_run(library[:1], "r0", "fig", "paper") is None


def test_the_library_round_trips_and_a_bad_file_is_one_line(tmp_path):
    lib = noise.Library([noise.RunNoise("a/b.sqlite", "demo", "demo", (3, 4), (0.1, -0.2), 0.25)])
    lib.save(tmp_path / "runs.json")
    assert noise.Library.load(tmp_path / "runs.json") == lib
    assert noise.Library.load(tmp_path / "missing.json").runs == []
    (tmp_path / "bad.json").write_text('[{"run": 1}]')
    with pytest.raises(ValueError, match=r"noise library .*bad.json: not a list of runs"):
        noise.Library.load(tmp_path / "bad.json")


def test_bands_from_the_estimated_noise_hold_90_percent_of_runs_of_an_exact_model():
    """An exact model (the engine itself) with live noise drawn from TRUE: a cell's mean response
    falls inside the 90% band drawn from a model estimated on 40 other runs about 90% of the time."""
    rng = random.Random(3)
    library = [as_evidence(synthetic_run(rng, f"t{i}", 4, 6), f"t{i}") for i in range(40)]
    model = noise.for_run(library, "live", "synthetic", "synthetic")
    classes = {"a": ClassModel("a", W=4.0, alpha=0.0, beta=0.0, pmax=1)}
    stream = [SubmittedJob(i, "a", 3.0 * i) for i in range(6)]  # some queueing on 2 processors
    inside, trials = 0, 150
    for r in range(trials):
        logs = synthetic_run(rng, f"live{r}", 1, len(stream))[0]
        work = {sj.id: math.exp(x) for sj, x in zip(stream, logs)}
        records = {j.id: j for j in simulate(engine_jobs(stream, classes, work), "RA", 2, timeline=False).jobs}
        measured = summarize([FinishedJob.of(sj, records[sj.id]) for sj in stream], 0)["mean_response"]
        band = ensemble(stream, classes, "RA", 2, counted={sj.id for sj in stream}, replicas=60, seed=r,
                        noise=model.draws(60, seed=1000 + r))["response"]
        lo, hi = np.quantile(band, [0.05, 0.95])
        inside += bool(lo <= measured <= hi)
    coverage = inside / trials
    assert abs(coverage - 0.9) <= 3 * math.sqrt(0.9 * 0.1 / trials), coverage


def test_too_few_draws_for_the_replicas_is_an_error():
    model = noise.estimate([noise.RunNoise("a", "f", "p", (3, 3), (0.0, 0.1), 0.2)])
    with pytest.raises(ValueError, match="noise: 2 run draws for 3 replicas"):
        ensemble([SubmittedJob(0, "a", 0.0)], {"a": ClassModel("a", W=1.0, alpha=0.0, beta=0.0)}, "RA", 1,
                 counted={0}, replicas=3, noise=model.draws(2, seed=0))
