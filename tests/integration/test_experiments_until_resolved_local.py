"""`--until-resolved` through the runner's own code (experiments/runner.py, experiments/live.py) on a local
cluster: real RA and Folding jobs on this host's mpiexec, two workstations, no Docker (about 10-15 s a test:
each sitting is a Python process that starts a cluster, and each cell a real mpiexec). Each sitting is a
process of its own (SITTING below), so one can be killed with SIGKILL mid-round as a user's runner would be.
The claim is scripted (it resolves once a set number of replications are complete) so the stop is known;
the real judge of the measured jobs is run on the finished store as well."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from experiments.store import ResultsStore

pytestmark = pytest.mark.host_mpi  # real jobs on this host's Open MPI

ROOT = Path(__file__).resolve().parents[2]
CONFIG = """
name = "until-resolved"
title = "Rounds until a claim resolves"
minutes = 1
cluster = "{cluster}"
policies = ["RA", "FOLDING"]

[class.syn]
workload = "synthetic"
args = {{ phases = 2, mults = 200000 }}

[arrivals]
rates = [20.0]
jobs = 1
mix = {{ syn = 1.0 }}

[[claim]]
text = "RA's response below Folding's"
metric = "response"
lower = "RA"
than = "FOLDING"
"""
SITTING = '''
"""One sitting of --until-resolved on a local cluster: argv = config, store, resolve-at, max replications."""
import sys
from pathlib import Path

from experiments import config as cfg
from experiments import until_resolved as ur
from experiments.live import UntilResolved
from experiments.report import measured_claims
from experiments.reporting.claims import Check, Claim, Method
from experiments.runner import Runner
from experiments.store import ResultsStore
from testbed import lifecycle
from testbed.backends.local import LocalBackend, local_spec

PROFILE = {"W": 0.3, "alpha": 0.05, "beta": 0.1, "pmax": None, "phases": 2, "launch_s": 0.5,
           "launch_per_proc_s": 0.1, "teardown_s": 0.2}
config_path, store_path, resolve_at, cap = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
config = cfg.load(config_path)


def scripted(store, have):
    """The claim resolves (exactly) once `resolve_at` replications are complete; the real judge runs too."""
    real = measured_claims(store, have)
    margin = 1.0 if len(have) >= resolve_at else 0.0
    return [Claim(real[0].statement, (Check("scripted", margin, 0.5, len(have), Method.PAIRED),))]


store = (ResultsStore.open(store_path) if store_path.exists()
         else ResultsStore.create(store_path, config.dump(), config_path.read_text(), "local"))
with store, lifecycle.cluster(local_spec(2), backend=LocalBackend(pool=False)) as cluster:
    for cell in store.interrupt_running("the runner stopped without clean-up (killed or crashed)"):
        print(f"cell {cell} was left running: marked interrupted", flush=True)
    rounds = UntilResolved(store, config, ur.Limits(budget_s=600, max_replications=cap),
                           log=lambda line: print(line, flush=True), judge=scripted)
    for line in rounds.plan_lines():
        print(line, flush=True)
    runner = Runner(config, store, update=lambda *_a: None, log=lambda line: print(line, flush=True))
    runner.cluster, runner.hosts = cluster, list(cluster.workstations)
    runner.calibration_id = store.add_calibration({"time": 0.0})
    runner.profiles = {"syn": PROFILE}
    store.set_profile("syn", PROFILE)
    runner.run_rounds(rounds)
'''


@pytest.fixture
def setup(tmp_path):
    (tmp_path / "cluster.toml").write_text('name = "ur"\n[[workstation]]\nname = "ws"\ncount = 2\n')
    config = tmp_path / "config.toml"
    config.write_text(CONFIG.format(cluster=tmp_path / "cluster.toml"))
    script = tmp_path / "sitting.py"
    script.write_text(SITTING)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NOWLAB_HOME": str(tmp_path / "home")}
    return config, tmp_path / "r.sqlite", script, env


def sitting(setup, resolve_at: int, cap: int) -> subprocess.Popen:
    config, store, script, env = setup
    return subprocess.Popen([sys.executable, str(script), str(config), str(store), str(resolve_at), str(cap)],
                            env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)  # its own group: its mpiexecs die with it


def cells(store: Path) -> list[tuple]:
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as db:
        return db.execute("SELECT c.id, c.policy, c.replication, c.status, "
                          "(SELECT COUNT(*) FROM segments s WHERE s.cell_id = c.id), "
                          "(SELECT COUNT(*) FROM jobs j WHERE j.cell_id = c.id) FROM cells c ORDER BY c.id").fetchall()


def test_rounds_run_interleaved_until_the_scripted_claim_resolves(setup):
    proc = sitting(setup, resolve_at=2, cap=10)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, out
    rows = cells(setup[1])
    assert [(p, rep, st) for _, p, rep, st, _, _ in rows] == [
        (p, rep, "done") for rep in range(2) for p in ("RA", "FOLDING")], out  # whole rounds, interleaved
    assert all(jobs == 1 for *_, jobs in rows)
    assert "power analysis at 0 complete replications" in out and "cannot tell yet" in out
    assert "stopped: every claim is resolved at 2 replications" in out and "still unresolved: 1 of 1" in out
    from experiments.report import measured_claims
    with ResultsStore.open(setup[1], readonly=True) as store:
        real = measured_claims(store, [0, 1])
    assert [c.n for c in real[0].checks] == [2] and str(real[0].checks[0].test) == "paired t"


def test_a_sigkill_mid_round_neither_loses_nor_repeats_a_replication(setup):
    store = setup[1]
    proc = sitting(setup, resolve_at=99, cap=2)  # never resolves: runs to the cap of 2
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:  # mid-round: replication 1 started, its first cell done, the next running
        rows = cells(store) if store.exists() else []
        if any(rep == 1 and p == "RA" and st == "done" for _, p, rep, st, _, _ in rows) and \
                any(rep == 1 and p == "FOLDING" and st == "running" for _, p, rep, st, _, _ in rows):
            break
        time.sleep(0.05)
    else:
        proc.kill()
        pytest.fail("the first sitting never reached the middle of replication 1")
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    before = {(p, rep): (st, segs) for _, p, rep, st, segs, _ in cells(store)}
    again = sitting(setup, resolve_at=99, cap=2)
    out, _ = again.communicate(timeout=120)
    assert again.returncode == 0, out
    assert "was left running: marked interrupted" in out and "completing replication 1 (1 cell left)" in out
    rows = cells(store)
    keys = [(p, rep) for _, p, rep, *_ in rows]
    assert len(keys) == len(set(keys)) and sorted(keys) == sorted((p, r) for r in range(2) for p in ("RA", "FOLDING"))
    assert all(st == "done" and jobs == 1 for _, _, _, st, _, jobs in rows), rows
    after = {(p, rep): segs for _, p, rep, _, segs, _ in rows}
    for key, (st, segs) in before.items():  # what was done was not run again; the killed cell went on
        assert after[key] == (segs if st == "done" else segs + 1), (key, before, after)
    assert "stopped: the cap of replications is reached (2)" in out
