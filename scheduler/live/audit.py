"""Checks of a live run against its own records; each returns a list of problems (empty: fine).

  * `check_timeline`: processor sets held at once never overlap, never exceed
    P, and every resize keeps new ⊇ old or old ⊇ new.
  * `check_physical`: no two mpiexecs ever held one workstation at once.
  * `check_actions`: each job's start/preempt/resize rows in the timeline are
    exactly the actions the policy answered for it, in order.
  * `replay`: a fresh policy, handed each recorded state in the measured
    order, answers exactly what the live policy answered (the executor
    carried out the policy's decisions and added no logic of its own).
"""
from __future__ import annotations

from collections import defaultdict
from typing import Sequence

from scheduler import invariants
from scheduler.actions import Preempt, Start
from scheduler.jobs import EventKind, JobStatus
from scheduler.live.result import LiveResult
from scheduler.live.stream import Arrival
from scheduler.registry import get_policy
from scheduler.snapshot import JobView, Reason, Snapshot


def check_timeline(result: LiveResult) -> list[str]:
    """The scheduling rules, from the run's timeline (scheduler.invariants)."""
    return invariants.check_timeline(result.timeline, result.P)


def check_physical(result: LiveResult) -> list[str]:
    problems: list[str] = []
    by_host: dict[str, list] = defaultdict(list)
    for r in result.runs:
        for h in r.hosts:
            by_host[h].append(r)
    for host, runs in by_host.items():
        runs.sort(key=lambda r: r.launched_at)
        for a, b in zip(runs, runs[1:]):
            if b.launched_at < a.exited_at:
                problems.append(f"{host}: job {b.job} launch {b.launch} started at {b.launched_at:.3f} before job "
                                f"{a.job} launch {a.launch} exited at {a.exited_at:.3f}")
    return problems


def check_actions(result: LiveResult) -> list[str]:
    decided: dict[object, list] = defaultdict(list)
    for d in result.decisions:
        for a in d.actions:
            if type(a) is Preempt:
                decided[a.job].append((EventKind.PREEMPT_REQUEST, ()))
            else:
                decided[a.job].append((EventKind.START if type(a) is Start else EventKind.RESIZE, tuple(sorted(a.procs))))
    done: dict[object, list] = defaultdict(list)
    for e in result.timeline:
        if e.event == EventKind.PREEMPT_REQUEST:
            done[e.job].append((e.event, ()))
        elif e.event in (EventKind.START, EventKind.RESIZE):
            done[e.job].append((e.event, tuple(sorted(e.procs))))
    return [f"job {j}: policy decided {decided.get(j, [])}, executed {done.get(j, [])}"
            for j in sorted(set(decided) | set(done), key=str) if decided.get(j, []) != done.get(j, [])]


def replay(result: LiveResult, arrivals: Sequence[Arrival], policy: str | None = None) -> list[str]:
    """Re-ask a fresh policy every recorded decision from the recorded state."""
    pol = get_policy(policy or result.policy)
    ordered = sorted(arrivals, key=lambda a: a.arrival)  # the executor's seq order
    views: dict[object, JobView] = {}
    for seq, a in enumerate(ordered):
        views[a.id] = JobView(a.id, seq, a.arrival, a.job_class.model, result.P)
    problems: list[str] = []
    for i, d in enumerate(result.decisions):
        tables = {}
        for status, key in ((JobStatus.RUNNING, "running"), (JobStatus.PREEMPTING, "preempting"),
                            (JobStatus.PREEMPTED, "preempted")):
            table = {}
            for jid, procs in d.state[key]:
                v = views[jid]
                v.status, v.procs = status, tuple(procs)
                table[v.seq] = v
            tables[key] = table
        queue = []
        for jid in d.state["queue"]:
            v = views[jid]
            v.status, v.procs = JobStatus.QUEUED, ()
            queue.append(v)
        subject = views[d.subject]
        if d.reason == Reason.COMPLETION.value:
            subject.status, subject.procs = JobStatus.FINISHED, ()
        snap = Snapshot(d.time, result.P, Reason(d.reason), subject, d.state["free_mask"], tables["running"],
                        tables["preempting"], tables["preempted"], queue, availability=d.state.get("availability"))
        again = tuple(pol.decide(snap))
        if again != d.actions:
            problems.append(f"decision {i} at t={d.time:.3f} ({d.reason} of job {d.subject}): live {d.actions}, "
                            f"replayed {again}")
    return problems


def audit(result: LiveResult, arrivals: Sequence[Arrival]) -> list[str]:
    """All four checks, plus every job finished."""
    problems = [f"job {s.id} {s.status}: {s.error}" for s in result.failed]
    return problems + check_timeline(result) + check_physical(result) + check_actions(result) + replay(result, arrivals)
