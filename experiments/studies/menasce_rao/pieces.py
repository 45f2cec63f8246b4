"""Tables 2 and 3 from several runs of `nowlab taskgraph tables --classes ...`: one verdict.

Why: a full table at eight repetitions a row takes about two hours here, longer than one
sitting's live budget, so it is run a class or two at a time. Each run writes its own
`tables.csv`; this joins them, refuses a row that two runs both measured (which one would
count is a choice, not arithmetic), and judges each table against the same targets as one run.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from experiments.reporting.tables import md_table
from experiments.studies.menasce_rao.report import COLUMNS, MAX_TARGET, MEDIAN_TARGET, judge

#: The error columns judged, with how the verdict names them.
ERRORS = (("error", "the spec's speeds"), ("metered_error", "the metered kernel speeds"),
          ("profiled_error", "the task-profiled speeds"))


@dataclass(frozen=True)
class Piece:
    source: str               # the tables.csv it came from
    row: dict[str, str]       # one line of it


def read(paths: list[Path]) -> list[Piece]:
    """Every row of every `tables.csv`; a row (table, class, n) found twice is an error naming both files."""
    seen: dict[tuple[str, str, str], str] = {}
    out = []
    for path in paths:
        with path.open(newline="") as f:
            reader = csv.DictReader(f)
            missing = [c for c in ("table", "class", "n", *(e for e, _ in ERRORS)) if c not in (reader.fieldnames or ())]
            if missing:
                raise ValueError(f"{path}: no column {missing[0]!r} (not a `nowlab taskgraph tables` CSV)")
            for row in reader:
                key = (row["table"], row["class"], row["n"])
                if key in seen:
                    raise ValueError(f"Table {key[0]}, {key[2]} {key[1]}: in both {seen[key]} and {path}")
                seen[key] = str(path)
                out.append(Piece(str(path), row))
    return out


def verdicts(pieces: list[Piece]) -> dict[int, list[tuple[str, float, float, bool]]]:
    """Per table: (speeds, median |error|, largest |error|, met) for each error column every row has."""
    out: dict[int, list[tuple[str, float, float, bool]]] = {}
    for table in sorted({int(p.row["table"]) for p in pieces}):
        rows = [p.row for p in pieces if int(p.row["table"]) == table]
        out[table] = []
        for column, name in ERRORS:
            if any(r[column] == "" for r in rows):
                continue
            out[table].append((name, *judge([float(r[column]) for r in rows])))
    return out


def markdown(pieces: list[Piece], command: str) -> str:
    lines = ["# Menascé & Rao (1996), Tables 2 and 3, joined from runs by class", "",
             f"Made by `{command}`. Each row is from the run named in its last column; the "
             f"targets are the issue's (median |error| at most {MEDIAN_TARGET:.0%}, largest at most {MAX_TARGET:.0%}).", ""]
    for table, judged in verdicts(pieces).items():
        lines += [f"## Table {table}", ""]
        rows = []
        for p in pieces:
            r = p.row
            if int(r["table"]) != table:
                continue
            rows.append((r["class"], r["n"], r.get("reps", ""),
                         f"{float(r['measured_median_s']):.2f} ({float(r['measured_min_s']):.2f}-"
                         f"{float(r['measured_max_s']):.2f})", f"{float(r['tgs_s']):.2f}",
                         _pct(r["error"]), _pct(r["metered_error"]), _pct(r["profiled_error"]),
                         r["paper_error_pct"] + "%" if r.get("paper_error_pct") else "-", f"`{p.source}`"))
        lines += [md_table(["class", "n", "reps", "measured (s)", "TGS (s)", "error", "metered error", "profiled error",
                            "paper E", "run"], rows), ""]
        lines += [f"- With {name}: median {med:.1%}, largest {worst:.1%}: {'met' if ok else 'NOT met'}."
                  for name, med, worst, ok in judged]
        lines.append("")
    return "\n".join(lines)


def write_csv(pieces: list[Piece], path: Path) -> None:
    """The joined rows in the one-run CSV's columns, with the source run last."""
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow((*COLUMNS, "source"))
        for p in pieces:
            w.writerow((*(p.row.get(c, "") for c in COLUMNS), p.source))


def _pct(text: str) -> str:
    return "n/a" if text == "" else f"{float(text):+.1%}"
