"""scheduler.jobs: the job's vocabulary keeps the bytes the stores and CSVs hold, and the stage records
carry a job from stream to store and back."""
from __future__ import annotations

import math
import sqlite3

import pytest

from scheduler.jobs import (NO_EXTRA, STORED_COLUMNS, EventKind, FinishedJob, JobRecord, JobStatus, Outcome,
                            SubmittedJob)


def test_members_are_the_strings_stores_and_csvs_already_hold() -> None:
    assert [s.value for s in JobStatus] == ["queued", "running", "preempting", "preempted", "finished"]
    assert [o.value for o in Outcome] == ["done", "failed", "timeout", "walltime"]
    assert [e.value for e in EventKind] == ["arrive", "start", "preempt_request", "ack", "resize", "finish"]
    assert f"{EventKind.PREEMPT_REQUEST}" == str(EventKind.PREEMPT_REQUEST) == "preempt_request"
    assert Outcome.DONE == "done" and "failed" == Outcome.FAILED  # a value read back compares equal
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (status TEXT CHECK (status IN ('done', 'failed')))")
    conn.execute("INSERT INTO t VALUES (?)", (Outcome.FAILED,))
    assert conn.execute("SELECT status, typeof(status) FROM t").fetchone() == ("failed", "text")


def test_a_finished_job_is_its_submitted_job_and_its_record_on_the_stream_clock() -> None:
    job = SubmittedJob(3, "cg", 10.0, demand=1.5, requested_procs=4)
    record = JobRecord(3, 0.0, 2.0, 7.0, 1, 2.5, ((0, 1), (0, 1, 2)), 4, "cg")
    done = FinishedJob.of(job, record, offset_s=10.0)
    assert (done.id, done.cls, done.demand, done.arrival_s) == (3, "cg", 1.5, 10.0)
    assert (done.start_s, done.finish_s, done.mean_procs, done.max_procs) == (12.0, 17.0, 2.5, 3)
    assert (done.wait_s, done.execution_s, done.response_s) == (2.0, 5.0, 7.0)
    assert done.status is Outcome.DONE and done.extra == {} and done.delivered_speed is None
    failed = FinishedJob.of(job, record._replace(finish=math.nan), status=Outcome.FAILED, error="ws1 died")
    assert failed.status is Outcome.FAILED and math.isnan(failed.execution_s)


def test_stored_row_keeps_the_store_columns_and_reads_back() -> None:
    job = FinishedJob(5, "a", 1.0, 1.0, 2.0, 4.0, 1.5, 2, 4, 0, Outcome.DONE, "", 0.9)
    row = job.row()
    assert list(row) == [*STORED_COLUMNS, "wait", "execution", "response"]
    assert list(STORED_COLUMNS)[:4] == ["job_id", "cls", "demand", "arrival"]
    assert (row["job_id"], row["arrival"], row["requested"], row["status"]) == (5, 1.0, 4, "done")
    assert FinishedJob.from_row({**row, "policy": "RA"}) == job
    assert job.with_speed(None).delivered_speed is None


def test_a_submitted_job_refuses_a_bad_time_or_demand_and_hashes_with_its_extra() -> None:
    with pytest.raises(ValueError, match="arrival"):
        SubmittedJob(0, "a", -1.0)
    with pytest.raises(ValueError, match="demand"):
        SubmittedJob(0, "a", 0.0, demand=math.inf)
    plain = SubmittedJob(0, "a", 0.0)
    assert plain.extra is NO_EXTRA and hash(plain) == hash(SubmittedJob(0, "a", 0.0, extra={"slot": 2}))
    assert plain != SubmittedJob(0, "a", 0.0, extra={"slot": 2})
