"""The runner's own code on real containers: a segment whose availability (or artifacts) step raises
still marks its cell done, the next cell runs, and the failed steps are redone afterwards.

Four 0.15-core workstations (tests/data/exp_tiny4.toml), two cells of three short jobs; the
profile is given (profiling is not what is tested) and the monitor is the real one.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from experiments import config as cfg
from experiments import steps
from experiments.runner import Runner, cells, cluster_spec
from experiments.store import ResultsStore
from testbed import lifecycle
from testbed.load.monitor import Monitor

pytestmark = pytest.mark.integration

DATA = Path(__file__).resolve().parents[1] / "data"
CONFIG = f"""
name = "ha-steps"
title = "Soft post-processing steps"
minutes = 1
cluster = "{DATA / 'exp_tiny4.toml'}"
policies = ["RA", "FOLDING"]

[class.syn]
workload = "synthetic"
args = {{ phases = 3, mults = 10000000 }}

[arrivals]
rates = [1.0]
jobs = 3
mix = {{ syn = 1.0 }}
"""
PROFILE = {"W": 1.0, "alpha": 0.05, "beta": 0.1, "pmax": None, "phases": 3, "launch_s": 2.0,
           "launch_per_proc_s": 0.1, "teardown_s": 0.3}


def test_failing_availability_and_artifacts_leave_cells_done_and_are_redone(docker_engine, tmp_path, monkeypatch):
    path = tmp_path / "config.toml"
    path.write_text(CONFIG)
    config = cfg.load(path)
    logs: list[str] = []
    real_availability, real_artifacts = steps.availability, steps.segment_artifacts

    def availability_fails(*_args):
        raise ValueError("Length of values (2872) does not match length of index (2880)")

    def artifacts_fail_once(store, cell, seg, offset, result):
        if cell == 1:
            raise RuntimeError("timeline: cannot convert")
        real_artifacts(store, cell, seg, offset, result)

    monkeypatch.setattr(steps, "availability", availability_fails)
    monkeypatch.setattr(steps, "segment_artifacts", artifacts_fail_once)
    spec = cluster_spec(config).with_name("ha-steps")
    with ResultsStore.create(tmp_path / "r.sqlite", config.dump(), CONFIG) as store:
        runner = Runner(config, store, update=lambda *_a: None, log=logs.append)
        runner.cluster = lifecycle.up(spec)
        try:
            runner.hosts = list(runner.cluster.workstations)
            runner.calibration_id = store.add_calibration({"time": 0.0})
            runner.profiles = {"syn": PROFILE}
            store.set_profile("syn", PROFILE)
            runner.monitor = Monitor(runner.cluster, interval=1.0).start()
            runner.run_cells(cells(config))
        finally:
            runner._teardown()  # saves the monitor series and takes the cluster down
        frame = store.cells_frame()
        assert frame.status.tolist() == ["done", "done"], frame  # the second cell ran after the first's failures
        assert frame.stored_jobs.tolist() == [3, 3] and frame.segments.tolist() == [1, 1]
        assert (store.jobs_frame().status == "done").all()
        failed = {(f.cell_id, f.segment, f.step) for f in store.step_failures()}
        assert failed == {(1, 1, "artifacts"), (1, None, "availability"), (2, None, "availability")}
        assert "failed_steps" in frame and "availability: ValueError: Length of values" in frame.failed_steps[0]
        assert sum("failed: " in line for line in logs) == 3, logs
        assert "timeline-1.csv" not in store.artifacts(1) and "timeline-1.csv" in store.artifacts(2)

        monkeypatch.setattr(steps, "availability", real_availability)  # fixed: redo everything
        monkeypatch.setattr(steps, "segment_artifacts", real_artifacts)
        assert steps.redo(store, logs.append) == []
        assert store.step_failures() == []
        arts = store.artifacts(1)
        assert {"timeline-1.csv", "decisions-1.csv", "runs-1.csv"} <= set(arts)
        assert len(store.resizes(1)) == arts["decisions-1.csv"].count("Preempt(")  # one row per request
        assert arts["timeline-1.csv"].count(",finish,") == 3  # every job's finish, from the pickled record
        for cell in (1, 2):
            av = store.availability(cell)
            assert set(av["avg_avail_cpu"]) == set(runner.hosts) and av["t1"] > av["t0"]
