"""A Parallel Workloads Archive trace as rigid jobs, with a count of everything left out.

Reads an SWF file (format version 2.2, https://www.cs.huji.ac.il/labs/parallel/workload/swf.html)
as the jobs that ran: each with its submit time, its size (processors requested, else allocated),
its run time and its requested time, to replay as it was. The header is read as `read_swf`
reads it (`HeaderReader`: `; Key: value`, continuation lines, repeated `Note`s).

Which lines become jobs (`RigidTrace.jobs`), each rule counted in `ParseSummary`:

* status 2, 3, 4 (a partial execution of a checkpointed or swapped job): not a job; the
  job's own line (status 0 or 1) stands for it. Counted in `partial_lines`.
* status 5 (cancelled): not replayed, whether or not it ran for a while (a cancelled job's
  run time is -1 when it never started). Counted in `cancelled`.
* run time missing (-1) on a job that is not cancelled: nothing to replay. `missing_run_time`.
* size missing (requested and allocated processors both -1 or 0): `missing_size`.
* submit time missing (-1): `missing_submit`.
* requested time missing (-1): kept, with `requested_time_s = None` (a policy that needs it
  falls back on its own rule); counted in `missing_requested_time` among the kept jobs.
* status 0 (failed), 1 (completed) and -1 (unknown) are kept with their status.

A malformed line (not 18 fields, a field that is not a number, an integer field with a
fraction, a value that is not finite) is, with `on_bad="raise"` (the default), one `SwfError`
naming the file, the line and the field; with `on_bad="skip"`, left out and listed with its
line number and reason in `ParseSummary.malformed`.

Speed: pandas' C parser converts every job line in one call (100,000 lines in 0.65 CPU-seconds
on this shared host, benchmarks/bench_swf_read.py); the lines are split one by one only when
that call refuses them, to name the bad line.
"""
from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, NamedTuple

import numpy as np
import pandas as pd

from experiments.traces.swf import CANCELLED, FIELDS, PARTIAL_STATUSES, HeaderReader, SwfError, parse_job_line

N_FIELDS = len(FIELDS)
_INTEGRAL = np.array([integral for _, _, integral in FIELDS])
# Column numbers (0-based) of the fields a rigid job keeps.
(_JOB, _SUBMIT, _WAIT, _RUN, _PROCS, _CPU, _MEM, _REQ_PROCS, _REQ_TIME, _REQ_MEM, _STATUS, _USER, _GROUP, _APP,
 _QUEUE, _PARTITION, _PRECEDING, _THINK) = range(N_FIELDS)


class RigidJob(NamedTuple):
    """One job of a trace as it ran: fixed size, started once. None where the trace has -1.

    A NamedTuple, not a frozen dataclass: a trace has 10^5-10^6 of them and a tuple is made
    several times faster.
    """

    job: int  # the trace's job number
    submit_s: float
    wait_s: float | None
    run_s: float
    procs_requested: int | None
    procs_allocated: int | None
    requested_time_s: float | None
    status: int  # 1 completed, 0 failed, -1 unknown
    user: int | None
    group: int | None
    app: int | None
    queue: int | None
    partition: int | None
    line: int  # 1-based line in the file

    @property
    def size(self) -> int:
        """Processors to run it on: as requested, else as allocated (a kept job has one of them)."""
        size = self.procs_requested if self.procs_requested is not None else self.procs_allocated
        assert size is not None, f"job {self.job} (line {self.line}) has no size"
        return size


@dataclass(frozen=True)
class ParseSummary:
    """What a trace held, line by line kind; the module docstring gives each rule."""

    lines: int  # every line of the file
    comment_lines: int
    job_lines: int  # lines with 18 numeric fields (all statuses)
    kept: int
    cancelled: int
    partial_lines: int
    missing_run_time: int
    missing_size: int
    missing_submit: int
    missing_requested_time: int  # among the kept jobs
    malformed: tuple[tuple[int, str], ...] = field(default=())  # (line, reason), with on_bad="skip"

    def as_dict(self) -> dict[str, int]:
        """The counts, for a report table."""
        return {"lines": self.lines, "comment lines": self.comment_lines, "job lines": self.job_lines,
                "kept": self.kept, "cancelled (status 5)": self.cancelled,
                "partial-execution lines (status 2-4)": self.partial_lines,
                "no run time": self.missing_run_time, "no size": self.missing_size,
                "no submit time": self.missing_submit,
                "kept without a requested time": self.missing_requested_time, "malformed": len(self.malformed)}


@dataclass(frozen=True)
class RigidTrace:
    """A trace read for replay: its header, its jobs in file order, and the summary."""

    path: str
    header: dict[str, str]
    comments: list[str]
    jobs: list[RigidJob]
    summary: ParseSummary

    @property
    def max_procs(self) -> int | None:
        """The machine's processors: the `MaxProcs` header, else `MaxNodes`, else None."""
        for key in ("MaxProcs", "MaxNodes"):
            value = self.header.get(key, "").split("\n")[0].strip()
            if value.isdigit() and int(value) > 0:
                return int(value)
        return None

    @property
    def unix_start_time(self) -> int | None:
        """`UnixStartTime`: the wall-clock second that submit time 0 stands for."""
        value = self.header.get("UnixStartTime", "").strip()
        return int(value) if value.lstrip("-").isdigit() else None


def read_rigid(path: str | Path, *, on_bad: Literal["raise", "skip"] = "raise") -> RigidTrace:
    """Read an SWF trace as rigid jobs (rules in the module docstring)."""
    if on_bad not in ("raise", "skip"):
        raise ValueError(f"on_bad: unknown {on_bad!r} (raise, skip)")
    path = Path(path)
    head = HeaderReader()
    data: list[str] = []
    data_lines: list[int] = []
    malformed: list[tuple[int, str]] = []
    with path.open(encoding="utf-8", errors="replace") as f:
        text_lines = f.read().split("\n")  # newlines only, as `read_swf` counts lines
    if text_lines and not text_lines[-1]:
        text_lines.pop()
    n_lines = len(text_lines)
    previous_comment = False
    for lineno, raw in enumerate(text_lines, start=1):
        text = raw.strip()
        if text[:1] == ";":
            head.comment(lineno, text)
            previous_comment = True
            continue
        if previous_comment:
            head.other()
            previous_comment = False
        if text:
            data.append(text)
            data_lines.append(lineno)
    head.check(path)
    table, lines = _to_numbers(path, data, data_lines, on_bad, malformed)
    jobs, counts = _jobs(table, lines)
    summary = ParseSummary(lines=n_lines, comment_lines=len(head.comments), job_lines=len(lines),
                           kept=len(jobs), malformed=tuple(sorted(malformed)), **counts)
    return RigidTrace(path=str(path), header=head.header, comments=head.comments, jobs=jobs, summary=summary)


def _bad(path: Path, lineno: int, reason: str, on_bad: str, malformed: list[tuple[int, str]]) -> None:
    if on_bad == "raise":
        raise SwfError(f"{path}:{lineno}: {reason}")
    malformed.append((lineno, reason))


def _to_numbers(path: Path, data: list[str], data_lines: list[int], on_bad: str,
                malformed: list[tuple[int, str]]) -> tuple[np.ndarray, np.ndarray]:
    """The job lines as an (n, 18) float array and their line numbers, bad lines out.

    pandas' C parser reads every line at once; if it refuses (a line with too many fields or
    a word) the lines are split one by one to find which.
    """
    if not data:
        return np.empty((0, N_FIELDS)), np.empty(0, dtype=np.int64)
    try:
        table = pd.read_csv(io.StringIO("\n".join(data)), sep=r"\s+", header=None, dtype=np.float64,
                            names=range(N_FIELDS), na_filter=True, engine="c").to_numpy()
    except (ValueError, pd.errors.ParserError):
        table = None
    if table is not None and table.shape == (len(data), N_FIELDS) and not np.isnan(table).any():
        lines = np.asarray(data_lines, dtype=np.int64)
        bad = ~np.isfinite(table).all(axis=1) | (table[:, _INTEGRAL] != np.trunc(table[:, _INTEGRAL])).any(axis=1)
        for i in np.flatnonzero(bad):
            _reason_or_raise(path, data[i].split(), int(lines[i]), on_bad, malformed)
        return table[~bad], lines[~bad]
    rows: list[list[str]] = []
    row_lines: list[int] = []
    for text, lineno in zip(data, data_lines):
        tokens = text.split()
        if len(tokens) != N_FIELDS:
            _bad(path, lineno, f"expected {N_FIELDS} fields, got {len(tokens)}", on_bad, malformed)
        else:
            rows.append(tokens)
            row_lines.append(lineno)
    lines = np.asarray(row_lines, dtype=np.int64)
    idx = np.arange(len(rows))  # table row -> position in `rows`
    try:
        table = np.array(rows, dtype=np.float64).reshape(-1, N_FIELDS)
    except ValueError:  # some field is not a number: find which, line by line
        table = np.empty((len(rows), N_FIELDS))
        ok = np.ones(len(rows), dtype=bool)
        for i, tokens in enumerate(rows):
            try:
                table[i] = np.array(tokens, dtype=np.float64)
            except ValueError:
                ok[i] = False
                _reason_or_raise(path, tokens, row_lines[i], on_bad, malformed)
        table, lines, idx = table[ok], lines[ok], idx[ok]
    bad = ~np.isfinite(table).all(axis=1) | (table[:, _INTEGRAL] != np.trunc(table[:, _INTEGRAL])).any(axis=1)
    for i in np.flatnonzero(bad):
        _reason_or_raise(path, rows[idx[i]], int(lines[i]), on_bad, malformed)
    return table[~bad], lines[~bad]


def _reason_or_raise(path: Path, tokens: list[str], lineno: int, on_bad: str,
                     malformed: list[tuple[int, str]]) -> None:
    """The per-line parser's one-line reason for a bad line: raised, or kept with its line."""
    try:
        parse_job_line(" ".join(tokens), path, lineno)
    except SwfError as exc:
        if on_bad == "raise":
            raise
        malformed.append((lineno, str(exc).split(f"{path}:{lineno}: ", 1)[-1]))


def _jobs(t: np.ndarray, lines: np.ndarray) -> tuple[list[RigidJob], dict[str, int]]:
    """Classify every numeric job line and build the kept ones."""
    status = t[:, _STATUS]
    partial = np.isin(status, PARTIAL_STATUSES)
    cancelled = ~partial & (status == CANCELLED)
    whole = ~partial & ~cancelled
    no_run = whole & (t[:, _RUN] < 0)
    no_size = whole & ~no_run & (t[:, _REQ_PROCS] <= 0) & (t[:, _PROCS] <= 0)
    no_submit = whole & ~no_run & ~no_size & (t[:, _SUBMIT] < 0)
    keep = whole & ~no_run & ~no_size & ~no_submit
    k = t[keep]
    counts = {"cancelled": int(cancelled.sum()), "partial_lines": int(partial.sum()),
              "missing_run_time": int(no_run.sum()), "missing_size": int(no_size.sum()),
              "missing_submit": int(no_submit.sum()), "missing_requested_time": int((k[:, _REQ_TIME] < 0).sum())}

    def opt_f(col: int) -> list[float | None]:
        return [None if x < 0 else x for x in k[:, col].tolist()]

    def opt_i(col: int) -> list[int | None]:
        return [None if x <= 0 else x for x in k[:, col].astype(np.int64).tolist()]

    def opt_id(col: int) -> list[int | None]:  # ids may be 0; only -1 means missing
        return [None if x < 0 else x for x in k[:, col].astype(np.int64).tolist()]

    jobs = list(map(RigidJob, k[:, _JOB].astype(np.int64).tolist(), k[:, _SUBMIT].tolist(), opt_f(_WAIT),
                    k[:, _RUN].tolist(), opt_i(_REQ_PROCS), opt_i(_PROCS), opt_f(_REQ_TIME),
                    k[:, _STATUS].astype(np.int64).tolist(), opt_id(_USER), opt_id(_GROUP), opt_id(_APP),
                    opt_id(_QUEUE), opt_id(_PARTITION), lines[keep].tolist()))
    return jobs, counts


__all__ = ["ParseSummary", "RigidJob", "RigidTrace", "read_rigid"]
