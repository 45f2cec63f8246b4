"""`nowlab batsim --live` on a 4-workstation local cluster (this host's Open MPI, no containers):
pybatsim's bundled schedulers, unchanged, drive real jobs, and the same workload served simulated
stands beside the measured one.

The workload: six delay jobs of 0.5-2 s and one parallel_homogeneous job (0.3 reference-seconds
of compute per rank, then 1 MB to each other rank: 0.3 s + 8 * 1e6 * 2 / 1e9 = 0.316 s simulated
on the local platform's 1 reference core and 1 Gbit/s). Submitted from 0.2 s (pybatsim's
batsim.sched schedulers assert that an allocation starts after 0). pybatsim runs with -t 10000
(tests/batsim_harness.py): its 2 s default would stop it while a live job runs.
"""
from __future__ import annotations

import json

import pandas as pd
import pytest

from batsim_harness import scheduler, write_workload
from experiments.batsim.platform import from_cluster_spec
from experiments.batsim.report import beside, table_rows
from experiments.batsim.run import read_input, serve
from experiments.traces.intervals import format_intervals, parse_intervals
from testbed import lifecycle
from testbed.backends.local import LocalBackend, local_spec

pytestmark = pytest.mark.host_mpi  # real jobs on this host's Open MPI
pytest.importorskip("batsim.batsim", reason="pybatsim is not installed (scripts/bootstrap.sh installs it)")

# id, subtime, res, profile, walltime
JOBS = [(1, 0.2, 2, "d1", 5), (2, 0.2, 4, "d0.5", 5), (3, 0.3, 1, "d1.5", 5), (4, 0.3, 1, "d2", 6),
        (5, 0.4, 2, "d0.5", 3), (6, 0.5, 1, "d1", 4), (7, 0.5, 3, "ptask", 10)]
PROFILES = {"d0.5": {"type": "delay", "delay": 0.5}, "d1": {"type": "delay", "delay": 1},
            "d1.5": {"type": "delay", "delay": 1.5}, "d2": {"type": "delay", "delay": 2},
            "ptask": {"type": "parallel_homogeneous", "cpu": 3e8, "com": 1e6}}
LAUNCH_SLACK_S = 1.0
"""A live delay job's run beyond its simulated time: the pool's launch, its ranks' exit, this loop's 10 ms polls."""
COMPUTE_SLACK_S = 4.0
"""The same for the parallel_homogeneous job, which also computes: the local backend has no CPU caps, so its
reference work takes what this host gives 3 ranks on 2 cores shared with whatever else runs (1.4-1.6 s
beyond the model's 0.316 s, measured here)."""


@pytest.fixture
def local4(tmp_path, monkeypatch):
    monkeypatch.setenv("NOWLAB_HOME", str(tmp_path / "home"))
    with lifecycle.cluster(local_spec(4, name="batsim-live"), backend=LocalBackend()) as c:
        yield c


def workload(tmp_path):
    return write_workload(tmp_path / "w.json", [{"id": i, "subtime": t, "res": r, "profile": p, "walltime": w}
                                                for i, t, r, p, w in JOBS], PROFILES)


def executed(messages_jsonl) -> dict[str, str]:
    """job -> allocation, as the scheduler's EXECUTE_JOB decisions gave them."""
    out = {}
    for line in messages_jsonl.read_text().splitlines():
        m = json.loads(line)
        if m["direction"] == "to_batsim":
            for e in json.loads(m["text"])["events"]:
                if e["type"] == "EXECUTE_JOB":
                    out[e["data"]["job_id"]] = format_intervals(parse_intervals(e["data"]["alloc"]))
    return out


@pytest.mark.parametrize("name", ["schedFcfs", "easyBackfill"])
def test_pybatsim_drives_real_jobs_and_the_measured_times_sit_beside_the_simulated(tmp_path, local4, name):
    w = read_input(workload(tmp_path))
    platform = from_cluster_spec(local4.state.cluster_spec, capped=False)
    with scheduler("pybatsim", name, tmp_path) as (endpoint, proc):
        sim = serve(w, platform, endpoint=endpoint, timeout_s=10, out_dir=tmp_path / "sim")
        assert proc.wait(timeout=10) == 0
    with scheduler("pybatsim", name, tmp_path) as (endpoint, proc):
        live = serve(w, platform, endpoint=endpoint, timeout_s=10, out_dir=tmp_path / "live", keep_messages=True,
                     launcher=local4.job_launcher())
        assert proc.wait(timeout=10) == 0, (tmp_path / f"scheduler-{name}.log").read_text()[-2000:]
    assert sim.error is None and live.error is None, (sim.error, live.error)
    jobs = pd.read_csv(live.jobs_csv, dtype={"allocated_resources": str})
    assert (jobs.final_state == "COMPLETED_SUCCESSFULLY").all(), jobs.to_dict("records")
    # the allocations written are the scheduler's, job by job
    decided = executed(live.messages_jsonl)
    assert {f"w0!{j}": a for j, a in zip(jobs.job_id, jobs.allocated_resources)} == decided
    assert (jobs.requested_number_of_resources == jobs.allocated_resources.map(
        lambda a: len(parse_intervals(a)))).all()
    rows = beside(live.records, live.simulated_run_s, sim.records)
    print(f"\n{name}: job, state, alloc, start, finish, run, model run, excess, sim alloc, sim start, sim finish")
    for cells in table_rows(rows):
        print("  " + " | ".join(cells))
    for r in rows:
        assert r.start_s >= next(j[1] for j in JOBS if f"w0!{j[0]}" == r.job)  # not before its submission
        slack = COMPUTE_SLACK_S if r.job == "w0!7" else LAUNCH_SLACK_S
        # a delay job runs at least its delay; the compute job (reference work, no CPU cap on the
        # local backend) runs faster than its model on a host faster than the reference
        floor = -r.model_run_s if r.job == "w0!7" else 0.0
        assert floor < r.run_excess_s < slack, r  # measured: not below what it can be, and not far above
        assert r.sim_state == "COMPLETED_SUCCESSFULLY" and r.sim_start_s is not None
    measured = max(r.finish_s for r in rows)
    simulated = max(r.sim_finish_s for r in rows)
    compute = next(r.model_run_s for r in rows if r.job == "w0!7")
    assert simulated - compute <= measured < simulated + 3 * LAUNCH_SLACK_S + COMPUTE_SLACK_S


def test_a_call_is_a_timer_a_kill_and_a_walltime_stop_real_jobs(tmp_path, local4):
    # choreo (tests/batsim_scripted_scheduler.py): w0!1 (10 s) on 0-1 with a call 4 s later that kills it;
    # w0!2 (3 s, walltime 1) on 2 is stopped at its walltime; w0!3 (wider than the machine) is rejected.
    path = write_workload(tmp_path / "w.json", [{"id": 1, "subtime": 0.1, "res": 2, "profile": "d10"},
                                                {"id": 2, "subtime": 0.1, "res": 1, "profile": "d3", "walltime": 1},
                                                {"id": 3, "subtime": 0.1, "res": 5, "profile": "d3"}],
                          {"d10": {"type": "delay", "delay": 10}, "d3": {"type": "delay", "delay": 3}})
    platform = from_cluster_spec(local4.state.cluster_spec, capped=False)
    with scheduler("scripted", "choreo", tmp_path) as (endpoint, _):
        live = serve(read_input(path), platform, endpoint=endpoint, timeout_s=10, out_dir=tmp_path / "o",
                     launcher=local4.job_launcher())
    assert live.error is None
    got = {r.id: r for r in live.records}
    one, two = got["w0!1"], got["w0!2"]
    assert one.final_state == "COMPLETED_KILLED" and 4.0 <= one.finish_s - one.start_s < 4.0 + LAUNCH_SLACK_S
    assert two.final_state == "COMPLETED_WALLTIME_REACHED" and 1.0 <= two.finish_s - two.start_s < 1.0 + LAUNCH_SLACK_S
    assert got["w0!3"].final_state == "REJECTED"


def test_a_scheduler_that_misbehaves_live_stops_the_jobs_and_the_files_hold_what_was_measured(tmp_path, local4):
    # busy: w0!1 on 0-1 (it runs, 10 s), then w0!2 on 1-2, which w0!1 holds: the run stops there.
    path = write_workload(tmp_path / "w.json", [{"id": 1, "subtime": 0.1, "res": 2, "profile": "d10"},
                                                {"id": 2, "subtime": 0.6, "res": 2, "profile": "d10"}],
                          {"d10": {"type": "delay", "delay": 10}})
    platform = from_cluster_spec(local4.state.cluster_spec, capped=False)
    with scheduler("scripted", "busy", tmp_path) as (endpoint, _):
        live = serve(read_input(path), platform, endpoint=endpoint, timeout_s=10, out_dir=tmp_path / "o",
                     launcher=local4.job_launcher())
    assert live.error is not None and "data.alloc: '1-2' asks for busy resources (w0!1 on 1)" in live.error
    assert live.stats.simulation_time_s < 5  # stopped at once, not after w0!1's 10 s
    assert list(live.stopped_at_end) == ["w0!1"] and live.stopped_at_end["w0!1"] is not None  # its processes exited
    jobs = pd.read_csv(live.jobs_csv, dtype={"allocated_resources": str}).set_index("job_id")
    assert jobs.final_state.to_dict() == {1: "RUNNING", 2: "SUBMITTED"}
    assert jobs.starting_time[1] > 0.1 and jobs.allocated_resources[1] == "0-1" and pd.isna(jobs.finish_time[1])
