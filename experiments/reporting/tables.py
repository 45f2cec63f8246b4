"""The one Markdown table writer: every report's pipe tables go through `md_table`.

A cell's text is escaped (`|` would end the cell, a newline the row), so a quote
or a label can never break a table. Cells arrive formatted: number formats are
the report's business, not the writer's.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any


def cell(value: Any) -> str:
    """A value as the text of one table cell: `|` escaped, newlines folded into spaces."""
    return str(value).replace("|", "\\|").replace("\r\n", " ").replace("\n", " ")


def md_table(header: Sequence[Any], rows: Iterable[Sequence[Any]], *, spaced_rule: bool = False) -> str:
    """A pipe table: the header, the rule under it (`|---|---|`, or `| --- | --- |` with
    `spaced_rule`, as some committed reports have it) and one line a row, no trailing newline."""
    rule = "| " + " | ".join("---" for _ in header) + " |" if spaced_rule else "|" + "---|" * len(header)
    lines = ["| " + " | ".join(cell(h) for h in header) + " |", rule]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)
