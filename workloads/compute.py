"""The synthetic workload's compute unit: a counted number of float64 multiplies.

The unit is real floating-point work (numpy multiplies on a fixed-size vector),
done in chunks so its cost per multiply is steady; `calibrate` measures how many
multiplies per second a workstation delivers under its CPU cap, so "66,000
multiplications per phase" converts to a known time: mults / rate.
Run `python3 -m workloads.compute` on a workstation to calibrate it.
Runs inside the containers: standard library and numpy only.
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np

CHUNK = 256
FACTOR = 1.0 + 2.0 ** -30  # keeps the product finite for ~10^12 multiplies per element


def multiply(n_mults: int) -> float:
    """Do exactly n_mults float64 multiplications; return a value that depends on all of them."""
    acc = np.ones(CHUNK, dtype=np.float64)
    factor = np.full(CHUNK, FACTOR, dtype=np.float64)
    full, rest = divmod(max(n_mults, 0), CHUNK)
    for _ in range(full):
        np.multiply(acc, factor, out=acc)
    if rest:
        np.multiply(acc[:rest], factor[:rest], out=acc[:rest])
    return float(acc[0])


def calibrate(seconds: float = 1.0, probe_mults: int = 1_000_000) -> float:
    """Multiplies per second, measured over at least `seconds` of wall time."""
    done, t0 = 0, time.perf_counter()
    while True:
        multiply(probe_mults)
        done += probe_mults
        elapsed = time.perf_counter() - t0
        if elapsed >= seconds:
            return done / elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m workloads.compute", description=__doc__)
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args(argv)
    rate = calibrate(args.seconds)
    print(json.dumps({"mults_per_second": rate, "seconds_per_66000_mults": 66000 / rate}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
