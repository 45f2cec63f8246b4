"""Owner bursts rendered from the seed: the same for every policy of a replication, shifted for
a resumed segment, floored for the engine, and replayed by the predictions."""
from __future__ import annotations

import pytest

from experiments import config as experiment_config
from experiments import owner_schedules
from experiments.arrivals import stream
from experiments.predict import ClassModel, predict
from scheduler.model import SevcikModel
from testbed.load.model import available_fraction

DEMO = "experiments/configs/demo.toml"


@pytest.fixture(scope="module")
def demo():
    return experiment_config.load(DEMO)


def test_the_demo_renders_its_owners_as_a_schedule(demo):
    assert demo.load.owner_mode == "schedule"
    steps = owner_schedules.rendered(demo, 0)
    assert sorted(steps) == ["ws7", "ws8"]
    for ws, sched in steps.items():
        assert {f for _, f in sched} <= {0.0, 1.0}
        # long enough to hold the owners' mean: M/M/1//1 with Z = 2, D = 0.4 leaves 5/6
        busy = sum(t1 - t0 for (t0, f), (t1, _) in zip(sched, sched[1:]) if f == 0.0)
        span = sched[-1][0]
        assert 1 - busy / span == pytest.approx(available_fraction(1, 2.0, 0.4), abs=0.02)


def test_replications_differ_and_rendering_repeats(demo):
    a, b = owner_schedules.rendered(demo, 0), owner_schedules.rendered(demo, 1)
    assert a["ws7"][:20] != b["ws7"][:20] and a["ws7"] != a["ws8"]
    assert owner_schedules.rendered(demo, 0) == a


def test_a_resumed_segment_sees_the_schedule_from_its_offset():
    sched = [(0.0, 1.0), (2.0, 0.0), (3.0, 1.0), (7.0, 0.0)]
    assert owner_schedules.shifted(sched, 2.5) == [(0.0, 0.0), (0.5, 1.0), (4.5, 0.0)]
    assert owner_schedules.shifted(sched, 0.0) == sched
    assert owner_schedules.shifted(sched, 9.0) == [(0.0, 0.0)]


def test_the_engine_gets_one_floored_schedule_per_host(demo):
    hosts = [f"ws{i}" for i in range(1, 9)]
    out = owner_schedules.for_engine(demo, 0, hosts)
    assert len(out) == 8 and all(s == [] for s in out[:6])
    assert min(f for _, f in out[6]) == owner_schedules.GUEST_FLOOR > 0


def test_a_job_through_a_burst_is_predicted_longer(demo):
    model = ClassModel("x", W=10.0, alpha=0.0, beta=0.0, phases=10, pmax=8)
    jobs = stream({"x": 1.0}, 0.05, 6, seed=3, replication=0)
    sched = owner_schedules.for_engine(demo, 0, [f"ws{i}" for i in range(1, 9)])
    free = predict(jobs, {"x": model}, "RA", 8)
    held = predict(jobs, {"x": model}, "RA", 8, schedule=sched)
    # every job spans ws7 and ws8 on 8 workstations: each loses what the bursts it met took
    assert all(h.execution_s >= f.execution_s - 1e-9 for h, f in zip(held, free))
    assert sum(h.execution_s > f.execution_s + 0.1 for h, f in zip(held, free)) >= 3
    assert sum(h.execution_s for h in held) / sum(f.execution_s for f in free) < 1 / 0.6
