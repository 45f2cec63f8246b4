"""Batsim interval sets: "0-3 5 7-9" <-> the resource numbers it names.

Batsim's interval-set documentation (docs/interval-set.rst, v4.2.1): closed integer intervals
`a-b` (or `a` when a = b) separated by single spaces. Any representation is valid, overlapping
or unsorted ("1-2 1-3 5 7", "5 2-2 7 1-3"); the canonical one (disjoint, maximal, `a` for
single resources, ascending) is what `format_intervals` writes, as Batsim and procset do.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

_INTERVAL = re.compile(r"([0-9]+)(?:-([0-9]+))?")


class IntervalError(ValueError):
    """A string that is not an interval set, or names a resource outside the machine."""


def parse_intervals(text: str, *, machine_size: int | None = None) -> tuple[int, ...]:
    """The resources `text` names, ascending and without repeats.

    machine_size: when given, every resource must be in 0..machine_size-1.
    Raises IntervalError naming the offending interval.
    """
    if not isinstance(text, str):
        raise IntervalError(f"must be a string like '0-3 5', got {text!r}")
    resources: set[int] = set()
    for part in text.split(" ") if text else ():
        m = _INTERVAL.fullmatch(part)
        if m is None:
            raise IntervalError(f"{part!r} in {text!r} is not an interval (a or a-b, a and b integers >= 0, "
                                f"one space between intervals)")
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if hi < lo:
            raise IntervalError(f"{part!r} in {text!r} ends before it starts")
        if machine_size is not None and hi >= machine_size:
            raise IntervalError(f"{part!r} in {text!r} is outside the machine (resources 0-{machine_size - 1})")
        resources.update(range(lo, hi + 1))
    return tuple(sorted(resources))


def format_intervals(resources: Iterable[int]) -> str:
    """The canonical string of a set of resource numbers: [0, 1, 2, 3, 5] -> '0-3 5'."""
    ordered = sorted(set(resources))
    for r in ordered:
        if isinstance(r, bool) or not isinstance(r, int) or r < 0:
            raise IntervalError(f"resource numbers must be integers >= 0, got {r!r}")
    parts: list[str] = []
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        parts.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return " ".join(parts)


def interval_count(text: str) -> int:
    """How many resources an interval set names: '0-2 5' -> 4."""
    return len(parse_intervals(text))


__all__ = ["IntervalError", "format_intervals", "interval_count", "parse_intervals"]
