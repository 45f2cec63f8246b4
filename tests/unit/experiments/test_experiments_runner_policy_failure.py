"""A live cell whose policy breaks a rule is marked failed with the one line naming the rule, the
job and the time, and the run goes on with its next cell (experiments/runner.py). The runner's
own code on a local cluster (this host's mpiexec, testbed/backends/local/) and policies that break their rule at their first
decision, so no MPI job starts; tests/integration/test_experiments_runner_policy_failure_local.py
runs one with real jobs beside a good cell."""
from __future__ import annotations

from pathlib import Path

from experiments import config as cfg
from experiments.runner import Runner, cells
from experiments.store import ResultsStore
from testbed import lifecycle
from testbed.backends.local import LocalBackend, local_spec

DATA = Path(__file__).resolve().parents[2] / "data"
BAD = '''
from scheduler.actions import Resize
from scheduler.policy import Policy


class NotAnAction(Policy):
    name = "NOT-AN-ACTION"

    def decide(self, snap):
        return [f"start {job.id}" for job in snap.queue]


class ResizeQueued(Policy):
    name = "RESIZE-QUEUED"

    def decide(self, snap):
        return [Resize(job.id, (0,)) for job in snap.queue]
'''
CONFIG = f"""
name = "bad-policy"
title = "A rule-breaking policy's cell fails, the run goes on"
minutes = 1
cluster = "{DATA / 'exp_tiny4.toml'}"
policies = ["policies/bad.py:NotAnAction", "policies/bad.py:ResizeQueued"]

[class.syn]
workload = "synthetic"
args = {{ phases = 3, mults = 1000000 }}

[arrivals]
rates = [20.0]
jobs = 2
mix = {{ syn = 1.0 }}
"""
PROFILE = {"W": 1.0, "alpha": 0.05, "beta": 0.1, "pmax": None, "phases": 3, "launch_s": 2.0,
           "launch_per_proc_s": 0.1, "teardown_s": 0.3}


def test_a_rule_breaking_policy_fails_its_cell_and_the_next_cell_runs(tmp_path):
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "bad.py").write_text(BAD)
    path = tmp_path / "config.toml"
    path.write_text(CONFIG)
    config = cfg.load(path)  # the policy files are found beside the config, whatever the working folder
    bad = (tmp_path / "policies" / "bad.py").resolve()
    assert config.policies == [f"{bad}:NotAnAction", f"{bad}:ResizeQueued"]
    logs: list[str] = []
    with ResultsStore.create(tmp_path / "r.sqlite", config.dump(), CONFIG) as store, \
            lifecycle.cluster(local_spec(2), backend=LocalBackend(pool=False)) as cluster:  # this host's mpiexec
        runner = Runner(config, store, update=lambda *_a: None, log=logs.append)
        runner.cluster = cluster
        runner.hosts = ["ws1", "ws2"]
        runner.calibration_id = store.add_calibration({"time": 0.0})
        runner.profiles = {"syn": PROFILE}
        store.set_profile("syn", PROFILE)
        runner.run_cells(cells(config))  # returns: neither cell stops the run
        frame = store.cells_frame()
    assert frame.status.tolist() == ["failed", "failed"], frame
    first, second = frame.error.tolist()
    assert first.startswith("PolicyError: policy NOT-AN-ACTION broke a rule at t=")
    assert "decide must return a list of Start, Preempt or Resize; item 0 is 'start 0'" in first
    assert second.startswith("PolicyError: policy RESIZE-QUEUED broke a rule at t=")
    assert second.endswith("resize of job 0 which is queued")
    assert sum(" failed: PolicyError: policy " in line for line in logs) == 2, logs


def test_a_config_names_a_policy_file_beside_it_and_a_missing_one_is_one_line(tmp_path):
    import pytest

    guide = cfg.load(DATA.parents[1] / "docs" / "examples" / "your-policy.toml")
    sjf = (DATA.parents[1] / "docs" / "examples" / "sjf_half.py").resolve()
    assert guide.policies == ["RA", "FOLDING", f"{sjf}:ShortestFirstHalf"]
    path = tmp_path / "config.toml"
    path.write_text(CONFIG.replace("policies/bad.py:NotAnAction", "policies/nope.py:NotAnAction"))
    with pytest.raises(cfg.ConfigError, match=r"^policies\[0\]: no such file .*policies/nope\.py$"):
        cfg.load(path)
    path.write_text(CONFIG.replace('"policies/bad.py:NotAnAction", ', '"json:JSONDecoder", '))
    with pytest.raises(cfg.ConfigError, match="policies: JSONDecoder in json is not a scheduler.policy.Policy"):
        cfg.load(path)
