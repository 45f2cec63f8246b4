"""One vocabulary for a job, from its stream to its report: its statuses and its timeline's events.

The enums are `str`-valued (StrEnum), so a member is its text wherever it is written: SQLite,
CSV and JSON hold the same bytes they held when these were string literals, and a value read
back from a store (a plain str) compares equal to its member.
"""
from __future__ import annotations

from enum import StrEnum


class JobStatus(StrEnum):
    """Where a job is in the scheduler's state machine (queued -> running -> (preempting ->
    preempted -> running)* -> finished)."""

    QUEUED = "queued"
    RUNNING = "running"
    PREEMPTING = "preempting"  # asked to preempt, still running until its next safe point
    PREEMPTED = "preempted"  # acknowledged; holds its processors, makes no progress, awaits a resize
    FINISHED = "finished"


class Outcome(StrEnum):
    """How a finished job ended: the `status` column of a run's per-job tables and of the store."""

    DONE = "done"
    FAILED = "failed"


class EventKind(StrEnum):
    """One row of a run's timeline: what happened to a job (the `event` column)."""

    ARRIVE = "arrive"
    START = "start"
    PREEMPT_REQUEST = "preempt_request"
    ACK = "ack"
    RESIZE = "resize"
    FINISH = "finish"
