"""Read a jobs CSV: `id, arrival` plus either `W, alpha, beta, pmax, phases` or `t1`.

Optional columns: `pmax` and `phases` with t1, `reconfig_cost` with either.
An empty pmax with W means eq. 6 of A&S (ceil(sqrt(W/beta)), unlimited when
beta = 0). Every problem is reported as one ValueError naming the line, so
the CLI can print it as is.
"""
from __future__ import annotations

import csv
import math
from pathlib import Path

from scheduler.model import DemandModel, Job, SevcikModel

SEVCIK_COLUMNS = ("W", "alpha", "beta", "pmax", "phases")


def _number(row: dict, col: str, line: int, *, integer: bool = False, optional: bool = False):
    text = (row.get(col) or "").strip()
    if not text:
        if optional:
            return None
        raise ValueError(f"line {line}: column {col!r} is empty")
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"line {line}: column {col!r} is not a number: {text!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"line {line}: column {col!r} is not finite: {text!r}")
    if value < 0:
        raise ValueError(f"line {line}: column {col!r} is negative: {text}")
    if integer:
        if value != int(value):
            raise ValueError(f"line {line}: column {col!r} must be a whole number: {text!r}")
        return int(value)
    return value


def read_jobs(path: str | Path) -> list[Job]:
    """Jobs in file order; arrivals must be non-decreasing."""
    path = Path(path)
    try:
        handle = path.open(newline="")
    except OSError as exc:
        raise ValueError(f"cannot read jobs CSV {path}: {exc.strerror}") from None
    with handle:
        reader = csv.DictReader(handle)
        header = [c.strip() for c in (reader.fieldnames or [])]
        reader.fieldnames = header
        missing = [c for c in ("id", "arrival") if c not in header]
        sevcik = all(c in header for c in SEVCIK_COLUMNS)
        if not missing and not sevcik and "t1" not in header:
            missing = [c for c in SEVCIK_COLUMNS if c not in header] + ["(or t1)"]
        if missing:
            raise ValueError(f"{path}: line 1: missing column(s) {', '.join(missing)}; need id, arrival "
                             f"and either {', '.join(SEVCIK_COLUMNS)} or t1")
        jobs: list[Job] = []
        last = 0.0
        for row in reader:
            line = reader.line_num
            jid = (row.get("id") or "").strip()
            if not jid:
                raise ValueError(f"{path}: line {line}: empty id")
            try:
                arrival = _number(row, "arrival", line)
                if arrival < last:
                    raise ValueError(f"line {line}: arrivals not sorted ({arrival} after {last})")
                last = arrival
                cost = _number(row, "reconfig_cost", line, optional=True) or 0.0
                if sevcik:
                    model = SevcikModel(_number(row, "W", line), _number(row, "alpha", line),
                                        _number(row, "beta", line),
                                        _number(row, "pmax", line, integer=True, optional=True))
                    phases = _number(row, "phases", line, integer=True)
                else:
                    model = DemandModel(_number(row, "t1", line),
                                        _number(row, "pmax", line, integer=True, optional=True))
                    phases = _number(row, "phases", line, integer=True, optional=True) or 1
                jobs.append(Job(int(jid) if jid.isdigit() else jid, arrival, model, phases, cost))
            except ValueError as exc:
                msg = str(exc)
                raise ValueError(f"{path}: {msg if msg.startswith('line') else f'line {line}: {msg}'}") from None
    if not jobs:
        raise ValueError(f"{path}: no jobs")
    return jobs
