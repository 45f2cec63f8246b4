"""The runner with real jobs on the host's Open MPI: a good cell (RA) runs to its end, then a cell
whose policy starts a job on busy workstations while another job runs is marked failed with the
rule, the job and the time; the first cell and its jobs are kept (experiments/runner.py)."""
from __future__ import annotations

from pathlib import Path

import pytest

from experiments import config as cfg
from experiments.runner import Runner, cells
from experiments.store import ResultsStore
from testbed import lifecycle
from testbed.backends.local import LocalBackend, local_spec

pytestmark = pytest.mark.host_mpi  # real jobs on this host's Open MPI

DATA = Path(__file__).resolve().parents[1] / "data"
BUSY = '''
from scheduler.actions import Start
from scheduler.policy import Policy


class AllOnFirst(Policy):
    name = "ALL-ON-FIRST"

    def decide(self, snap):
        return [Start(job.id, (0,)) for job in snap.queue]
'''
CONFIG = f"""
name = "bad-policy-live"
title = "A rule-breaking policy's cell fails, the good cell is kept"
minutes = 1
cluster = "{DATA / 'exp_tiny4.toml'}"
policies = ["RA", "busy.py:AllOnFirst"]

[class.syn]
workload = "synthetic"
args = {{ phases = 4, mults = 2000000 }}

[arrivals]
rates = [2.0]
jobs = 2
mix = {{ syn = 1.0 }}
"""
PROFILE = {"W": 1.0, "alpha": 0.05, "beta": 0.1, "pmax": None, "phases": 4, "launch_s": 1.0,
           "launch_per_proc_s": 0.1, "teardown_s": 0.3}


def test_the_good_cell_is_kept_and_the_rule_breaking_cell_fails(tmp_path):
    (tmp_path / "busy.py").write_text(BUSY)
    path = tmp_path / "config.toml"
    path.write_text(CONFIG)
    config = cfg.load(path)
    with ResultsStore.create(tmp_path / "r.sqlite", config.dump(), CONFIG) as store, \
            lifecycle.cluster(local_spec(2), backend=LocalBackend(pool=False)) as cluster:  # this host's mpiexec
        runner = Runner(config, store, update=lambda *_a: None, log=lambda _line: None)
        runner.cluster = cluster
        runner.hosts = ["ws1", "ws2"]
        runner.calibration_id = store.add_calibration({"time": 0.0})
        runner.profiles = {"syn": PROFILE}
        store.set_profile("syn", PROFILE)
        runner.run_cells(cells(config))
        frame = store.cells_frame()
        jobs = store.jobs_frame()
    assert frame.status.tolist() == ["done", "failed"], frame
    assert frame.stored_jobs.tolist()[0] == 2 and (jobs[jobs.cell_id == 1].status == "done").all()
    reason = frame.error.tolist()[1]
    assert reason.startswith("PolicyError: policy ALL-ON-FIRST broke a rule at t=")
    assert reason.endswith("job 1 started on busy processors (0,)"), reason
