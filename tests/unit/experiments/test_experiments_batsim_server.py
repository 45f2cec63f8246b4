"""pybatsim 3.2.1's bundled FCFS and EASY backfilling schedulers, unchanged, against nowlab's Batsim side.

Each test starts the scheduler as its own process (`pybatsim NAME -s tcp://127.0.0.1:PORT`) and
serves it over a real ZeroMQ socket; the schedules below were worked out by hand from the
schedulers' code (batsim/sched/algorithms/filling.py for schedFcfs, schedulers/easyBackfill.py)
and the server's rules (completions before submissions at one instant).

The workload: 4 workstations of 1 reference core (1e9 flop/s) and 100 Mbit/s. Job 5 is wider
than the machine; job 6 returns 1 (fails); job 7 is parallel_homogeneous, 1e9 flop and 12.5 MB
to each other rank on 3 resources: 1 s of compute + 8 * 12.5e6 * 2 / 1e8 = 2 s of traffic = 3 s;
job 8 runs 6 s with a walltime of 5 (stopped at it).
"""
from __future__ import annotations

import pandas as pd
import pytest

from batsim_harness import scheduler, write_workload
from experiments.batsim.platform import uniform
from experiments.batsim.run import read_input, serve

pytest.importorskip("batsim.batsim", reason="pybatsim is not installed (scripts/bootstrap.sh installs it)")

# id, subtime, res, profile, walltime
JOBS = [(1, 1, 2, "d10", 20), (2, 2, 4, "d5", 10), (3, 3, 1, "d3", 5), (4, 3, 2, "d4", 6), (5, 4, 5, "d1", 2),
        (6, 12, 1, "d2fail", 3), (7, 13, 3, "ptask", 10), (8, 14, 1, "d6", 5)]
PROFILES = {"d10": {"type": "delay", "delay": 10}, "d5": {"type": "delay", "delay": 5},
            "d3": {"type": "delay", "delay": 3}, "d4": {"type": "delay", "delay": 4},
            "d1": {"type": "delay", "delay": 1}, "d2fail": {"type": "delay", "delay": 2, "ret": 1},
            "ptask": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 12.5e6},
            "d6": {"type": "delay", "delay": 6}}

OK, FAILED, WALLTIME = "COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED", "COMPLETED_WALLTIME_REACHED"
# job -> (start, allocation, finish, final state); None: rejected
FCFS = {1: (1, "0-1", 11, OK), 2: (11, "0-3", 16, OK), 3: (16, "0", 19, OK), 4: (16, "1-2", 20, OK), 5: None,
        6: (16, "3", 18, FAILED), 7: (20, "0-2", 23, OK), 8: (20, "3", 25, WALLTIME)}
# EASY: job 3 is backfilled at 3 and job 4 at 6 (both end before job 1's walltime, 21, when job 2
# is reserved); job 5 is rejected at submission; at 16, jobs 6 and 7 start, job 8 when 6 ends.
EASY = {1: (1, "0-1", 11, OK), 2: (11, "0-3", 16, OK), 3: (3, "2", 6, OK), 4: (6, "2-3", 10, OK), 5: None,
        6: (16, "0", 18, FAILED), 7: (16, "1-3", 19, OK), 8: (18, "0", 23, WALLTIME)}


def run(tmp_path, name: str):
    path = write_workload(tmp_path / "w.json", [{"id": i, "subtime": t, "res": r, "profile": p, "walltime": w}
                                                for i, t, r, p, w in JOBS], PROFILES)
    with scheduler("pybatsim", name, tmp_path) as (endpoint, proc):
        outcome = serve(read_input(path), uniform(4), endpoint=endpoint, timeout_s=10, out_dir=tmp_path / "out")
        assert proc.wait(timeout=10) == 0, (tmp_path / f"scheduler-{name}.log").read_text()[-2000:]
    return outcome


@pytest.mark.parametrize("name, expected", [("schedFcfs", FCFS), ("easyBackfill", EASY)])
def test_pybatsim_scheduler_runs_unchanged_and_gives_the_hand_checked_schedule(tmp_path, name, expected):
    outcome = run(tmp_path, name)
    assert outcome.error is None
    jobs = pd.read_csv(outcome.jobs_csv, dtype={"allocated_resources": str})
    assert len(jobs) == len(JOBS)
    for _, row in jobs.iterrows():
        want = expected[row.job_id]
        if want is None:
            assert row.final_state == "REJECTED" and pd.isna(row.starting_time), row.to_dict()
            continue
        start, alloc, finish, state = want
        got = (row.starting_time, row.allocated_resources, row.finish_time, row.final_state)
        assert got == (start, alloc, finish, state), f"{name}, job {row.job_id}: {got} != {want}"
        assert row.execution_time == finish - start and row.waiting_time == start - row.submission_time
        assert row.success == (state == OK)
    schedule = pd.read_csv(outcome.schedule_csv).iloc[0]
    assert schedule.makespan == max(w[2] for w in expected.values() if w)
    assert (schedule.nb_jobs, schedule.nb_jobs_finished, schedule.nb_jobs_rejected, schedule.nb_jobs_success) == \
           (8, 7, 1, 5)
    assert outcome.stats.scheduling_time_s <= outcome.stats.simulation_time_s


def test_evalys_reads_the_jobs_file(tmp_path):
    evalys_jobset = pytest.importorskip("evalys.jobset", reason="evalys is not installed")
    outcome = run(tmp_path, "easyBackfill")
    js = evalys_jobset.JobSet.from_csv(str(outcome.jobs_csv))
    ran = js.df[js.df.final_state != "REJECTED"]
    assert len(ran) == 7
    # evalys parses the allocation into procsets: job 7's is resources 1 to 3
    assert [list(p) for p in ran[ran.jobID == "7"].allocated_resources] == [[1, 2, 3]]
    load = js.utilisation["load"]  # busy resources from each change on
    assert load[16.0] == 4 and load[18.0] == 4 and load[19.0] == 1 and load[23.0] == 0
