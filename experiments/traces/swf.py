"""The Standard Workload Format (SWF) of the Parallel Workloads Archive: read, import, export.

An SWF file is ASCII, one job (or part of one) per line, 18 whitespace-separated
numeric fields, -1 where a value is unknown, and header comments starting with
`;` (`; Key: value`, e.g. `; MaxProcs: 128`). The archive's logs continue a long value
(a `Note`, an `Information` with several addresses) on following comment lines indented
past the `;` (`;       the rest of the note`); those are joined to the value with a space, so
each note is one entry however many lines it took. Reading a trace lets a real
workload drive the testbed (`to_stream`); writing one lets the archive's tools
read our runs (`write_swf`).

Partial executions (preempted or resized jobs). The archive's status field is
1 completed, 0 failed, 5 cancelled, and, when a log records checkpointing or
swapping, 2 = a partial execution that will be continued, 3 = the last
partial execution of a job that completed, 4 = the last partial execution of
a job that failed. We write such a job as the line for the whole job
(status 1 or 0, as for any job) followed by one line per part, all with the
same job number and submit time; each part's wait is from the job's submit
to the start of that part, its run time is that part's length and its
processors that part's partition; the parts are 2, ..., 2, then 3 or 4. The
header then says `Preemption: Double` (whole jobs and their parts both
appear). Readers that only want jobs skip statuses 2-4 (`SwfTrace.whole_jobs`).
The field list and the status codes are the archive's definition (version
2.2); the layout of the parts (whole line first, each part's wait measured
from the job's submit) is our reading of its usage note, chosen so each part
line alone gives that part's start and end. Segments are written as given.

Times. SWF allows floating-point time fields; emulated runs last seconds to
minutes, so whole seconds would be too coarse. `write_swf` rounds the
absolute times (arrival, start, finish, part ends) to `decimals` places
(default 3, milliseconds) and writes differences of the rounded values, so
reading back gives submit, submit + wait and submit + wait + run equal to
the rounded times. Time 0 is the start of the run (the stream's clock).
"""
from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Literal, NamedTuple

from scheduler.jobs import FinishedJob, Outcome, SubmittedJob


# Field number (1-based, as the archive numbers them) -> (attribute, description, integral?)
FIELDS: tuple[tuple[str, str, bool], ...] = (
    ("job", "job number", True),
    ("submit", "submit time", False),
    ("wait", "wait time", False),
    ("run", "run time", False),
    ("procs", "allocated processors", True),
    ("cpu", "average CPU time", False),
    ("memory", "used memory", False),
    ("req_procs", "requested processors", True),
    ("req_time", "requested time", False),
    ("req_memory", "requested memory", False),
    ("status", "status", True),
    ("user", "user id", True),
    ("group", "group id", True),
    ("app", "executable number", True),
    ("queue", "queue number", True),
    ("partition", "partition number", True),
    ("preceding", "preceding job number", True),
    ("think", "think time", False),
)
COMPLETED, FAILED, PARTIAL, PARTIAL_LAST_COMPLETED, PARTIAL_LAST_FAILED, CANCELLED = 1, 0, 2, 3, 4, 5
PARTIAL_STATUSES = (PARTIAL, PARTIAL_LAST_COMPLETED, PARTIAL_LAST_FAILED)
_KEY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9]*)\s*:\s*(.*?)\s*$")
# The header fields of the archive's definition (version 2.2): an indented `; Key: ...` line
# with one of these keys starts a field; any other indented line after a field continues it.
HEADER_KEYS = frozenset((
    "Version", "Computer", "Installation", "Acknowledge", "Information", "Conversion", "MaxJobs", "MaxRecords",
    "Preemption", "UnixStartTime", "TimeZone", "TimeZoneString", "StartTime", "EndTime", "MaxNodes", "MaxProcs",
    "MaxRuntime", "MaxMemory", "AllowOveruse", "MaxQueues", "Queues", "Queue", "MaxPartitions", "Partitions",
    "Partition", "Note"))
_CONTINUED = re.compile(r"^\s\s+\S")  # two or more blanks after the ';', then text
_APP_NOTE = re.compile(r"^executable (\d+) = class (.+)$")


@dataclass(frozen=True)
class SwfJob:
    """One SWF line: the 18 fields in order (-1: missing) and where it came from."""

    job: int
    submit: float
    wait: float
    run: float
    procs: int
    cpu: float
    memory: float
    req_procs: int
    req_time: float
    req_memory: float
    status: int
    user: int
    group: int
    app: int
    queue: int
    partition: int
    preceding: int
    think: float
    line: int = field(default=0, compare=False)  # 1-based line number in the file

    @property
    def is_partial(self) -> bool:
        """A part of a job's execution (status 2, 3 or 4), not the job itself."""
        return self.status in PARTIAL_STATUSES


class Segment(NamedTuple):
    """One stretch of a job on one partition, in stream time (from the executor's timeline)."""

    start: float
    end: float
    procs: int


@dataclass(frozen=True)
class SwfTrace:
    """A parsed SWF file: header comments and every line, in file order."""

    path: str
    comments: list[str]  # every comment line without its ';', in order
    # `Key: value` comments, continuation lines joined with a space; a repeated key's values
    # (each `; Note:`) joined by newlines
    header: dict[str, str]
    jobs: list[SwfJob]

    @property
    def notes(self) -> list[str]:
        """Each `Note` of the header, continuation lines included."""
        return self.header["Note"].split("\n") if "Note" in self.header else []

    @property
    def whole_jobs(self) -> list[SwfJob]:
        """The lines that stand for jobs (partial-execution lines left out)."""
        return [j for j in self.jobs if not j.is_partial]

    @property
    def max_procs(self) -> int | None:
        """The `MaxProcs` header (the machine's processors), if present."""
        value = self.header.get("MaxProcs")
        return None if value is None else int(value.split("\n")[0])

    def segments(self) -> dict[int, list[Segment]]:
        """Per job number, its parts as (start, end, procs), from the partial-execution lines."""
        out: dict[int, list[Segment]] = defaultdict(list)
        for j in self.jobs:
            if j.is_partial:
                start = j.submit + j.wait
                out[j.job].append(Segment(start, start + j.run, j.procs))
        return {k: sorted(v, key=lambda s: s.start) for k, v in out.items()}  # stable: ties keep file order

    def app_classes(self) -> dict[int, str]:
        """Executable number -> class name, from the notes `write_swf` leaves."""
        out: dict[int, str] = {}
        for note in self.header.get("Note", "").split("\n"):
            m = _APP_NOTE.match(note.strip())
            if m:
                out[int(m.group(1))] = m.group(2)
        return out


class SwfError(ValueError):
    """An SWF file that cannot be read: one line naming the file, the line and the field."""


class HeaderReader:
    """The `;` comment lines of an SWF file, fed in order: fields, continuation lines, notes.

    Shared by `read_swf` and the rigid-job reader (`experiments.traces.swf_rigid`) so both
    read a header the same way.
    """

    def __init__(self) -> None:
        self.comments: list[str] = []
        self.header: dict[str, str] = {}
        self.key_at: dict[str, int] = {}  # the line each field was last given on
        self._last: str | None = None  # the field the previous comment line gave or continued

    def comment(self, lineno: int, text: str) -> None:
        """One stripped comment line (starting with `;`)."""
        body = text[1:]
        self.comments.append(body)
        m = _KEY.match(body)
        header = self.header
        if self._last is not None and _CONTINUED.match(body) and not (m and m.group(1) in HEADER_KEYS):
            header[self._last] = f"{header[self._last]} {body.strip()}"
        elif m:
            self._last, value = m.groups()
            header[self._last] = f"{header[self._last]}\n{value}" if self._last in header else value
            self.key_at[self._last] = lineno
        else:
            self._last = None

    def other(self) -> None:
        """A blank or job line: it ends any field being continued."""
        self._last = None

    def check(self, path: Path) -> None:
        """MaxProcs, when given, must be a positive integer (one line naming where it was given)."""
        max_procs = self.header.get("MaxProcs")
        if max_procs is not None and not all(re.fullmatch(r"[0-9]+", v) and int(v) > 0
                                             for v in max_procs.split("\n")):
            raise SwfError(f"{path}:{self.key_at['MaxProcs']}: header MaxProcs must be an integer > 0, "
                           f"got {max_procs!r}")


def read_swf(path: str | Path) -> SwfTrace:
    """Parse an SWF file. A bad line raises one `SwfError` naming file, line and field."""
    path = Path(path)
    head = HeaderReader()
    jobs: list[SwfJob] = []
    with path.open(encoding="utf-8", errors="replace") as f:
        for lineno, raw in enumerate(f, start=1):
            text = raw.strip()
            if text.startswith(";"):
                head.comment(lineno, text)
                continue
            head.other()
            if text:
                jobs.append(parse_job_line(text, path, lineno))
    head.check(path)
    return SwfTrace(path=str(path), comments=head.comments, header=head.header, jobs=jobs)


def parse_job_line(text: str, path: Path, lineno: int) -> SwfJob:
    """One job line's 18 fields; a bad one raises one `SwfError` naming file, line and field."""
    tokens = text.split()
    if len(tokens) != len(FIELDS):
        raise SwfError(f"{path}:{lineno}: expected {len(FIELDS)} fields, got {len(tokens)}")
    values: list[int | float] = []
    for k, (tok, (_, desc, integral)) in enumerate(zip(tokens, FIELDS), start=1):
        try:
            x = float(tok)
        except ValueError:
            raise SwfError(f"{path}:{lineno}: field {k} ({desc}) must be a number, got {tok!r}") from None
        if not math.isfinite(x):
            raise SwfError(f"{path}:{lineno}: field {k} ({desc}) must be finite, got {tok!r}")
        if integral:
            if x != int(x):
                raise SwfError(f"{path}:{lineno}: field {k} ({desc}) must be an integer, got {tok!r}")
            values.append(int(x))
        else:
            values.append(x)
    return SwfJob(*values, line=lineno)  # type: ignore[arg-type]


# --- import -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class SwfImport:
    """The stream made from a trace and what was left out of it, by reason (never silently)."""

    jobs: list[SubmittedJob]
    source: list[int]  # the SWF job number of each stream job (stream ids are positions 0..n-1)
    skipped: dict[str, int]  # reason -> number of jobs
    trace_max_procs: int
    mean_work: dict[str, float]  # class -> mean processor-seconds in the trace (demand 1.0)

    @property
    def n_skipped(self) -> int:
        return sum(self.skipped.values())


def to_stream(trace: SwfTrace, *, classes: str | Mapping[str, tuple[int, int]], time_scale: float,
              max_procs: int, demand_from: Literal["run", "requested"] = "run",
              n: int | None = None) -> SwfImport:
    """Turn a trace's jobs into a stream for a cluster of `max_procs` processors.

    * classes: one class name for every job, or `{name: (lo, hi)}` inclusive
      ranges on the job's original requested processors (allocated if not
      requested); ranges may not overlap, a job in none is skipped.
    * arrival = (submit - first imported submit) * time_scale.
    * demand = work / (mean work of the job's class over the imported jobs),
      work = run time x allocated processors ("run") or requested time x
      requested processors ("requested"): each class keeps its own mean
      demand (1.0) and the trace supplies only the variation.
    * requested = ceil(req * max_procs / trace_max_procs) clamped to
      [1, max_procs], trace_max_procs the `MaxProcs` header or else the
      largest request or allocation in the trace.
    * Skipped, each counted by reason: jobs that never ran (run time <= 0 or
      allocated <= 0), with no submit time, without the requested time asked
      for, of no class, and partial executions lacking a whole-job line.
    * n: keep only the first n imported jobs (by submit time).
    """
    if not (isinstance(time_scale, (int, float)) and math.isfinite(time_scale) and time_scale > 0):
        raise ValueError(f"time_scale: must be a finite number > 0, got {time_scale!r}")
    if isinstance(max_procs, bool) or not isinstance(max_procs, int) or max_procs < 1:
        raise ValueError(f"max_procs: must be an integer >= 1, got {max_procs!r}")
    if demand_from not in ("run", "requested"):
        raise ValueError(f"demand_from: unknown {demand_from!r} (run, requested)")
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise ValueError(f"n: must be an integer >= 1 or None, got {n!r}")
    classify = _classifier(classes)

    whole = trace.whole_jobs
    trace_max = trace.max_procs or max((max(j.req_procs, j.procs) for j in whole), default=0)
    if trace_max < 1:
        raise SwfError(f"{trace.path}: no MaxProcs header and no job with a processor count")

    skipped: dict[str, int] = defaultdict(int)
    have_whole = {j.job for j in whole}
    orphans = {j.job for j in trace.jobs if j.is_partial and j.job not in have_whole}
    if orphans:
        skipped["partial executions without a whole-job line"] = len(orphans)
    kept: list[tuple[SwfJob, str, float, int]] = []  # job, class, work, original request
    for j in sorted(whole, key=lambda j: j.submit):
        size = j.req_procs if j.req_procs > 0 else j.procs
        if j.run <= 0 or j.procs <= 0:
            skipped["never ran (run time <= 0 or allocated processors <= 0)"] += 1
            continue
        if j.submit < 0:
            skipped["no submit time"] += 1
            continue
        if demand_from == "requested" and j.req_time <= 0:
            skipped["no requested time"] += 1
            continue
        cls = classify(size)
        if cls is None:
            skipped["no class for its processor count"] += 1
            continue
        work = j.run * j.procs if demand_from == "run" else j.req_time * size
        if not math.isfinite(work):
            raise SwfError(f"{trace.path}:{j.line}: the job's work (time x processors) is too large, got {work}")
        kept.append((j, cls, work, size))
    if n is not None:
        kept = kept[:n]
    if not kept:
        raise SwfError(f"{trace.path}: no job left to import (skipped: {dict(skipped)})")

    totals: dict[str, list[float]] = defaultdict(list)
    for _, cls, work, _ in kept:
        totals[cls].append(work)
    mean_work = {c: math.fsum(x / len(w) for x in w) for c, w in totals.items()}  # no overflow near 1e308
    t0 = kept[0][0].submit
    jobs = []
    for i, (j, cls, work, size) in enumerate(kept):
        try:  # a SubmittedJob refuses a time or demand that overflowed to inf or NaN
            jobs.append(SubmittedJob(id=i, cls=cls, arrival_s=(j.submit - t0) * time_scale, demand=work / mean_work[cls],
                                  requested_procs=min(max_procs, max(1, -(-size * max_procs // trace_max)))))
        except ValueError as exc:
            raise SwfError(f"{trace.path}:{j.line}: {exc}") from None
    return SwfImport(jobs=jobs, source=[j.job for j, *_ in kept], skipped=dict(skipped),
                     trace_max_procs=trace_max, mean_work=mean_work)


def _classifier(classes: str | Mapping[str, tuple[int, int]]) -> Callable[[int], str | None]:
    """A function from original processor count to class name (None: no class)."""
    if isinstance(classes, str):
        if not classes:
            raise ValueError("classes: the class name must not be empty")
        return lambda size: classes
    if not isinstance(classes, Mapping) or not classes:
        raise ValueError("classes: give a class name or {name: (lo, hi)} processor ranges")
    ranges: list[tuple[int, int, str]] = []
    for name, rng in classes.items():
        if not (isinstance(rng, (tuple, list)) and len(rng) == 2 and all(isinstance(x, int) for x in rng)
                and 1 <= rng[0] <= rng[1]):
            raise ValueError(f"classes: range of {name!r} must be (lo, hi) integers with 1 <= lo <= hi, got {rng!r}")
        ranges.append((rng[0], rng[1], name))
    ranges.sort()
    for (_, hi1, a), (lo2, _, b) in pairwise(ranges):
        if lo2 <= hi1:
            raise ValueError(f"classes: ranges of {a!r} and {b!r} overlap")
    return lambda size: next((name for lo, hi, name in ranges if lo <= size <= hi), None)


# --- export -----------------------------------------------------------------------------------

def write_swf(path: str | Path, outcomes: Sequence[FinishedJob], *,
              segments: Mapping[int, Sequence[tuple[float, float, int]]] | None = None,
              header: Mapping[str, object] | None = None, decimals: int = 3) -> None:
    """Write a finished run as SWF (see the module docstring for the conventions).

    Per job: job number = job_id + 1 (stream ids count from 0, SWF job
    numbers from 1), submit = arrival, wait = start - arrival,
    run = finish - start, allocated = max_procs (its largest partition; the
    parts carry each size), requested = requested, executable = the class's
    number (classes sorted by name, numbered 1..k, listed in `Note` header
    lines), status 1 done / 0 failed, every other field -1. A job with two
    or more segments (keyed by job_id) also gets its partial-execution
    lines. `header` items are written as `; Key: value`; Version, MaxJobs,
    MaxRecords and Preemption are added unless given. Lines are in order of
    submit time.
    """
    if isinstance(decimals, bool) or not isinstance(decimals, int) or not 0 <= decimals <= 9:
        raise ValueError(f"decimals: must be an integer in 0..9, got {decimals!r}")
    segments = dict(segments or {})
    ids = [o.id for o in outcomes]
    if len(set(ids)) != len(ids) or min(ids, default=0) < 0:
        raise ValueError("outcomes: job ids must be unique and >= 0")
    unknown = sorted(set(segments) - set(ids))
    if unknown:
        raise ValueError(f"segments: job {unknown[0]} is not among the outcomes")
    apps = {c: k for k, c in enumerate(sorted({o.cls for o in outcomes}), start=1)}

    def t(x: float) -> str:
        return f"{x:.{decimals}f}"

    def r(x: float) -> float:
        return round(x, decimals)

    lines: list[tuple[float, int, str]] = []
    n_parts = 0
    for o in outcomes:
        if o.status not in (Outcome.DONE, Outcome.FAILED):
            raise ValueError(f"job {o.id}: status must be done or failed, got {o.status!r}")
        done = o.status == Outcome.DONE
        submit, start, finish = r(o.arrival_s), r(o.start_s), r(o.finish_s)
        rows = [(submit, start - submit, finish - start, o.max_procs, COMPLETED if done else FAILED)]
        segs = _check_segments(o.id, segments.get(o.id, ()))
        if len(segs) > 1:
            for i, (s, e, p) in enumerate(segs):
                last = i == len(segs) - 1
                status = (PARTIAL_LAST_COMPLETED if done else PARTIAL_LAST_FAILED) if last else PARTIAL
                rows.append((submit, r(s) - submit, r(e) - r(s), p, status))
            n_parts += len(segs)
        for sub, wait, run, procs, status in rows:
            fields_ = [str(o.id + 1), t(sub), t(wait), t(run), str(procs), "-1", "-1", str(o.requested_procs),
                       "-1", "-1", str(status), "-1", "-1", str(apps[o.cls]), "-1", "-1", "-1", "-1"]
            lines.append((submit, o.id, " ".join(fields_)))
    lines.sort(key=lambda x: (x[0], x[1]))  # stable: a job's whole line stays ahead of its parts

    head: dict[str, object] = {"Version": "2.2"}
    for key, value in (header or {}).items():
        if not _KEY.match(f"{key}: x") or "\n" in str(value):
            raise ValueError(f"header: {key!r} must be a word and its value one line, got {value!r}")
        head[key] = value
    head.setdefault("MaxJobs", len(outcomes))
    head.setdefault("MaxRecords", len(lines))
    head.setdefault("Preemption", "Double" if n_parts else "No")
    notes = [f"times in seconds since the start of the run, {decimals} decimals",
             *(f"executable {k} = class {c}" for c, k in apps.items())]
    text = [f"; {k}: {v}" for k, v in head.items()] + [f"; Note: {n}" for n in notes]
    Path(path).write_text("\n".join(text + [line for *_, line in lines]) + "\n", encoding="utf-8")


def _check_segments(job_id: int, segs: Sequence[tuple[float, float, int]]) -> list[Segment]:
    out = [Segment(float(s), float(e), int(p)) for s, e, p in segs]
    for i, (s, e, p) in enumerate(out):
        if not (math.isfinite(s) and math.isfinite(e) and s <= e) or p < 1:
            raise ValueError(f"segments: job {job_id} part {i} must have start <= end and procs >= 1, got {(s, e, p)}")
        if i and s < out[i - 1].end:
            raise ValueError(f"segments: job {job_id} part {i} starts before part {i - 1} ends")
    return out


__all__ = ["FIELDS", "HEADER_KEYS", "PARTIAL_STATUSES", "HeaderReader", "Segment", "SwfError", "SwfImport", "SwfJob",
           "SwfTrace", "parse_job_line", "read_swf", "to_stream", "write_swf"]
