"""Do resizes that overlap in time slow each other's data transfer? Read from stored runs.

    python -m experiments.studies.padhye_dowdy.analyses.resize_overlap STORE.sqlite [STORE.sqlite ...] [--link-bit-s 1e8]

For every resize that moved data, the number of other jobs' resizes whose partition-to-running
span overlaps its own, and its measured redistribution time over what one resize alone would
take: the busiest sender's bytes over the link (experiments.models.resize.busiest_fraction,
the same block plan as the workloads'). Prints, by overlap, the count and the median and 90th
percentile of that ratio, and the median of the rest of the resize (partition to running, less
the redistribution: checkpoint, load, relaunch). A ratio that rises with the overlap is a capacity the concurrent
transfers share (on one host: its bridge and the CPU the caps leave), which the per-link
resize model does not price.
"""
from __future__ import annotations

import argparse
import sqlite3
from pathlib import Path

import numpy as np

from experiments.models.resize import busiest_fraction, moved_fraction


def procs(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split())


def ratios(path: Path, link_bit_s: float) -> dict[int, list[tuple[float, float]]]:
    """Overlap (0, 1, 2 = two or more) -> (redistribution / alone, rest in seconds) of each resize."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = db.execute("SELECT cell_id, job_id, partition_at, running_at, from_procs, to_procs, bytes_moved, "
                      "redistribution_s FROM resizes WHERE running_at IS NOT NULL AND partition_at IS NOT NULL "
                      "AND bytes_moved > 0 AND redistribution_s > 0").fetchall()
    by: dict[int, list[tuple[float, float]]] = {}
    for cell, job, start, end, old, new, moved, redis in rows:
        o, n = procs(old), procs(new)
        frac = moved_fraction(o, n)
        if frac <= 0:
            continue
        alone = 8.0 * (moved / frac) * busiest_fraction(o, n) / link_bit_s
        overlap = sum(1 for c, j, s, e, *_ in rows if c == cell and j != job and s < end and e > start)
        by.setdefault(min(overlap, 2), []).append((redis / alone, end - start - redis))
    return by


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("stores", type=Path, nargs="+")
    ap.add_argument("--link-bit-s", type=float, default=1e8, help="the workstations' link rate (bit/s)")
    a = ap.parse_args()
    print(f"{'store':42s} {'overlap':>7s} {'n':>4s} {'median':>7s} {'p90':>6s} {'rest (s)':>9s}   "
          "(redistribution / alone over the link; the rest's median)")
    for path in a.stores:
        for k, pairs in sorted(ratios(path, a.link_bit_s).items()):
            r, rest = np.array(pairs).T
            print(f"{path.name[:42]:42s} {str(k) + ('+' if k == 2 else ''):>7s} {len(r):4d} "
                  f"{np.median(r):7.2f} {np.percentile(r, 90):6.2f} {np.median(rest):9.2f}")


if __name__ == "__main__":
    main()
