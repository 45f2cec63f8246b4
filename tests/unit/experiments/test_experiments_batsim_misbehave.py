"""Schedulers that misbehave, each a real process on a real socket (tests/batsim_scripted_scheduler.py):
each case stops the run with one line naming the message, the event and the field, and the
outputs still hold every job as far as it got."""
from __future__ import annotations

import time

import pandas as pd
import pytest

from batsim_harness import scheduler, write_workload
from experiments.batsim.platform import uniform
from experiments.batsim.run import read_input, serve
from experiments.batsim.workload import WorkloadError

DELAY = {"d": {"type": "delay", "delay": 10}}
TWO = [{"id": 1, "subtime": 1, "res": 2, "profile": "d"}, {"id": 2, "subtime": 5, "res": 2, "profile": "d"}]


def misbehave(tmp_path, mode: str, timeout_s: float = 5.0):
    path = write_workload(tmp_path / "w.json", TWO, DELAY)
    with scheduler("scripted", mode, tmp_path) as (endpoint, _):
        t0 = time.perf_counter()
        outcome = serve(read_input(path), uniform(4), endpoint=endpoint, timeout_s=timeout_s,
                        out_dir=tmp_path / "out")
        elapsed = time.perf_counter() - t0
    assert outcome.error is not None and "\n" not in outcome.error
    return outcome, elapsed


# mode -> what the one line must say (the reply, its event and field, the reason)
CASES = {
    "unknown-job": "reply 1 (to t=1: JOB_SUBMITTED): events[0] (EXECUTE_JOB): data.job_id: unknown job 'w0!99'",
    "not-submitted": "reply 1 (to t=1: JOB_SUBMITTED): events[0] (EXECUTE_JOB): data.job_id: job 'w0!2' has not "
                     "been submitted yet (its subtime is 5)",
    "outside": "reply 1 (to t=1: JOB_SUBMITTED): events[0] (EXECUTE_JOB): data.alloc: '2-5' in '2-5' is outside "
               "the machine (resources 0-3)",
    "busy": "reply 2 (to t=5: JOB_SUBMITTED, NOTIFY): events[0] (EXECUTE_JOB): data.alloc: '1-2' asks for busy resources "
            "(w0!1 on 1); compute sharing is disabled",
    "malformed-json": "reply 1 (to t=1: JOB_SUBMITTED): not JSON",
    "malformed-field": "reply 1 (to t=1: JOB_SUBMITTED): events[0] (EXECUTE_JOB): data.alloc: missing",
    "kill-waiting": "reply 1 (to t=1: JOB_SUBMITTED): events[0] (KILL_JOB): data.job_ids[0]: job 'w0!1' is "
                    "SUBMITTED: only a started job can be killed",
    "past": "reply 1 (to t=1: JOB_SUBMITTED): events[0] (EXECUTE_JOB): timestamp: 0.5 is before now 1",
    "idle": "after reply 2 (t=5): the scheduler left 2 job(s) waiting (w0!1, w0!2) with nothing running",
}


@pytest.mark.parametrize("mode", sorted(CASES))
def test_a_bad_decision_is_one_line_naming_the_reply_event_and_field(tmp_path, mode):
    outcome, _ = misbehave(tmp_path, mode)
    assert outcome.error.startswith(CASES[mode]), outcome.error
    jobs = pd.read_csv(outcome.jobs_csv)  # written, with what happened so far
    assert len(jobs) >= 1 and set(jobs.final_state) <= {"SUBMITTED", "RUNNING"}
    if mode == "busy":  # job 1 was running when job 2's bad allocation came
        assert jobs.final_state.tolist() == ["RUNNING", "SUBMITTED"] and jobs.allocated_resources[0] == "0-1"
        assert pd.read_csv(outcome.schedule_csv).nb_jobs[0] == 2


def test_a_silent_scheduler_is_named_after_the_timeout(tmp_path):
    outcome, elapsed = misbehave(tmp_path, "silent", timeout_s=0.5)
    assert outcome.error.startswith("message 1 (t=1: JOB_SUBMITTED): the scheduler did not reply within 0.5 s "
                                    "(--timeout-s"), outcome.error
    assert 0.5 <= elapsed < 3
    assert pd.read_csv(outcome.jobs_csv).final_state.tolist() == ["SUBMITTED"]


def test_a_scheduler_that_exits_is_named_at_once_not_after_the_timeout(tmp_path):
    outcome, elapsed = misbehave(tmp_path, "exits", timeout_s=30)
    assert outcome.error.startswith("message 1 (t=1: JOB_SUBMITTED): the scheduler closed its connection before "
                                    "replying"), outcome.error
    assert elapsed < 5


def test_no_scheduler_listening_is_a_timeout_on_the_first_message(tmp_path):
    from batsim_harness import free_port

    path = write_workload(tmp_path / "w.json", TWO, DELAY)
    outcome = serve(read_input(path), uniform(4), endpoint=f"tcp://127.0.0.1:{free_port()}", timeout_s=0.3,
                    out_dir=tmp_path / "out")
    assert outcome.error.startswith("message 0 (t=0: SIMULATION_BEGINS): the scheduler did not reply within 0.3 s")
    assert pd.read_csv(outcome.jobs_csv).empty  # nothing submitted yet; the header is there


def test_a_job_naming_a_missing_profile_is_one_line_naming_the_job(tmp_path):
    path = write_workload(tmp_path / "w.json", TWO + [{"id": 3, "subtime": 6, "res": 1, "profile": "nope"}], DELAY)
    with pytest.raises(WorkloadError, match=r"job 'w0!3' \(jobs\[2\]\): profile 'nope' is not among the workload's "
                                            r"profiles \(d\)$"):
        read_input(path)
