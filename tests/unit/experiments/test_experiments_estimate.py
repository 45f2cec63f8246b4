"""The plan estimate (`nowlab run CONFIG --estimate`): its pieces on small configs, the CLI's
breakdown and one-line errors, and the estimate beside a stored run's real durations. No containers."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from nowlab.commands import experiments as experiments_cli
from experiments import config as cfg
from experiments import estimate as plan
from experiments.predict import ClassModel
from experiments.runner import cells, cluster_spec, profile_keys, stream_for
from experiments.store import ResultsStore
from workloads.reference import MATVEC_FLOP_PER_REF_S

app = typer.Typer()
experiments_cli.register(app)

SPEC = """
name = "tiny4"
[[workstation]]
name = "ws"
count = 4
cpu = 0.1
egress = "100mbit"
"""

CONFIG = """
name = "tiny-plan"
title = "Tiny plan"
minutes = 3
cluster = "spec.toml"
policies = ["RA", "FOLDING"]

[load.owner.ws4]
n = 1
z = 2.0
d = 0.4

[class.syn]
workload = "synthetic"
args = {{ phases = 4, work = 0.25 }}

[class.cg]
workload = "cg"
args = {{ n = 1000, iterations = 20 }}
pmax = 2

[arrivals]
rates = {rates}
jobs = 4
warmup = 1
mix = {{ syn = 0.5, cg = 0.5 }}

[profile]
procs = [1, 2, 4]
reps = 2
"""

# A profile as `profiles.measure` stores it (the fields `replay.class_models` reads).
PROFILE = {"W": 6.0, "alpha": 0.1, "beta": 0.05, "phases": 4, "launch_s": 0.2, "launch_per_proc_s": 0.01,
           "teardown_s": 0.05, "startup_s": 0.1, "resize": None}


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """An empty nowlab home: no cached profile unless a test writes one."""
    monkeypatch.setenv("NOWLAB_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def write_config(tmp_path: Path, rates: str = "[0.2, 0.5]") -> Path:
    (tmp_path / "spec.toml").write_text(SPEC)
    path = tmp_path / "exp.toml"
    path.write_text(CONFIG.format(rates=rates))
    return path


def cache_profiles(config: cfg.ExperimentConfig, home: Path) -> dict[str, str]:
    """Write a cached profile for every class under the key the runner would look up."""
    spec = cluster_spec(config)
    keys = profile_keys(config, spec, spec.names)
    (home / "profiles").mkdir(parents=True, exist_ok=True)
    for name, key in keys.items():
        (home / "profiles" / f"{key}.json").write_text(json.dumps({**PROFILE, "class": name, "key": key}))
    return keys


def test_a_cg_class_states_its_work_in_reference_seconds():
    cg = cfg.ClassSpec(workload="cg", args={"n": 2000, "iterations": 10})
    per_iteration = 2 * 2000**2 / MATVEC_FLOP_PER_REF_S  # the matvec: 2·n² flop
    assert cg.work_per_phase_ref_s == pytest.approx(per_iteration, rel=1e-12)
    assert cg.work_ref_s(1.0) == pytest.approx(10 * per_iteration, rel=1e-12)
    assert cg.work_ref_s(0.5) == pytest.approx(5 * per_iteration, rel=1e-12)  # whole iterations
    default = cfg.ClassSpec(workload="cg")  # the workload's own defaults: n = 500, 250 iterations
    assert default.work_ref_s() == pytest.approx(250 * 2 * 500**2 / MATVEC_FLOP_PER_REF_S, rel=1e-12)


def test_without_a_cached_profile_the_estimate_is_a_floor_from_reference_work(tmp_path, home):
    config = cfg.load(write_config(tmp_path))
    p = plan.plan_for(config)
    assert p.source == "floor" and p.label == "floor from reference work"
    assert "no cached profile for syn, cg" in p.detail
    top = 0.1 * plan.FASTEST_CORE_REF  # cpu caps read at the fastest core seen: a floor
    models = plan.work_models(config, top)
    assert models["syn"].W == pytest.approx(4 * 0.25 / top)
    assert models["cg"].W == pytest.approx(20 * 2 * 1000**2 / MATVEC_FLOP_PER_REF_S / top)
    assert set(p.profiling_s) == {"syn", "cg"}  # every class is still to be profiled
    assert [(c.policy, c.rate, c.replication) for c in p.cells] == cells(config)
    for c in p.cells:  # the last job arrives, then computes at least its own work on 4 workstations
        last = max(stream_for(config, c.rate, c.replication), key=lambda j: j.arrival_s)
        assert c.makespan_s >= last.arrival_s + models[last.cls].W / 4 - 1e-9
        assert c.total_s == pytest.approx(c.makespan_s + plan.CELL_OVERHEAD_S)
        assert 0 < c.utilisation <= 1 + 1e-9
    assert p.total_s == pytest.approx(plan.SETUP_S + sum(p.profiling_s.values())
                                      + sum(c.total_s for c in p.cells) + plan.TEARDOWN_S)


def test_owners_slow_their_workstation_by_what_they_take(tmp_path):
    speeds = plan.owner_speeds(cluster_spec(cfg.load(write_config(tmp_path))))
    assert speeds[:3] == [1.0, 1.0, 1.0] and speeds[3] == pytest.approx(1 - 0.4 / 2.4)  # U_ow = D / (Z + D)


def test_cached_profiles_give_the_estimate_and_no_profiling(tmp_path, home):
    config = cfg.load(write_config(tmp_path))
    keys = cache_profiles(config, home)
    p = plan.plan_for(config)
    assert p.source == "profiles" and p.label == "from profiles"
    assert p.profiling_s == {} and keys["syn"] in p.detail and keys["cg"] in p.detail
    first = plan.plan_for(config, first_run=True)  # a config's `minutes`: profiling counted
    assert set(first.profiling_s) == {"syn", "cg"}
    assert first.total_s == pytest.approx(p.total_s + sum(first.profiling_s.values()))
    floor = plan.plan_for(config, speed=0.3)  # --speed asks for the floor even with a cache
    assert floor.source == "floor" and "--speed given" in floor.detail
    with pytest.raises(ValueError, match=r"^speed: must be > 0 reference cores, got 0"):
        plan.plan_for(config, speed=0)


def test_profiling_time_is_the_runs_alone_on_each_p_and_the_resize_runs(tmp_path):
    config = cfg.load(write_config(tmp_path))  # procs 1, 2, 4; 2 reps
    model = ClassModel("syn", W=8.0, alpha=0.0, beta=0.0, phases=4, reconfig_s=0.1)
    alone = 8.0 / 1 + 8.0 / 2 + 8.0 / 4
    # ResizeScript over resize_sizes([1, 2, 4]) = 4, 2, 4, 2, ...: one phase (W/4 of the work) on each
    # set, 0.1 s per resize; the job's 4 phases end on the 4th set: 0.5 + 0.1 + 1 + 0.1 + 0.5 + 0.1 + 1
    resized = 3.3
    runs = 3 + 1  # each p alone, then the resize run
    assert plan.profiling_seconds(config, model, "syn") == pytest.approx(
        2 * (alone + resized + runs * plan.PROFILE_RUN_S))


def test_the_cli_prints_the_breakdown_and_starts_nothing(tmp_path, home):
    path = write_config(tmp_path)
    result = CliRunner().invoke(app, ["run", str(path), "--estimate"])
    assert result.exit_code == 0, result.output
    out = result.output
    for line in ("cluster up + calibration", "profiling syn", "profiling cg", "RA at 0.2/s, rep 0",
                 "FOLDING at 0.5/s, rep 0", "teardown + report", "total", "floor from reference work"):
        assert line in out, line
    p = plan.plan_for(cfg.load(path))
    assert f"estimated {p.total_s / 60:.1f} min" in out and f"{p.total_s:.1f}" in out
    assert sorted(f.name for f in tmp_path.iterdir()) == ["exp.toml", "spec.toml"]  # nothing stored
    assert not Path("results/tiny-plan.sqlite").exists()
    cache_profiles(cfg.load(path), home)
    result = CliRunner().invoke(app, ["run", str(path), "--estimate"])
    assert result.exit_code == 0 and "(from profiles)" in result.output and "cached profiles" in result.output


@pytest.mark.parametrize("args, message", [
    (["--estimate", "--speed", "0"], "error: --speed: must be > 0 reference cores, got 0"),
    (["--estimate", "--speed", "inf"], "error: --speed: must be > 0 reference cores, got inf"),
    (["--estimate", "--resume"], "error: --estimate: takes an experiment config (TOML), not a results file or --resume"),
])
def test_the_cli_refuses_bad_input_in_one_line(tmp_path, home, args, message):
    result = CliRunner().invoke(app, ["run", str(write_config(tmp_path)), *args])
    assert result.exit_code == 2
    assert [ln for ln in result.output.splitlines() if ln.startswith("error:")] == [message]


def test_a_bad_config_field_is_named_in_one_line(tmp_path, home):
    result = CliRunner().invoke(app, ["run", str(write_config(tmp_path, rates="[0.2, -1]")), "--estimate"])
    assert result.exit_code == 2
    errors = [ln for ln in result.output.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "arrivals.rates: every rate must be > 0" in errors[0], result.output


def test_a_stored_run_is_compared_with_its_own_estimate(tmp_path, home):
    """A real store of the tiny config, its timestamps set as a run would leave them."""
    path = write_config(tmp_path)
    config = cfg.load(path)
    store = ResultsStore.create(tmp_path / "r.sqlite", config.dump(), path.read_text())
    assert plan.plan_vs_real(store) is None and plan.duration_line(store) == ""  # nothing to compare yet
    store.add_calibration({"time": 0.0})
    for name in config.classes:
        store.set_profile(name, {**PROFILE, "class": name})
    ids = [store.ensure_cell(pol, rate, rep, stream_for(config, rate, rep)) for pol, rate, rep in cells(config)]
    for cell in ids:
        store.set_cell_status(cell, "done")
    store.close()
    expected = plan.estimate(config, _models(config), 4, to_profile=("syn", "cg"),
                             availability=plan.owner_speeds(cluster_spec(config)))
    t0, cal = 1000.0, 1000.0 + 21.0
    real_cells = [c.total_s * 1.1 for c in expected.cells]  # each cell 10% longer than estimated
    with sqlite3.connect(tmp_path / "r.sqlite") as conn:  # the times a run would have written
        conn.execute("UPDATE meta SET value = ? WHERE key = 'created_at'", (repr(t0),))
        conn.execute("UPDATE calibrations SET taken_at = ?", (cal,))
        conn.execute("UPDATE profiles SET updated_at = ? WHERE cls = 'syn'", (cal + 120.0,))  # measured
        conn.execute("UPDATE profiles SET updated_at = ? WHERE cls = 'cg'", (cal + 240.0,))
        start = cal + 240.0
        for cell, length in zip(ids, real_cells):
            conn.execute("UPDATE cells SET created_at = ?, updated_at = ? WHERE id = ?",
                         (start, start + length, cell))
            start += length
    with ResultsStore.open(tmp_path / "r.sqlite", readonly=True) as s:
        versus = plan.plan_vs_real(s)
        line = plan.duration_line(s)
    assert versus.profiled == ("syn", "cg") and versus.complete
    assert [c.error for c in versus.cells] == pytest.approx([-1 / 11] * len(ids))
    assert versus.real_s == pytest.approx(start - t0)
    assert versus.estimated_s == pytest.approx(expected.total_s - plan.TEARDOWN_S)
    assert line == (f"estimated {versus.estimated_s / 60:.1f} min (from profiles), took {versus.real_s / 60:.1f} "
                    f"min to the last cell ({versus.error:+.0%})")


def test_a_reused_profile_is_not_counted_as_profiling():
    timeline = {"calibrations": [100.0], "profiles": {"syn": 100.01, "cg": 100.02}}
    assert plan.profiled_in_run(timeline) == ()
    timeline = {"calibrations": [100.0], "profiles": {"syn": 100.01, "cg": 190.0}}
    assert plan.profiled_in_run(timeline) == ("cg",)


def test_the_breakdown_lists_every_step_in_run_order(tmp_path, home):
    config = cfg.load(write_config(tmp_path))
    p = plan.plan_for(config)
    steps = plan.breakdown(p)
    assert steps[0].step == "cluster up + calibration" and steps[-1].step == "teardown + report"
    assert [s.step for s in steps[1:3]] == ["profiling syn", "profiling cg"]
    assert sum(s.seconds for s in steps) == pytest.approx(p.total_s)


def _models(config: cfg.ExperimentConfig) -> dict[str, ClassModel]:
    from experiments.replay import class_models
    return class_models(config, {name: {**PROFILE, "class": name} for name in config.classes})


def test_a_profile_cached_under_another_speed_statistic_is_not_reused(tmp_path, monkeypatch):
    """A profile's speed ratios and its jobs' must be summarised alike (experiments/delivered.py)."""
    from experiments import delivered

    config = cfg.load(write_config(tmp_path))
    spec = cluster_spec(config)
    now = profile_keys(config, spec, spec.names)
    monkeypatch.setattr(delivered, "STATISTIC", "slowest workstation")
    before = profile_keys(config, spec, spec.names)
    assert set(now) == set(before) and all(now[c] != before[c] for c in now)
