"""What the meter costs a core (issue 12's target: at most 2% of a core).

    python -m benchmarks.bench_meter_cost [samples_per_core]

Takes samples on every core exactly as the keeper does (testbed.meter.Smoother sizes each
from the core's last factor, the kernels alternate) and prints, per core, the median and
90th percentile CPU time of one sample and the median's share of the core at the keeper's
two samples a second. The share depends on how loaded the core is (a slower core makes a
sample of the same work cost more CPU, which the sizing caps); run it idle and beside a
live experiment to see both. The test command checks only a loose sanity bound.
"""
from __future__ import annotations

import os
import sys

import numpy as np
from rich.console import Console
from rich.table import Table


from testbed.meter import KERNEL_ORDER, Smoother, measure

SAMPLES_PER_S = 2.0  # the keeper's rate per core: one sample of each kernel a second
TARGET_SHARE = 0.02


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    table = Table(title=f"meter cost, {n} samples per core (target: at most {TARGET_SHARE:.0%} of a core)")
    for col in ("core", "median CPU per sample (ms)", "p90 (ms)", "share of the core", "within target"):
        table.add_column(col)
    ok = True
    for core in sorted(os.sched_getaffinity(0)):
        sm = Smoother()
        costs = []
        for i in range(n):
            kernel = KERNEL_ORDER[i % len(KERNEL_ORDER)]
            s = measure(core, kernel, sm.sample_ref_s(core, kernel))
            sm.add(s)
            costs.append(s.cpu_s)
        median, p90 = float(np.median(costs)), float(np.quantile(costs, 0.9))
        share = median * SAMPLES_PER_S
        ok &= share <= TARGET_SHARE
        table.add_row(str(core), f"{median * 1e3:.1f}", f"{p90 * 1e3:.1f}", f"{share:.1%}",
                      "yes" if share <= TARGET_SHARE else "no")
    Console().print(table)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
