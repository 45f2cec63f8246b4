"""How long does a cluster's resident MPI world take to answer, as workstations grow and caps shrink?

    python -m benchmarks.probes.pool_start --n 32 [--cpu 0.053] [--timeout 900]

Brings up N workstations (default cap: min(0.1, 0.85 x cores / N), as
benchmarks/bench_controller_cost.py does), waits for the warm paths, stops the world that
`up` started, starts one afresh and polls every second how many of its ranks answer a ping,
until all do or --timeout passes. Prints the time to the first and the last rank, and
the count at every tenth of the wait. Takes the cluster down at the end.
"""
from __future__ import annotations

import argparse
import os
import time

import testbed
from testbed import pool, warm


def answering(c: testbed.Cluster) -> int:
    """Ranks of the world that answer a ping now."""
    try:
        return len(pool.discover(c, c.workstations, timeout_s=0.0))
    except TimeoutError as exc:
        # "pool: no rank answers on A, B after 0 s": the workstations named are the ones missing
        missing = str(exc).split(" on ", 1)[1].rsplit(" after ", 1)[0]
        if missing.startswith("none"):  # all answer, but a world of another size: not this one yet
            return 0
        return len(c.workstations) - len(missing.split(", "))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=32)
    ap.add_argument("--cpu", type=float, default=None, help="each workstation's cap, cores")
    ap.add_argument("--timeout", type=float, default=900.0)
    a = ap.parse_args()
    cpu = a.cpu if a.cpu is not None else round(min(0.1, 0.85 * (os.cpu_count() or 1) / a.n), 3)
    spec = testbed.from_dict({"name": f"t-pool-{a.n}", "defaults": {"cpu": cpu},
                              "workstation": [{"name": "ws", "count": a.n}]})
    t0 = time.monotonic()
    c = testbed.up(spec)
    try:
        print(f"n={a.n} at {cpu} core: up in {time.monotonic() - t0:.1f} s", flush=True)
        t1 = time.monotonic()
        warm.wait_warm(c, timeout=max(60.0, 4.0 * a.n))
        print(f"warm paths in {time.monotonic() - t1:.1f} s", flush=True)
        pool.stop(c, c.workstations)
        start = time.monotonic()
        pool.start(c)
        series: list[tuple[float, int]] = []
        while time.monotonic() - start < a.timeout:
            k = answering(c)
            series.append((time.monotonic() - start, k))
            if k == a.n:
                break
            time.sleep(1.0)
        first = next((t for t, k in series if k > 0), None)
        last = series[-1][0] if series and series[-1][1] == a.n else None
        for t, k in series[:: max(1, len(series) // 10)]:
            print(f"  {t:6.1f} s: {k}/{a.n} ranks answer")
        print(f"first rank answered after {first if first is None else round(first, 1)} s; "
              f"all {a.n} after {'not within %g s' % a.timeout if last is None else f'{last:.1f} s'}")
    finally:
        c.down()


if __name__ == "__main__":
    main()
