"""Why the CFS period is 10 ms: MPI latency between two 0.1-core workstations per period.

Runs checks/probes/latency.py, busy-waiting (blocking Wait, Open MPI spins) and polite
(Test + 0.2 ms sleep), on two pinned workstations at 0.1 core for several CFS periods, and
at 0.9 core. Each figure is a mean over a time window spanning many periods (note that the
per-RTT figure includes the broadcast that ends the window, ~1 extra message).
The note on a time window: shared/probes' count-based probes can finish inside one quota.
Run: .venv/bin/python -m checks.cfs_period
"""
from __future__ import annotations

import argparse
import re
from pathlib import Path

from benchmarks._common import median, table
from testbed import cluster, from_dict

PROBES = Path(__file__).resolve().parent / "probes"


def measure(period_us: int | None, share: float, reps: int, window: float) -> dict[str, tuple[float, float]]:
    defaults = {"cpu": share} | ({"cfs_period_us": period_us} if period_us else {})
    spec = from_dict({"name": "bench-cfs", "defaults": defaults, "workstation": [{"name": "ws", "count": 2}]})
    out = {}
    with cluster(spec) as c:
        code = (PROBES / "latency.py").read_text()
        for probe in ("busy", "polite"):
            rtts, barriers = [], []
            for _ in range(reps):
                res = c.mpirun(["ws1", "ws2"], ["python3", "-c", code, probe, f"{window:g}"],
                               timeout=300).check(probe)
                m = re.search(r"rtt_ms=([\d.]+) barrier_ms=([\d.]+)", res.stdout)
                assert m, res.stdout
                rtts.append(float(m.group(1)))
                barriers.append(float(m.group(2)))
            out[probe] = (median(rtts), median(barriers))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--window", type=float, default=3.0, help="seconds per measurement")
    args = parser.parse_args()
    rows = []
    for label, period, share in (("100 ms (Docker default)", 100_000, 0.1), ("20 ms", 20_000, 0.1),
                                 ("10 ms (nowlab default)", 10_000, 0.1),
                                 ("0.9 core, 10 ms", None, 0.9)):
        res = measure(period, share, args.reps, args.window)
        busy, polite = res["busy"], res["polite"]
        rows.append([label, f"{busy[0]:.2f}", f"{busy[1]:.2f}", f"{polite[0]:.2f}", f"{polite[1]:.2f}"])
    table(f"MPI latency at 0.1 core by CFS period (ms, medians of {args.reps})",
          ["CFS period", "busy RTT", "busy barrier", "polite RTT", "polite barrier"], rows)


if __name__ == "__main__":
    main()
