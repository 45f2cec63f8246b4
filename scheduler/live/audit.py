"""Checks of a live run against its own records; each returns a list of problems (empty: fine).

  * `check_timeline`: processor sets held at once never overlap, never exceed
    P, and every resize keeps new ⊇ old or old ⊇ new.
  * `check_physical`: no two mpiexecs ever held one workstation at once.
  * `check_actions`: each job's start/preempt/resize rows in the timeline are
    exactly the actions the policy answered for it, in order.
  * `replay`: a fresh policy, handed each recorded state in the measured
    order, answers exactly what the live policy answered (the executor
    carried out the policy's decisions and added no logic of its own).
  * `check_rigid`: each rigid job started once on exactly its size, was never asked to
    preempt nor resized, ran as one launch, and (with a walltime) finished no later than
    start + walltime + the kill's grace (the time a terminated mpiexec takes to exit), and none
    is recorded killed before its walltime. A job whose program ended cleanly while the kill was
    on its way is done, not killed: its exit, within the grace, decides.
"""
from __future__ import annotations

import math
from collections import defaultdict
from typing import Sequence

from scheduler import invariants
from scheduler.actions import Preempt, Start
from scheduler.jobs import EventKind, JobStatus, Outcome
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


KILL_GRACE_S = 5.0
"""Seconds a rigid job may finish after start + walltime: its terminated mpiexec (or cancelled pool
members) exiting. Measured here: 0.01-0.2 s (local mpiexec, pool); the bound is loose on purpose."""


def check_rigid(result: LiveResult, arrivals: Sequence[Arrival], kill_grace_s: float = KILL_GRACE_S) -> list[str]:
    """The rigid jobs' rules from the run's records (module docstring)."""
    sizes = {a.id: a.size for a in arrivals if a.size is not None}
    problems = invariants.check_timeline(result.timeline, result.P, sizes=sizes)
    walltimes = {a.id: a.walltime_s for a in arrivals if a.walltime_s is not None}
    starts = {e.job: e.time for e in result.timeline if e.event == EventKind.START}
    launches: dict[object, int] = defaultdict(int)
    for r in result.runs:
        launches[r.job] += 1
    states = {s.id: s for s in result.states}
    for e in result.timeline:
        if e.event == EventKind.FINISH and e.job in walltimes and e.job in starts:
            over = e.time - starts[e.job] - walltimes[e.job]
            if over > kill_grace_s:
                problems.append(f"job {e.job}: finished {over:.3f} s past start + its walltime "
                                f"{walltimes[e.job]:g} s (grace {kill_grace_s:g} s)")
        elif e.event == EventKind.FINISH and states[e.job].status == Outcome.WALLTIME and (
                e.job not in starts or e.time - starts[e.job] < walltimes.get(e.job, math.inf)):
            problems.append(f"job {e.job}: recorded killed at its walltime before reaching it")
    for job in sizes:
        if launches[job] > 1:
            problems.append(f"job {job}: rigid, launched {launches[job]} times")
    return problems


def replay(result: LiveResult, arrivals: Sequence[Arrival], policy: str | None = None) -> list[str]:
    """Re-ask a fresh policy every recorded decision from the recorded state."""
    pol = get_policy(policy or result.policy)
    ordered = sorted(arrivals, key=lambda a: a.arrival)  # the executor's seq order
    views: dict[object, JobView] = {}
    for seq, a in enumerate(ordered):
        views[a.id] = JobView(a.id, seq, a.arrival, a.job_class.model, result.P, a.size, a.walltime_s)
    # a job's start as the policy saw it: its START row, once logged (a batch policy plans with it)
    started = {e.job: e.time for e in result.timeline if e.event == EventKind.START}
    problems: list[str] = []
    for i, d in enumerate(result.decisions):
        tables = {}
        for status, key in ((JobStatus.RUNNING, "running"), (JobStatus.PREEMPTING, "preempting"),
                            (JobStatus.PREEMPTED, "preempted")):
            table = {}
            for jid, procs in d.state[key]:
                v = views[jid]
                v.status, v.procs = status, tuple(procs)
                at = started.get(jid, math.nan)
                v.start = at if at <= d.time else math.nan
                table[v.seq] = v
            tables[key] = table
        queue = []
        for jid in d.state["queue"]:
            v = views[jid]
            v.status, v.procs, v.start = JobStatus.QUEUED, (), math.nan
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
    """All five checks, plus every job finished (or was killed at its walltime)."""
    problems = [f"job {s.id} {s.status}: {s.error}" for s in result.failed]
    return (problems + check_timeline(result) + check_physical(result) + check_actions(result)
            + check_rigid(result, arrivals) + replay(result, arrivals))
