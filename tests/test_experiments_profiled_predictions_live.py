"""Integration: predictions from a profile alone against a live run, and the overhead knob live.

One small cluster of this module's own (hf-pred4: 4 workstations of 0.07
core, 100 Mbit/s). The class is profiled on it exactly as an experiment
does (`experiments.profiles.measure`: T(p), launch, start-up, resizes),
then an EQUI stream of 6 jobs runs live and is predicted from that profile
alone. Checked: the live executor follows Padhye & Dowdy's §2.4 (no
re-partition while any job is still to acknowledge), and EQUI's preemptions
per job, live and predicted, are printed and compared. With 6 jobs one
preemption more or less on one job moves the mean by 6%, and the host is
shared, so the bound asserted is loose (PREEMPTION_TOLERANCE); the issue's
10% is for a full experiment's cell. Takes about a minute
and a half.
"""
from __future__ import annotations

import time

import pytest

import testbed
from experiments.config import ClassSpec, Profiling
from experiments.models.resize import ResizeFit
from experiments.predict import ClassModel, predict
from experiments.profiles import ResizeScript, measure
from experiments.records import StreamJob
from scheduler.live import Arrival, LiveExecutor
from scheduler.live.stream import JobClass, PmaxOnlyModel

pytestmark = pytest.mark.integration

SPEC = {"name": "hf-pred4", "defaults": {"egress": "100mbit"}, "classes": {"ws": 0.07},
        "workstation": [{"name": f"ws{i}", "class": "ws"} for i in range(1, 5)]}
CLASS = ClassSpec(workload="synthetic", args={"phases": 6, "work": 0.25, "redist_bytes": 262144}, pmax=4)
KNOB_CLASS = ClassSpec(workload="synthetic", args={"phases": 3, "work": 0.2, "redist_bytes": 262144}, pmax=2)
# Profiled at 2, 3 and 4: the three points fit T(p) = W/p + alpha + beta p as well as 1, 2 and 4
# do, and skip the one-workstation run, 40 s of the test's time at 0.07 core.
PROFILE = Profiling(procs=[2, 3, 4], reps=1)
ARRIVALS = [0.0, 1.0, 2.0, 4.0, 5.5, 7.5]
PREEMPTION_TOLERANCE = 0.35  # relative, on 6 jobs (see the module docstring)


@pytest.fixture(scope="module")
def pred4(docker_engine):
    with testbed.cluster(testbed.from_dict(SPEC)) as c:
        yield c


def test_overhead_knob_delays_launches_and_relaunches_live(pred4):
    job = Arrival(0, JobClass("syn", tuple(KNOB_CLASS.argv(1.0)), PmaxOnlyModel(2)), 0.0)
    res = LiveExecutor([job], ResizeScript([2, 1, 2]), pred4.job_launcher(), pred4.workstations[:2], pred4.controller_address,
                       run_timeout_s=120, launch_delay_s=1.0, resize_delay_s=0.5).run()
    state, record = res.states[0], res.jobs[0]
    assert state.status == "done", state.error
    resized = [r for r in res.resizes if r.kind in ("loser", "winner")]
    assert len(resized) == 2
    assert state.overhead_s == pytest.approx(1.0 + 2 * 0.5)  # recorded in the job's record
    assert res.to_dataframe().overhead_s.tolist() == [pytest.approx(2.0)]
    first = min(r.launched_at for r in res.runs)
    assert first - record.start >= 1.0  # the job's start is the decision; mpiexec waited the knob's second
    for r in resized:  # each relaunch waited at least the knob's half second after its old mpiexec exited
        assert r.relaunched_at - r.exited_at >= 0.5
    print(f"knob: launch waited {first - record.start:.2f} s, relaunches "
          f"{', '.join(f'{r.relaunched_at - r.exited_at:.2f}' for r in resized)} s after the exits")


def test_equi_preemptions_live_and_predicted_from_the_profile(pred4):
    t0 = time.monotonic()
    profile = measure(pred4, pred4.workstations, "syn", CLASS, PROFILE, "hf-pred4",
                      lambda _m: None)
    argv = tuple(CLASS.argv(1.0))
    arrivals = [Arrival(i, JobClass("syn", argv, PmaxOnlyModel(4)), a) for i, a in enumerate(ARRIVALS)]
    live = LiveExecutor(arrivals, "EQUI", pred4.job_launcher(), pred4.workstations, pred4.controller_address,
                        run_timeout_s=300).run()
    assert all(s.status == "done" for s in live.states), [s.error for s in live.states]
    # §2.4: the scheduler re-partitions only once every preempted job has acknowledged
    for d in live.decisions:
        if any(type(a).__name__ == "Resize" for a in d.actions):
            assert d.state["preempting"] == [], (d.time, d.state)
    fit = ResizeFit.from_dict(profile["resize"])
    model = ClassModel("syn", W=profile["W"], alpha=profile["alpha"], beta=profile["beta"], pmax=4,
                       phases=int(profile["phases"]), launch_s=profile["launch_s"],
                       launch_per_proc_s=profile["launch_per_proc_s"], teardown_s=profile["teardown_s"],
                       release_s=fit.release_s, resize=fit, startup_s=profile["startup_s"])
    predicted = predict([StreamJob(i, "syn", a) for i, a in enumerate(ARRIVALS)], {"syn": model}, "EQUI", 4)
    live_pre = sum(r.preemptions for r in live.jobs) / len(live.jobs)
    sim_pre = sum(o.preemptions for o in predicted) / len(predicted)
    print(f"\nEQUI preemptions per job: live {live_pre:.2f}, predicted {sim_pre:.2f} "
          f"({(sim_pre - live_pre) / live_pre:+.0%}); start-up {profile['startup_s']:.2f} s, resize "
          f"{fit.fixed_s:.2f} s + {fit.per_proc_s:.2f} s/p; took {time.monotonic() - t0:.0f} s")
    for r, o in zip(live.jobs, predicted):
        print(f"  job {r.id}: live {r.start:5.1f}-{r.finish:5.1f} ({r.preemptions}), "
              f"predicted {o.start:5.1f}-{o.finish:5.1f} ({o.preemptions})")
    assert abs(sim_pre - live_pre) <= PREEMPTION_TOLERANCE * live_pre
