"""The live executor with the host's own Open MPI (workloads.host.launch.LocalLauncher): real malleable
MPI jobs and the real control channel, no containers. Quick checks of the event handling that the
cluster test (test_scheduler_live_executor_live.py) exercises more slowly."""
from __future__ import annotations

import pytest

from scheduler.live import Arrival, LiveExecutor
from experiments.traces.live_inputs import job_class
from scheduler.live.audit import audit, check_actions, check_physical, check_timeline, replay
from workloads.host.launch import LocalLauncher

pytestmark = pytest.mark.host_mpi  # real jobs on this host's Open MPI

HOSTS = ["ws1", "ws2", "ws3", "ws4"]
SHORT = job_class("short", {
    "argv": ["python3", "-m", "workloads.synthetic", "--phases", "6", "--mults", "2000000",
             "--redist-bytes", str(64 * 1024)],
    "W": 4.0, "alpha": 0.3, "beta": 0.1, "pmax": 4,
})
BROKEN = job_class("broken", {"argv": ["python3", "-c", "import sys; sys.exit(3)"], "pmax": 2})


def run(policy, arrivals, hosts=HOSTS):
    return LiveExecutor(arrivals, policy, LocalLauncher(), hosts, "127.0.0.1", run_timeout_s=120,
                        connect_timeout_s=60, job_timeout_s=60).run()


@pytest.mark.parametrize("policy, preempts", [("FOLDING", True), ("EQUI", True), ("DYN-EQUI", True),
                                              ("AEP(2)", False)])
def test_local_stream_follows_the_policy(policy, preempts):
    arrivals = [Arrival(i, SHORT, t) for i, t in enumerate([0.0, 0.3, 0.6, 1.5])]
    result = run(policy, arrivals)
    assert audit(result, arrivals) == []
    assert all(s.report["phases_done"] == 6 and s.report["data_intact"] for s in result.states)
    # overlapping arrivals: the dynamic policies preempt; A&S's adaptive ones never do
    assert (result.summary()["preemptions"] > 0) == preempts
    tl = result.timeline_dataframe()
    assert list(tl.columns) == ["time", "job", "event", "processors"] and tl.time.is_monotonic_increasing
    jobs = result.to_dataframe()
    assert (jobs.status == "done").all() and (jobs.finish_time > jobs.starting_time).all()


def test_a_failing_job_is_reported_and_the_others_still_run():
    arrivals = [Arrival(0, BROKEN, 0.0), Arrival(1, SHORT, 0.1)]
    result = run("RA", arrivals, HOSTS[:2])
    by_id = {s.id: s for s in result.states}
    assert by_id[0].status == "failed" and "exited 3" in by_id[0].error
    assert by_id[1].status == "done" and by_id[1].report["phases_done"] == 6
    assert [e.event for e in result.timeline if e.job == 0] == ["arrive", "start", "finish"]
    assert check_timeline(result) == [] and check_physical(result) == []
    assert check_actions(result) == [] and replay(result, arrivals) == []
    assert result.to_dataframe().status.tolist() == ["failed", "done"]


def test_an_exited_launch_keeps_neither_its_process_nor_its_channel():
    """A cell keeps its launches to its end; each held its pipes, queues and lines (~40 KB, the soak's growth)."""
    arrivals = [Arrival(i, SHORT, t) for i, t in enumerate([0.0, 0.3, 0.6])]
    ex = LiveExecutor(arrivals, "EQUI", LocalLauncher(), HOSTS, "127.0.0.1", run_timeout_s=120,
                      connect_timeout_s=60, job_timeout_s=60)
    result = ex.run()
    assert audit(result, arrivals) == []
    launches = [launch for job in ex.jobs for launch in job.launches]
    assert len(launches) > len(arrivals)  # EQUI relaunched some
    assert all(launch.handle is None and launch.conn is None for launch in launches)
    assert all(launch.exit_code == 0 for launch in launches)
    assert ex.server._arrivals == {}  # no finished job's queue of hellos kept


def test_a_stream_on_the_local_backends_pool_preempts_and_loses_nothing(tmp_path, monkeypatch):
    """The same stream through the testbed's local backend (what `nowlab execute --local P` runs):
    one Cluster handle, its jobs on the resident pool of this host's ranks, as a cluster's are."""
    from testbed import lifecycle
    from testbed.backends.local import LocalBackend, local_spec

    monkeypatch.setenv("NOWLAB_HOME", str(tmp_path))
    # closer than above: a launch on the pool takes tens of ms where an mpiexec took about a second
    # work in reference-seconds, so the jobs still overlap on a fast, quiet host (in mults, 6
    # phases ended before the next arrival there and EQUI had nothing to preempt)
    steady = job_class("steady", {
        "argv": ["python3", "-m", "workloads.synthetic", "--phases", "6", "--work", "0.25",
                 "--redist-bytes", str(64 * 1024)],
        "W": 1.5, "alpha": 0.3, "beta": 0.1, "pmax": 4})
    arrivals = [Arrival(i, steady, t) for i, t in enumerate([0.0, 0.05, 0.1, 0.4])]
    with lifecycle.cluster(local_spec(len(HOSTS)), backend=LocalBackend()) as here:
        result = LiveExecutor(arrivals, "EQUI", here.job_launcher(), here.workstations, here.controller_address,
                              run_timeout_s=120, connect_timeout_s=60, job_timeout_s=60,
                              allowed_networks=[here.control_network]).run()
    assert audit(result, arrivals) == []
    assert all(s.report["phases_done"] == 6 and s.report["data_intact"] for s in result.states)
    assert result.summary()["preemptions"] > 0 and (result.to_dataframe().status == "done").all()
