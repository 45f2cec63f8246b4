"""The scheduling rules checked from a timeline alone, for simulated and live runs alike.

Independent of the state machine that enforces them (scheduler.state_machine),
so a run's log can be audited after the fact: by the property tests on the
engine, and by the live audit on a measured run. Each check returns a list
of problems, empty when the run kept the rules.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping

from scheduler.jobs import EventKind
from scheduler.results import TimelineEvent


def check_timeline(timeline: Iterable[TimelineEvent], P: int, pmax: Mapping[object, int] | None = None,
                   jobs: Iterable[object] | None = None, sizes: Mapping[object, int] | None = None,
                   walltimes: Mapping[object, float] | None = None) -> list[str]:
    """Time never runs back, sets held at once never overlap nor exceed P, every set is
    within 0..P-1 (and within the job's `pmax`, when given), a job starts once, and every
    resize keeps new ⊇ old or old ⊇ new. With `jobs`, each of them finishes and none
    holds anything at the end. With `sizes` (rigid jobs' exact sizes), each of those starts
    on exactly its size and is never asked to preempt nor resized. With `walltimes`, no job
    runs past start + its walltime."""
    problems: list[str] = []
    sizes = sizes or {}
    walltimes = walltimes or {}
    start_at: dict[object, float] = {}
    held: dict[object, set[int]] = {}
    started: set[object] = set()
    finished: set[object] = set()
    last = -float("inf")
    for e in timeline:
        where = f"t={e.time:.3f} job {e.job}"
        if e.time < last - 1e-12:
            problems.append(f"{where} {e.event} logged after t={last:.3f}: time went backwards")
        last = max(last, e.time)
        procs = set(e.procs)
        size = sizes.get(e.job)
        if size is not None:
            if e.event == EventKind.START and len(procs) != size:
                problems.append(f"{where} rigid job started on {len(procs)} processors; it asks for exactly {size}")
            elif e.event in (EventKind.PREEMPT_REQUEST, EventKind.ACK, EventKind.RESIZE):
                problems.append(f"{where} {e.event} of a rigid job")
        if e.event == EventKind.START:
            start_at[e.job] = e.time
        elif e.event == EventKind.FINISH and e.job in walltimes and e.job in start_at:
            if e.time - start_at[e.job] > walltimes[e.job] + 1e-9 * max(1.0, abs(e.time)):  # rounding of start + walltime
                problems.append(f"{where} finished {e.time - start_at[e.job]:.3f} s after its start, "
                                f"past its walltime {walltimes[e.job]:.3f} s")
        if e.event in (EventKind.START, EventKind.RESIZE):
            if any(p < 0 or p >= P for p in procs):
                problems.append(f"{where} {e.event} outside 0..{P - 1}: {sorted(procs)}")
            if pmax is not None and not 1 <= len(procs) <= pmax[e.job]:
                problems.append(f"{where} {e.event} on {len(procs)} processors (allowed 1..{pmax[e.job]})")
            if e.event == EventKind.RESIZE:
                old = held.get(e.job, set())
                if not (old <= procs or procs <= old):
                    problems.append(f"{where} resize {sorted(old)} -> {sorted(procs)} breaks the subset rule")
            elif e.job in started:
                problems.append(f"{where} started again")
            started.add(e.job)
            for other, theirs in held.items():
                if other != e.job and theirs & procs:
                    problems.append(f"{where} {e.event} on {sorted(procs)} while job {other} holds {sorted(theirs)}")
            held[e.job] = procs
        elif e.event == EventKind.FINISH:
            finished.add(e.job)
            held.pop(e.job, None)
        if sum(len(s) for s in held.values()) > P:
            problems.append(f"t={e.time:.3f} more than P={P} processors held")
    if jobs is not None:
        missing = [j for j in jobs if j not in finished]
        if missing:
            problems.append(f"{len(missing)} job(s) never finished (first: {missing[0]!r})")
        if held:
            problems.append(f"processors still held at the end: {held}")
    return problems
