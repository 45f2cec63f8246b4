"""Time from `up` to every workstation ssh-ready, and the time of `down`, at 4, 16 and 32.

Target (issue 2): 16 workstations up and ssh-ready in <= 15 s, down in <= 5 s.
Run: .venv/bin/python -m benchmarks.bench_lifecycle [--reps 3]
"""
from __future__ import annotations

import argparse
import time

from benchmarks._common import median, table
from testbed import from_dict, lifecycle


def one(n: int, share: float) -> tuple[float, float]:
    spec = from_dict({"name": f"bench-{n}", "workstation": [{"name": "ws", "count": n, "cpu": share}]})
    t0 = time.monotonic()
    c = lifecycle.up(spec)
    up = time.monotonic() - t0
    t1 = time.monotonic()
    c.down()
    return up, time.monotonic() - t1


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--sizes", default="4,16,32")
    args = parser.parse_args()
    rows = []
    for n in [int(x) for x in args.sizes.split(",")]:
        share = min(0.2, round(1.6 / n, 3))  # total 1.6 cores at most: under 90% of each core
        runs = [one(n, share) for _ in range(args.reps)]
        ups, downs = [u for u, _ in runs], [d for _, d in runs]
        rows.append([str(n), f"{share:g}", f"{median(ups):.2f}", f"{min(ups):.2f}-{max(ups):.2f}",
                     f"{median(downs):.2f}", f"{min(downs):.2f}-{max(downs):.2f}"])
    table(f"cluster lifecycle, medians of {args.reps} (targets at 16: up <= 15 s, down <= 5 s)",
          ["workstations", "cpu each", "up->ssh-ready (s)", "range", "down (s)", "range"], rows)


if __name__ == "__main__":
    main()
