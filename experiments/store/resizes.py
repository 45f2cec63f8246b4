"""The results store's `resizes` table: one typed row per measured preemption.

The columns are `workloads.host.records.ResizeRecord`'s fields, in its order,
with the cell and segment in front; times are on the cell's stream clock
(seconds after the cell's stream started), like the jobs table. Stores
written before the table existed kept each segment's resizes as a CSV
artifact named `resizes-<segment>.csv`, with times on the segment's clock;
`legacy_rows` reads those, so an old store answers the same query.
"""
from __future__ import annotations

import csv
import io
import math
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any, get_type_hints

from workloads.host.records import FIELDS, ResizeRecord

_SET_FIELDS = ("from_procs", "to_procs", "from_hosts", "to_hosts")
_TIME_FIELDS = ("requested_at", "sent_at", "ack_at", "partition_at", "released_at", "exited_at",
                "relaunched_at", "running_at")


def _sql_type(hint: Any) -> str:
    """The column type of one ResizeRecord field: numbers as numbers, sets as space-separated text."""
    text = str(hint)
    if "None" in text:
        return "REAL"
    if hint is float:
        return "REAL NOT NULL"
    if hint is int:
        return "INTEGER NOT NULL"
    return "TEXT NOT NULL"


def _columns() -> list[tuple[str, str]]:
    hints = get_type_hints(ResizeRecord)
    out = []
    for name in FIELDS:
        column = "job_id" if name == "job" else name
        out.append((column, "INTEGER NOT NULL" if name == "job" else _sql_type(hints[name])))
    return out


COLUMNS = tuple(name for name, _ in _columns())
SCHEMA = ("CREATE TABLE IF NOT EXISTS resizes (\n"
          "    cell_id INTEGER NOT NULL REFERENCES cells(id), segment INTEGER NOT NULL, seq INTEGER NOT NULL,\n"
          + "".join(f"    {name} {kind},\n" for name, kind in _columns())
          + "    PRIMARY KEY (cell_id, segment, seq));\n")


def to_row(record: ResizeRecord, offset: float) -> tuple[Any, ...]:
    """The record's column values, times moved from the segment's clock to the cell's stream clock."""
    values = []
    for name in FIELDS:
        v = getattr(record, name)
        if name in _SET_FIELDS:
            v = " ".join(str(x) for x in v)
        elif name in _TIME_FIELDS and v is not None:
            v = v + offset
        elif name == "job":
            v = int(v)
        values.append(v)
    return tuple(values)


def from_row(row: Sequence[Any]) -> ResizeRecord:
    """A stored row (the COLUMNS, in order) back as a record."""
    kwargs: dict[str, Any] = {}
    for name, v in zip(FIELDS, row):
        if name in ("from_procs", "to_procs"):
            v = tuple(int(x) for x in str(v).split())
        elif name in ("from_hosts", "to_hosts"):
            v = tuple(str(v).split())
        kwargs[name] = v
    return ResizeRecord(**kwargs)


def insert(conn: sqlite3.Connection, cell_id: int, segment: int, rows: Iterable[tuple[Any, ...]]) -> None:
    """Replace a segment's resizes (a redone step writes them again)."""
    conn.execute("DELETE FROM resizes WHERE cell_id = ? AND segment = ?", (cell_id, segment))
    marks = ", ".join("?" * (3 + len(COLUMNS)))
    conn.executemany(f"INSERT INTO resizes (cell_id, segment, seq, {', '.join(COLUMNS)}) VALUES ({marks})",
                     [(cell_id, segment, seq, *row) for seq, row in enumerate(rows)])


def _interval_ids(text: str) -> tuple[int, ...]:
    """Batsim's interval-set text, as the old CSVs wrote processor sets: '0-2 5' -> (0, 1, 2, 5)."""
    out: list[int] = []
    for part in text.split():
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return tuple(out)


def _number(text: str, kind: type) -> Any:
    if text == "":
        return None
    value = float(text)
    return int(value) if kind is int else (None if math.isnan(value) else value)


def legacy_rows(text: str, offset: float) -> list[tuple[Any, ...]]:
    """The rows of an old `resizes-<segment>.csv` artifact (segment clock) as table rows."""
    hints = get_type_hints(ResizeRecord)
    rows = []
    for raw in csv.DictReader(io.StringIO(text)):
        kwargs: dict[str, Any] = {"job": int(float(raw["job"]))}
        for name in FIELDS[1:]:
            if name not in raw:
                continue
            v = raw[name]
            if name in ("from_procs", "to_procs"):
                kwargs[name] = _interval_ids(v)
            elif name in ("from_hosts", "to_hosts"):
                kwargs[name] = tuple(v.split())
            elif hints[name] is str:
                kwargs[name] = v
            else:
                kind = int if hints[name] is int else float
                value = _number(v, kind)
                kwargs[name] = value if value is not None or "None" in str(hints[name]) else kind(0)
        rows.append(to_row(ResizeRecord(**kwargs), offset))
    return rows
