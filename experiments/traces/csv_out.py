"""Write a result's per-job and timeline CSVs without pandas, byte for byte as its to_csv would.

Why: for a large run, importing pandas and building the frames took longer than the simulation
itself (issue 13, item 9), so `nowlab simulate` writes with this and never loads pandas. The
columns and values are SimResult.job_columns() / timeline_columns(), the lists the frames are
built from, so a column added there appears in both files. Each column is written by pandas'
rules for `to_csv(index=False)`: a column of ints and floats is a float column (1 -> "1.0"), a
float is its shortest repr, and None or NaN is an empty field.
"""
from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scheduler.results import SimResult

QUOTED = (",", '"', "\r", "\n")
"""A field with one of these is quoted by the csv module (delimiter, quote char, line ends)."""
CHUNK_ROWS = 65536
"""Rows joined into one string per write: bounds the memory a long timeline takes."""


def column_text(values: Sequence[Any]) -> tuple[Sequence[str], bool]:
    """The text pandas writes for each value of one column, after inferring the column's dtype, and
    whether any of it may need quoting (text of numbers never does)."""
    kinds = set(map(type, values))
    if all(issubclass(k, str) for k in kinds):  # str, or a StrEnum (an event kind) that is its text
        return values, True
    if kinds <= {int} or kinds <= {bool}:  # (apart: 1 == True) ids repeat down a timeline: format each once
        texts = dict.fromkeys(values)
        texts.update(zip(texts, map(str, texts)))
        return list(map(texts.__getitem__, values)), False
    if kinds <= {float}:
        return _float_text(values), False
    if kinds <= {int, float, type(None)} and kinds != {type(None)}:  # pandas: float64, NaN for None
        return _float_text([math.nan if v is None else float(v) for v in values]), False
    return ["" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v) for v in values], True


def _float_text(values: Sequence[float]) -> list[str]:
    """repr of each float, NaN as empty; a run of equal values (a timeline's times) is formatted once."""
    out: list[str] = []
    append = out.append
    last: float | None = None
    text = ""
    for v in values:
        if v != last or v == 0.0:  # 0.0 == -0.0 but they print apart; NaN != NaN, so never reused
            last, text = v, ("" if v != v else repr(v))
        append(text)
    return out


def _quoted(texts: Sequence[str]) -> bool:
    joined = "\x00".join(texts)
    return any(c in joined for c in QUOTED)


def write_columns(path: str | Path, columns: dict[str, Sequence[Any]]) -> None:
    """A CSV with one column per key, in order: `pd.DataFrame(columns).to_csv(path, index=False)`."""
    lengths = {len(v) for v in columns.values()}
    if len(lengths) > 1:
        raise ValueError(f"columns of unequal length: {sorted(lengths)}")
    header = list(columns)
    texts, maybe = zip(*map(column_text, columns.values())) if columns else ((), ())
    quoting = len(header) < 2 or _quoted(header) or any(_quoted(t) for t, m in zip(texts, maybe) if m)
    with Path(path).open("w", newline="") as handle:
        if quoting:  # the csv module quotes (and writes a lone empty field as "")
            out = csv.writer(handle, lineterminator="\n")
            out.writerow(header)
            out.writerows(zip(*texts))
            return
        handle.write(",".join(header) + "\n")
        # Nothing to quote: joining is the csv module's output, at twice its speed. zip reuses its
        # row tuple once join has let go of it, so the cyclic GC sees no new containers.
        rows = zip(*texts)
        for _ in range(0, len(texts[0]), CHUNK_ROWS):
            handle.write("\n".join(map(",".join, islice(rows, CHUNK_ROWS))) + "\n")


def write_jobs(result: SimResult, path: str | Path, success: list[bool] | None = None) -> None:
    """The per-job CSV: `result.to_dataframe(success).to_csv(path, index=False)` without pandas."""
    write_columns(path, result.job_columns(success))


def write_timeline(result: SimResult, path: str | Path) -> None:
    """The timeline CSV: `result.timeline_dataframe().to_csv(path, index=False)` without pandas."""
    write_columns(path, result.timeline_columns())
