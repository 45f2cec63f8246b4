"""The Section 6 saturation rule and measurement window, on the real engine."""
from __future__ import annotations

import math

import numpy as np
import pytest

from experiments.studies.anastasiadis_sevcik.replication import (
    KS,
    ReplicationTask,
    run_replication,
    simulate_prefix,
)
from experiments.studies.anastasiadis_sevcik.saturation import Window, is_saturated, prefix_is_exact
from experiments.studies.anastasiadis_sevcik.spec import WORKLOADS, GeneratorSpec
from experiments.studies.anastasiadis_sevcik.workload import generate, stream_seed

GEN = GeneratorSpec()


def _task(policy: str, load: float, workload: str = "WK1", jobs: int = 600, warmup: int = 100,
          extra: int = 300, rep: int = 0) -> ReplicationTask:
    return ReplicationTask(GEN, workload, load, policy, rep, 11, jobs, warmup, extra)


def test_rule_on_hand_made_times():
    w = Window(warmup_jobs=2, jobs_per_replication=5, saturation_extra_jobs=3)
    arrival = np.arange(8, dtype=float)  # the last additional job arrives at t = 7
    assert not is_saturated(w, arrival, np.array([3.0, 5.0, 7.0]))
    assert is_saturated(w, arrival, np.array([3.0, 7.5, 6.0]))
    assert is_saturated(w, arrival, np.array([3.0, math.nan, 6.0]))  # never finished
    with pytest.raises(ValueError, match="measured finish times"):
        is_saturated(w, arrival, np.array([1.0]))


def test_overloaded_stream_is_saturated():
    """Offered load 130% with one processor per job: occupied capacity is 1.3 P
    by construction, so the backlog grows without bound."""
    r = run_replication(_task("SDF-MAX1", 1.3))
    assert r.saturated and math.isinf(r.response_ks)
    assert r.actual_load > 1.0  # the measured occupancy confirms the construction
    assert r.jobs_simulated >= 900  # it had to see every additional job to say so


def test_light_load_is_not_saturated():
    r = run_replication(_task("DYN-EQUI", 0.3))
    assert not r.saturated and math.isfinite(r.response_ks)
    assert r.response_ks >= r.run_ks > 0


@pytest.mark.parametrize("policy,load", [("ASP(1)", 0.7), ("DYN-EQUI", 0.9), ("SDF", 0.5)])
def test_prefix_gives_the_same_answer_as_the_whole_stream(policy, load):
    """Simulating only the jobs that can affect the measured ones changes nothing."""
    task = _task(policy, load, workload="WK4", jobs=1500, warmup=150, extra=1500)
    r = run_replication(task)
    w = task.window
    stream = generate(GEN, WORKLOADS["WK4"], load, w.total_jobs, stream_seed(11, WORKLOADS["WK4"], 0))
    records = simulate_prefix(stream, w.total_jobs, policy, GEN.processors)
    idx = range(w.warmup_jobs, w.jobs_per_replication)
    finish = np.array([records[i].finish / KS for i in idx])
    assert r.saturated == is_saturated(w, stream.arrival_ks, finish)
    if not r.saturated:
        assert r.response_ks == pytest.approx(np.mean(finish - stream.arrival_ks[w.measured]), rel=1e-12)
        assert r.jobs_simulated <= 2 * w.total_jobs


def test_prefix_exactness_condition():
    arrival = np.array([0.0, 1.0, 2.0, 3.0])
    assert prefix_is_exact(arrival, 2, 2.0)  # job 2 arrives exactly when the last measured job ends
    assert not prefix_is_exact(arrival, 2, 2.5)
    assert prefix_is_exact(arrival, 4, 99.0)  # the whole stream is always exact
