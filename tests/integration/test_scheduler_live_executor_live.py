"""Integration: the live executor runs 6 short synthetic jobs on 4 live workstations.

The cluster is this module's own (t-live4: the shared t-hetero4 of conftest
may be in use by another test session), heterogeneous like it but with
smaller caps (0.6 core in all) and a shaped 20 Mbit/s link.

Under RA, EQUI and FOLDING every job must finish, and the measured run must
follow the policy: processor sets never overlap nor exceed P, resizes obey
the subset rule, no two mpiexecs ever share a workstation, each job's
executed starts/preempts/resizes are exactly the policy's actions for it,
and a fresh policy handed the recorded states in the measured order
answers the same (scheduler/live/audit.py). Printed per policy: mean
response, preemptions, resizes, decision time and reconfiguration costs.
"""
from __future__ import annotations

import time

import pytest

import testbed
from scheduler.live import Arrival, LiveExecutor
from experiments.traces.live_inputs import job_class
from scheduler.live.audit import check_actions, check_physical, check_timeline, replay

pytestmark = pytest.mark.integration

# Short jobs: 6 phases of 0.12 reference-seconds (split over the ranks) and 256 KiB to redistribute.
SHORT = job_class("short", {
    "argv": ["python3", "-m", "workloads.synthetic", "--phases", "6", "--work", "0.12",
             "--redist-bytes", str(256 * 1024)],
    "W": 2.0, "alpha": 1.0, "beta": 0.2, "pmax": 4,
})
ARRIVALS = [0.0, 0.5, 1.0, 1.9, 2.4, 3.3]  # the jobs overlap: EQUI and FOLDING preempt
RUN_TIMEOUT_S = 150.0


LIVE4 = {
    "name": "t-live4",
    "defaults": {"egress": "100mbit", "memory": "256MiB"},  # small: a job past it is killed (the last test)
    "classes": {"fast": 0.2, "medium": 0.15, "slow": 0.1},
    "workstation": [
        {"name": "ws1", "class": "fast"},
        {"name": "ws2", "class": "medium", "links": {"ws3": "20mbit"}},
        {"name": "ws3", "class": "medium"},
        {"name": "ws4", "class": "slow"},
    ],
}


@pytest.fixture(scope="module")
def live4(docker_engine):
    with testbed.cluster(testbed.from_dict(LIVE4)) as c:
        yield c


@pytest.fixture(scope="module")
def runs(live4):
    live_cluster = live4
    out = {}
    for policy in ("RA", "EQUI", "FOLDING"):
        arrivals = [Arrival(i, SHORT, t) for i, t in enumerate(ARRIVALS)]
        t0 = time.monotonic()
        result = LiveExecutor(arrivals, policy, live_cluster.job_launcher(), live_cluster.workstations,
                              live_cluster.controller_address, run_timeout_s=RUN_TIMEOUT_S,
                              connect_timeout_s=60.0, job_timeout_s=120.0).run()
        out[policy] = (result, arrivals, time.monotonic() - t0)
    return out


@pytest.mark.parametrize("policy", ["RA", "EQUI", "FOLDING"])
def test_live_stream_completes_and_follows_the_policy(runs, policy):
    result, arrivals, wall = runs[policy]
    s = result.summary()
    r = [x for x in result.resizes if x.kind in ("loser", "winner")]
    print(f"\n{policy}: {s['jobs']} jobs in {wall:.1f} s wall, mean response {s['mean_response']:.2f} s, "
          f"makespan {s['makespan']:.2f} s, preemptions {s['preemptions']}, resizes {s['resizes']} "
          f"({s['resizes_changed']} changed the set), policy calls {s['decisions']}, decide median "
          f"{s['decide_median_us']:.1f} us max {s['decide_max_us']:.1f} us, reconfiguration "
          + (f"median {s['reconfig_median_s']:.2f} s max {s['reconfig_max_s']:.2f} s, "
             f"{s['bytes_moved']} bytes moved" if r else "none"))
    print(result.timeline_dataframe().to_string())
    assert not result.failed, [(f.id, f.error) for f in result.failed]
    assert [j.id for j in result.jobs] == list(range(len(ARRIVALS)))
    for rec, state in zip(result.jobs, result.states):
        assert rec.submission <= rec.start < rec.finish, rec
        assert state.report.get("phases_done") == 6 and state.report.get("data_intact") is True, state
    assert check_timeline(result) == []
    assert check_physical(result) == []
    assert check_actions(result) == []
    assert replay(result, arrivals) == []
    assert len(result.decisions) >= 1 and all(d.seconds > 0 for d in result.decisions)
    if policy == "EQUI":  # Padhye & Dowdy §2.4: re-partition only once every preempted job has acknowledged
        for d in result.decisions:
            if any(type(a).__name__ == "Resize" for a in d.actions):
                assert d.state["preempting"] == [], (d.time, d.state)
    if policy == "RA":
        assert s["preemptions"] == 0 and s["resizes"] == 0
    else:  # the stream overlaps, so the dynamic policies do preempt and every resize was paid for
        assert s["preemptions"] > 0
        for x in r:
            assert x.ack_at >= x.sent_at >= x.requested_at and x.running_at > x.partition_at
            assert x.bytes_moved > 0


# 600 MiB of data to redistribute, made at the job's start: past any workstation's 256 MiB
HOG = job_class("hog", {
    "argv": ["python3", "-m", "workloads.synthetic", "--phases", "2", "--mults", "1000000",
             "--redist-bytes", str(600 << 20)],
    "W": 1.0, "alpha": 0.1, "beta": 0.0, "pmax": 1,
})
NEIGHBOUR = job_class("neighbour", {"argv": list(SHORT.argv), "W": 2.0, "alpha": 1.0, "beta": 0.2, "pmax": 3})


def test_a_job_past_its_workstations_memory_fails_as_out_of_memory_and_its_neighbour_finishes(live4):
    """Issue 19: the kernel kills the job's rank at the container's limit; the job fails with
    the reason, the job beside it finishes, and every workstation is still up."""
    arrivals = [Arrival(0, HOG, 0.0), Arrival(1, NEIGHBOUR, 0.5)]
    result = LiveExecutor(arrivals, "RA", live4.job_launcher(), live4.workstations, live4.controller_address,
                          run_timeout_s=RUN_TIMEOUT_S, connect_timeout_s=60.0, job_timeout_s=120.0).run()
    hog_hosts = {run.hosts for run in result.runs if run.job == 0}
    assert len(hog_hosts) == 1
    (host,) = hog_hosts.pop()
    assert {f.id: f.error for f in result.failed} == {0: f"out of memory on {host}"}
    (neighbour,) = [state for rec, state in zip(result.jobs, result.states) if rec.id == 1]
    assert neighbour.status == "done" and neighbour.report.get("data_intact") is True, neighbour
    assert all(live4.is_running(ws) for ws in live4.workstations)
