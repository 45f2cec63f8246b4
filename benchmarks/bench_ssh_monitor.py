"""Benchmark: a monitor sample on the SSH backend, by three ssh commands per workstation or from one agent per host.

    .venv/bin/python -m benchmarks.bench_ssh_monitor --samples 10

Issue 18 asks to fix what would break first as hosts grow; on the SSH backend a monitor
sample opened three ssh channels per workstation (the cap, the owners' CPU time, the tc
counters), two of them starting python3 on the workstation being measured.
testbed/backends/ssh/sampling.py replaces them with one `hostagent sample` per host on one
channel. This measures both on the three stand-in lab machines
(tools/testbeds/lab_machines.py; one workstation each, nothing running on them):
`--samples` monitor reads each way, one second apart. Reported per read: its wall time, the
controller's CPU (this process), and the CPU the three machines used (sshd, the agents,
their python3 starts; from each machine container's cgroup) over the same span.
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import docker
from benchmarks._common import machines_cpu_s
from benchmarks._monitor_arms import both_arms, print_table
from testbed import backends, lifecycle
from tools.testbeds.lab_machines import ROLES, container_name, lab_machines
from testbed.spec import from_dict
from tools.testbeds.lab_machines import ROLES, container_name, lab_machines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=10, help="monitor reads each way")
    parser.add_argument("--cpu", type=float, default=0.2)
    args = parser.parse_args()
    local = docker.from_env()
    host = backends.get("docker")  # the machines are containers of this host
    names = [container_name(h) for h in ROLES]
    with tempfile.TemporaryDirectory() as keys, lab_machines(Path(keys)) as m:
        hosts = [{"name": h, "address": m.addresses[h], "identity": str(m.admin_key), "cores": [i % 2]}
                 for i, h in enumerate(ROLES)]
        spec = from_dict({"name": "bench-sshmon", "host": hosts, "defaults": {"cpu": args.cpu, "egress": "50mbit"},
                          "workstation": [{"name": f"ws{i + 1}"} for i in range(len(ROLES))]})
        ids = [local.api.inspect_container(name)["Id"] for name in names]
        c = lifecycle.start(spec, backend=backends.get("ssh", spec), ready_timeout=120)
        try:
            rows = both_arms("ssh_monitor", c, args.samples, lambda: machines_cpu_s(host, ids),
                             ("ssh commands", "agents"))
        finally:
            c.down()
    print_table(f"a monitor read of {len(ROLES)} workstations on the SSH backend, {args.samples} reads each way",
                "machines", rows)


if __name__ == "__main__":
    main()
