"""Benchmark: a monitor sample on the SSH backend, by three ssh commands per workstation or from one agent per host.

    .venv/bin/python benchmarks/bench_ssh_monitor.py --samples 10

Issue 18 asks to fix what would break first as hosts grow; on the SSH backend a monitor
sample opened three ssh channels per workstation (the cap, the owners' CPU time, the tc
counters), two of them starting python3 on the workstation being measured.
testbed/backends/ssh/sampling.py replaces them with one `hostagent sample` per host on one
channel. This measures both on the three stand-in lab machines
(testbed/backends/ssh/lab_machines.py; one workstation each, nothing running on them):
`--samples` monitor reads each way, one second apart. Reported per read: its wall time, the
controller's CPU (this process), and the CPU the three machines used (sshd, the agents,
their python3 starts; from each machine container's cgroup) over the same span.
"""
from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import docker
from _common import containers_cpu_s, cpu_self_s, table

from testbed import backends
from testbed.backends.ssh.lab_machines import ROLES, lab_machines
from testbed.cluster import Cluster
from testbed.load.monitor import OWNER_MARK, TC_READ_ARGV, Monitor
from testbed.spec import from_dict


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=10, help="monitor reads each way")
    parser.add_argument("--cpu", type=float, default=0.2)
    args = parser.parse_args()
    local = docker.from_env()
    names = [f"nowlab-sshtest-{h}" for h in ROLES]
    rows: dict[str, list[dict]] = {"ssh commands": [], "agents": []}
    with tempfile.TemporaryDirectory() as keys, lab_machines(Path(keys)) as m:
        hosts = [{"name": h, "address": m.addresses[h], "identity": str(m.admin_key), "cores": [i % 2]}
                 for i, h in enumerate(ROLES)]
        spec = from_dict({"name": "bench-sshmon", "host": hosts, "defaults": {"cpu": args.cpu, "egress": "50mbit"},
                          "workstation": [{"name": f"ws{i + 1}"} for i in range(len(ROLES))]})
        c = Cluster.create(spec, backend=backends.get("ssh", spec), ready_timeout=120)
        try:
            def measure(arm: str, mon: Monitor) -> None:
                for i in range(args.samples):  # one read a second, as the monitor does
                    n0 = containers_cpu_s(local, names)
                    w0, c0 = time.monotonic(), cpu_self_s()
                    mon._read()
                    wall = time.monotonic() - w0
                    time.sleep(max(0.0, 1.0 - wall))
                    row = {"bench": "ssh_monitor", "arm": arm, "read": i, "wall_s": wall,
                           "controller_cpu_s": cpu_self_s() - c0,
                           "machines_cpu_s": containers_cpu_s(local, names) - n0, "span_s": time.monotonic() - w0}
                    rows[arm].append(row)
                    print(json.dumps(row), flush=True)

            measure("ssh commands", Monitor(c))
            sampled = Monitor(c)
            sampled._stream = c.sample_stream(OWNER_MARK, TC_READ_ARGV, 1.0)
            deadline = time.monotonic() + 60
            while len(sampled._stream.latest()) < len(c.workstations) and time.monotonic() < deadline:
                time.sleep(0.5)  # the agents start
            measure("agents", sampled)
            direct = sampled.reads["direct"]
            sampled._stream.close()
            assert direct == 0, f"{direct} readings fell back to ssh commands: {sampled._stream.errors}"
        finally:
            c.down()
    table(f"a monitor read of {len(ROLES)} workstations on the SSH backend, {args.samples} reads each way",
          ["readings by", "wall per read, median s", "controller CPU per read, median s",
           "machines' CPU per second, median s"],
          [[arm, f"{statistics.median(r['wall_s'] for r in rs):.3f}",
            f"{statistics.median(r['controller_cpu_s'] for r in rs):.3f}",
            f"{statistics.median(r['machines_cpu_s'] / r['span_s'] for r in rs):.3f}"] for arm, rs in rows.items()])


if __name__ == "__main__":
    main()
