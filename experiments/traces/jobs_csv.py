"""Read a jobs CSV: `id, arrival` plus either `W, alpha, beta, pmax, phases` or `t1`.

Optional columns: `pmax` and `phases` with t1, `reconfig_cost` with either.
An empty pmax with W means eq. 6 of A&S (ceil(sqrt(W/beta)), unlimited when
beta = 0). Every problem is reported as one ValueError naming the line, so
the CLI can print it as is.
"""
from __future__ import annotations

import csv
import io
import math
from pathlib import Path

from experiments.traces.text import utf8_text
from scheduler.model import DemandModel, Job, SevcikModel

SEVCIK_COLUMNS = ("W", "alpha", "beta", "pmax", "phases")


def _number(text: str, col: str, line: int, *, integer: bool = False, optional: bool = False):
    """The value of one field; a blank optional field is None. float() strips blanks itself, so a
    plain value takes the first branch alone (a 20,000-job file has 140,000 of them)."""
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is not None and 0.0 <= value < math.inf and (not integer or value == int(value)):
        return int(value) if integer else value
    text = text.strip()  # the slow path: say what is wrong
    if not text:
        if optional:
            return None
        raise ValueError(f"line {line}: column {col!r} is empty")
    if value is None:
        raise ValueError(f"line {line}: column {col!r} is not a number: {text!r}")
    if not math.isfinite(value):
        raise ValueError(f"line {line}: column {col!r} is not finite: {text!r}")
    if value < 0:
        raise ValueError(f"line {line}: column {col!r} is negative: {text}")
    raise ValueError(f"line {line}: column {col!r} must be a whole number: {text!r}")


def read_jobs(path: str | Path) -> list[Job]:
    """Jobs in file order; arrivals must be non-decreasing."""
    path = Path(path)
    text = utf8_text(path, "jobs CSV")
    with io.StringIO(text, newline="") as handle:
        reader = csv.reader(handle)
        header = [c.strip() for c in next(reader, [])]
        missing = [c for c in ("id", "arrival") if c not in header]
        sevcik = all(c in header for c in SEVCIK_COLUMNS)
        if not missing and not sevcik and "t1" not in header:
            missing = [c for c in SEVCIK_COLUMNS if c not in header] + ["(or t1)"]
        if missing:
            raise ValueError(f"{path}: line 1: missing column(s) {', '.join(missing)}; need id, arrival "
                             f"and either {', '.join(SEVCIK_COLUMNS)} or t1")
        at = {name: i for i, name in enumerate(header)}  # a repeated name: its last column, as DictReader
        n = len(header)  # each row is cut or padded to n fields, then "" appended: an absent column's
        i_id, i_arrival, i_cost = at["id"], at["arrival"], at.get("reconfig_cost", n)  # index n
        if sevcik:
            i_w, i_alpha, i_beta, i_pmax, i_phases = (at[c] for c in SEVCIK_COLUMNS)
        else:
            i_t1, i_pmax, i_phases = at["t1"], at.get("pmax", n), at.get("phases", n)
        jobs: list[Job] = []
        last = 0.0
        for row in reader:
            if not row:
                continue  # a blank line, skipped as DictReader did
            line = reader.line_num
            if len(row) != n:  # short rows read "" where DictReader read None; extra fields are ignored
                row = (row + [""] * n)[:n]
            row.append("")
            jid = row[i_id].strip()
            if not jid:
                raise ValueError(f"{path}: line {line}: empty id")
            try:
                arrival = _number(row[i_arrival], "arrival", line)
                if arrival < last:
                    raise ValueError(f"line {line}: arrivals not sorted ({arrival} after {last})")
                last = arrival
                cost = _number(row[i_cost], "reconfig_cost", line, optional=True) or 0.0
                if sevcik:
                    model = SevcikModel(_number(row[i_w], "W", line), _number(row[i_alpha], "alpha", line),
                                        _number(row[i_beta], "beta", line),
                                        _number(row[i_pmax], "pmax", line, integer=True, optional=True))
                    phases = _number(row[i_phases], "phases", line, integer=True)
                else:
                    model = DemandModel(_number(row[i_t1], "t1", line),
                                        _number(row[i_pmax], "pmax", line, integer=True, optional=True))
                    phases = _number(row[i_phases], "phases", line, integer=True, optional=True) or 1
                # isdigit() alone takes '²', which int() refuses: ASCII digits only
                jobs.append(Job(int(jid) if jid.isascii() and jid.isdigit() else jid, arrival, model, phases, cost))
            except ValueError as exc:
                msg = str(exc)
                raise ValueError(f"{path}: {msg if msg.startswith('line') else f'line {line}: {msg}'}") from None
    if not jobs:
        raise ValueError(f"{path}: no jobs")
    return jobs
