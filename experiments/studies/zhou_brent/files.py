"""A time-sharing run's rows as CSV files in one directory, and back: the report is redone from these alone."""
from __future__ import annotations

import csv
import io
import math
from dataclasses import MISSING, astuple, fields
from pathlib import Path
from typing import TypeVar

from experiments.studies.zhou_brent.measure import (IntervalRow, JobRow, ManagerRow, RunRow, RunRows, ShareRow, SkewRow,
                                           TableRow)

FILES = {"run": ("run.csv", RunRow), "jobs": ("jobs.csv", JobRow), "shares": ("shares.csv", ShareRow),
         "intervals": ("timeline.csv", IntervalRow), "tables": ("tables.csv", TableRow),
         "skews": ("skew.csv", SkewRow), "managers": ("managers.csv", ManagerRow)}
Row = TypeVar("Row")


class RunFilesError(ValueError):
    """A run directory that cannot be read back: one line naming the file and the column."""


def _text(value: object) -> str:
    if isinstance(value, float):
        return "" if math.isnan(value) else repr(value)
    return str(value)


def _value(kind: str, text: str, where: str) -> object:
    try:
        if kind == "float":
            return math.nan if text == "" else float(text)
        if kind == "int":
            return int(text)
        if kind == "bool":
            if text not in ("True", "False"):
                raise ValueError(text)
            return text == "True"
        return text
    except ValueError:
        raise RunFilesError(f"{where}: expected {kind}, got {text!r}") from None


def write_rows(out_dir: Path, rows: RunRows) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for attr, (name, cls) in FILES.items():
        value = getattr(rows, attr)
        items = (value,) if attr == "run" else value
        path = out_dir / name
        with path.open("w", newline="") as f:
            w = csv.writer(f)
            w.writerow([fl.name for fl in fields(cls)])
            w.writerows([_text(v) for v in astuple(item)] for item in items)
        written.append(path)
    return written


def _read(path: Path, cls: type[Row]) -> list[Row]:
    if not path.is_file():
        raise RunFilesError(f"{path}: missing (a run directory holds {', '.join(n for n, _ in FILES.values())})")
    try:
        text = path.read_bytes().decode("utf-8")  # whole, so a byte that is not UTF-8 is one line here
    except UnicodeDecodeError:
        raise RunFilesError(f"{path.name}: not UTF-8 text") from None
    with io.StringIO(text, newline="") as f:
        reader = csv.DictReader(f)
        want = [fl.name for fl in fields(cls)]
        got = list(reader.fieldnames or [])
        # a file written before a column with a default was added ends early: the default fills it
        later = [fl for fl in fields(cls)[len(got):] if fl.default is not MISSING]
        if got != want[:len(got)] or len(got) + len(later) != len(want):
            raise RunFilesError(f"{path.name}: columns {reader.fieldnames}, expected {want}")
        defaults = {fl.name: _text(fl.default) for fl in later}
        rows = []
        for row in reader:
            where = f"{path.name} line {reader.line_num}"
            if None in row.values() or None in row:  # DictReader: None for a missing field, key None for extras
                n = sum(v is not None for k, v in row.items() if k is not None) + len(row.get(None) or [])
                raise RunFilesError(f"{where}: expected {len(got)} columns, got {n}")
            row = {**defaults, **row}
            rows.append(cls(**{fl.name: _value(str(fl.type), row[fl.name], f"{where} {fl.name}") for fl in fields(cls)}))
        return rows


def read_rows(run_dir: Path) -> RunRows:
    got = {attr: _read(run_dir / name, cls) for attr, (name, cls) in FILES.items()}
    if len(got["run"]) != 1:
        raise RunFilesError(f"{run_dir / 'run.csv'}: expected one row, got {len(got['run'])}")
    return RunRows(got["run"][0], *(tuple(got[a]) for a in list(FILES)[1:]))


def write_failure(out_dir: Path, job: str, output: str, dedicated: list[dict[str, object]]) -> list[Path]:
    """What a failed run leaves: the failed job's whole output, and the dedicated runs it had made
    (each job's T_d, minutes of work) as JSON, so neither is lost with the run."""
    import json

    out_dir.mkdir(parents=True, exist_ok=True)
    log = out_dir / f"failed-{job}.log"
    log.write_text(output if output.endswith("\n") else output + "\n")
    written = [log]
    if dedicated:
        path = out_dir / "dedicated-partial.json"
        path.write_text(json.dumps(dedicated, indent=1, default=str) + "\n")
        written.append(path)
    return written
