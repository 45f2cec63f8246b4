"""Calibration accuracy: CPU share at 16 x 0.1 core, and bandwidth from 1 to 100 Mbit/s.

Targets (issue 2): every workstation within 3% of its share; every rate within 5%.
Run: .venv/bin/python benchmarks/bench_calibration.py
"""
from __future__ import annotations

import argparse

from _common import console, median, table

from testbed import cluster, from_dict
from testbed.calibrate import measure_cpu, measure_link


def cpu(reps: int, seconds: float) -> None:
    spec = from_dict({"name": "bench-cpu16", "workstation": [{"name": "ws", "count": 16, "cpu": 0.1}]})
    with cluster(spec) as c:
        runs = [measure_cpu(c, seconds) for _ in range(reps)]
    rows = []
    worst = 0.0
    for i, ws in enumerate(c.workstations):
        errs = [run[i].error for run in runs]
        worst = max(worst, max(abs(e) for e in errs))
        rows.append([ws, "0.100", f"{median([run[i].measured for run in runs]):.4f}", f"{median(errs):+.2%}",
                     f"{max(errs, key=abs):+.2%}"])
    table(f"CPU share delivered, 16 workstations x 0.1 core busy at once, {reps} runs of {seconds:g} s",
          ["workstation", "asked", "measured (median)", "error (median)", "worst run"], rows)
    console.print(f"worst |error| over all workstations and runs: {worst:.2%} (target <= 3%)")


def bandwidth(reps: int, seconds: float) -> None:
    rates = ["1mbit", "2mbit", "5mbit", "10mbit", "20mbit", "50mbit", "100mbit"]
    spec = from_dict({"name": "bench-bw", "workstation": [{"name": "ws", "count": 2, "cpu": 0.25}]})
    rows = []
    with cluster(spec) as c:
        for rate in rates:
            c.set_bandwidth("ws1", rate)
            samples = [measure_link(c, "ws1", "ws2", seconds) for _ in range(reps)]
            errs = [s.error for s in samples]
            rows.append([rate, f"{median([s.measured for s in samples]) / 1e6:.3f}",
                         f"{median([s.goodput for s in samples]) / 1e6:.3f}", f"{median(errs):+.2%}",
                         f"{max(errs, key=abs):+.2%}"])
    table(f"link rate at the wire (TCP goodput x frame/payload), 0.25-core workstations, {reps} runs of {seconds:g} s",
          ["asked", "measured Mbit/s", "goodput Mbit/s", "error (median)", "worst run"], rows)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--cpu-seconds", type=float, default=5.0)
    parser.add_argument("--link-seconds", type=float, default=3.0)
    args = parser.parse_args()
    cpu(args.reps, args.cpu_seconds)
    bandwidth(args.reps, args.link_seconds)


if __name__ == "__main__":
    main()
