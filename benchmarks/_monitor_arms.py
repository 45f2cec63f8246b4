"""A monitor read measured two ways, one second apart as the monitor reads: read by read from the
controller, then from the backend's own samplers (bench_swarm_monitor.py, bench_ssh_monitor.py)."""
from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable

from benchmarks._common import cpu_self_s, table
from testbed.cluster import Cluster
from testbed.load.monitor import OWNER_MARK, TC_READ_ARGV, Monitor


def measure(bench: str, arm: str, mon: Monitor, samples: int, hosts_cpu_s: Callable[[], float]) -> list[dict]:
    """Per read: its wall time, the controller's CPU and the hosts' CPU over the read's second."""
    rows = []
    for i in range(samples):
        h0 = hosts_cpu_s()
        w0, c0 = time.monotonic(), cpu_self_s()
        mon._read()
        wall = time.monotonic() - w0
        time.sleep(max(0.0, 1.0 - wall))
        row = {"bench": bench, "arm": arm, "read": i, "wall_s": wall, "controller_cpu_s": cpu_self_s() - c0,
               "hosts_cpu_s": hosts_cpu_s() - h0, "span_s": time.monotonic() - w0}
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def both_arms(bench: str, c: Cluster, samples: int, hosts_cpu_s: Callable[[], float],
              arms: tuple[str, str]) -> dict[str, list[dict]]:
    """The direct reads first (before any sampler runs), then the samplers', once every
    workstation has a reading; a sampled read that fell back to a direct one fails the run."""
    rows = {arms[0]: measure(bench, arms[0], Monitor(c), samples, hosts_cpu_s)}
    sampled = Monitor(c)
    sampled._stream = stream = c.sample_stream(OWNER_MARK, TC_READ_ARGV, 1.0)
    assert stream is not None, "this backend has no samplers of its own"
    deadline = time.monotonic() + 60
    while len(stream.latest()) < len(c.workstations) and time.monotonic() < deadline:
        time.sleep(0.5)  # the samplers start
    try:
        rows[arms[1]] = measure(bench, arms[1], sampled, samples, hosts_cpu_s)
    finally:
        stream.close()
    assert sampled.reads["direct"] == 0, f"{sampled.reads['direct']} readings were direct: {stream.errors}"
    return rows


def print_table(title: str, hosts: str, rows: dict[str, list[dict]]) -> None:
    table(title, ["readings by", "wall per read, median s", "controller CPU per read, median s",
                  f"{hosts}' CPU per second, median s"],
          [[arm, f"{statistics.median(r['wall_s'] for r in rs):.3f}",
            f"{statistics.median(r['controller_cpu_s'] for r in rs):.3f}",
            f"{statistics.median(r['hosts_cpu_s'] / r['span_s'] for r in rs):.3f}"] for arm, rs in rows.items()])
