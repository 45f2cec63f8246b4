"""What the runner holds after each cell, for finding what a cell leaves behind (issue 19).

Opt-in: with NOWLAB_CENSUS=DIR set, the runner appends one JSON line per finished cell to
DIR/census.jsonl: its resident memory, the live Python objects counted by type, and, when
tracemalloc is tracing (PYTHONTRACEMALLOC=1), the traced growth by source line since the
previous cell. Comparing two cells' lines says whether memory that stays is Python objects
(and which) or the allocator's (RSS up, objects flat). It then asks glibc to return its free
memory (`malloc_trim`) and records the RSS after: what drops was freed memory the heaps kept.
pymalloc's own arenas are counted too (`pymalloc_stats`).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import gc
import json
import os
import re
import sys
import tempfile
import time
import tracemalloc
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from experiments.reporting.tables import md_table

ENV = "NOWLAB_CENSUS"
TOP = 25  # object types and source lines kept per line


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def malloc_trim() -> bool:
    """Ask glibc to return the free memory of its heaps to the system (False: not glibc)."""
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        return bool(ctypes.CDLL(name).malloc_trim(0))
    except (OSError, AttributeError):  # another libc: no malloc_trim
        return False


def pymalloc_stats() -> dict[str, int]:
    """pymalloc's arenas (1 MiB each) and the bytes in their live blocks, from
    sys._debugmallocstats (CPython writes it to the C stderr, so fd 2 is borrowed meanwhile).
    Arenas that stay while their live bytes do not: objects that outlive a cell scattered
    over arenas that cannot be returned (fragmentation, not a leak). Empty if unavailable,
    as under tracemalloc, whose hooks hide pymalloc from it."""
    if not hasattr(sys, "_debugmallocstats"):
        return {}
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+") as tmp:
        try:
            os.dup2(tmp.fileno(), 2)
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        tmp.seek(0)
        text = tmp.read()
    keys = {"arenas allocated current": "arenas", "bytes in allocated blocks": "allocated_bytes",
            "bytes in available blocks": "available_bytes"}
    out = {}
    for label, key in keys.items():
        m = re.search(rf"# {label}\s*=\s*([\d,]+)", text)
        if m:
            out[key] = int(m.group(1).replace(",", ""))
    return out


@dataclass
class Census:
    out: Path
    _last: Counter = field(default_factory=Counter)
    _snap: tracemalloc.Snapshot | None = None

    @classmethod
    def from_env(cls) -> "Census | None":
        d = os.environ.get(ENV)
        if not d:
            return None
        Path(d).mkdir(parents=True, exist_ok=True)
        return cls(Path(d) / "census.jsonl")

    def take(self, label: str) -> None:
        gc.collect()
        counts = Counter(type(o).__name__ for o in gc.get_objects())
        grown = sorted(((counts[k] - self._last.get(k, 0), k) for k in counts), reverse=True)[:TOP]
        line: dict = {"label": label, "t": time.time(), "rss_mib": round(rss_mib(), 2),
                      "objects": sum(counts.values()), "pymalloc": pymalloc_stats(),
                      "grown": {k: [counts[k], d] for d, k in grown if d > 0}}
        if tracemalloc.is_tracing():
            snap = tracemalloc.take_snapshot()
            line["traced_mib"] = round(tracemalloc.get_traced_memory()[0] / 2**20, 2)
            if self._snap is not None:
                diff = snap.compare_to(self._snap, "lineno")[:TOP]
                line["by_line"] = [[str(s.traceback[0]), round(s.size_diff / 1024, 1), s.count_diff] for s in diff]
            self._snap = snap
        self._last = counts
        malloc_trim()
        line["rss_after_trim_mib"] = round(rss_mib(), 2)
        with self.out.open("a") as f:
            f.write(json.dumps(line) + "\n")


def table(path: Path) -> str:
    """The census lines as a Markdown table, one row a cell: RSS before and after `malloc_trim`,
    live objects, pymalloc's arenas and their live bytes, each with its change from the row above."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    out: list[list[str]] = []
    prev: dict | None = None

    def cell(now: float, before: float | None, fmt: str) -> str:
        return f"{now:{fmt}}" + ("" if before is None else f" ({now - before:+{fmt}})")

    for r in rows:
        pm, ppm = r.get("pymalloc") or {}, (prev or {}).get("pymalloc") or {}
        arenas = (cell(pm["arenas"], ppm.get("arenas"), "d") if "arenas" in pm else "-")
        live = (cell(pm["allocated_bytes"] / 2**20, ppm["allocated_bytes"] / 2**20 if "allocated_bytes" in ppm
                     else None, ".1f") if "allocated_bytes" in pm else "-")
        out.append([r["label"], cell(r["rss_mib"], prev and prev["rss_mib"], ".1f"),
                    cell(r["rss_after_trim_mib"], prev and prev["rss_after_trim_mib"], ".1f"),
                    cell(r["objects"], prev and prev["objects"], ","), arenas, live])
        prev = r
    return md_table(["after", "RSS (MiB)", "after malloc_trim (MiB)", "live objects", "pymalloc arenas",
                     "bytes in live blocks (MiB)"], out)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m experiments.census DIR/census.jsonl   (prints the cells' table)")
    print(table(Path(sys.argv[1])))
