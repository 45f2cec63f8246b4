"""Benchmark: a monitor sample on a Swarm cluster, by three execs per workstation or from each host's sampler.

    .venv/bin/python benchmarks/bench_swarm_monitor.py --per-node 2 --samples 10

Issue 18 named the monitor's exec per reading as the first cost of many hosts: on another
host every reading (the cap, the owners' CPU time, the tc counters) is a `docker exec`
through that host's engine. testbed/backends/swarm/sampling.py replaces them with one
sampler container per host. This measures both on three Docker-in-Docker nodes of this
machine (testbed/backends/swarm/dind.py): `--samples` monitor reads each way, alternately,
one second apart. Reported per read: its wall time, the controller's CPU (this process), and
the CPU the three nodes used (their engines, the execs' processes, the samplers; read from
each node container's cgroup), over the same span. Function, not timing, is what nested
nodes on one machine say in general; these are costs, which they do show.
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

import docker
from _common import containers_cpu_s, cpu_self_s, table

from testbed.backends.swarm import dind
from testbed.backends.swarm.backend import SwarmBackend
from testbed.cluster import Cluster
from testbed.load.monitor import OWNER_MARK, TC_READ_ARGV, Monitor
from testbed.spec import from_dict


def nodes_cpu_s(client: docker.DockerClient, nodes: list[dind.Node]) -> float:
    return containers_cpu_s(client, [f"nowlab-dind-{n.name}" for n in nodes])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-node", type=int, default=2, help="workstations on each of the three nodes")
    parser.add_argument("--samples", type=int, default=10, help="monitor reads each way")
    parser.add_argument("--cpu", type=float, default=0.1)
    args = parser.parse_args()
    local = docker.from_env()
    nodes = dind.up(log=lambda _m: None)
    try:
        ws = [{"name": f"ws{i * args.per_node + j + 1}", "cpu": args.cpu, "host": n.name}
              for i, n in enumerate(nodes) for j in range(args.per_node)]
        spec = from_dict({"name": "bench-swmon", "workstation": ws,
                          "host": [{"name": n.name, "address": n.address, "docker": n.url} for n in nodes]})
        c = Cluster.create(spec, backend=SwarmBackend(spec), ready_timeout=300)
        try:
            rows: dict[str, list[dict]] = {"execs": [], "samplers": []}

            def measure(arm: str, mon: Monitor) -> None:
                for i in range(args.samples):  # one read a second, as the monitor does
                    n0 = nodes_cpu_s(local, nodes)
                    w0, c0 = time.monotonic(), cpu_self_s()
                    mon._read()
                    wall = time.monotonic() - w0
                    time.sleep(max(0.0, 1.0 - wall))
                    row = {"bench": "swarm_monitor", "arm": arm, "read": i, "wall_s": wall,
                           "controller_cpu_s": cpu_self_s() - c0, "nodes_cpu_s": nodes_cpu_s(local, nodes) - n0,
                           "span_s": time.monotonic() - w0}
                    rows[arm].append(row)
                    print(json.dumps(row), flush=True)

            measure("execs", Monitor(c))  # first, before any sampler runs on the nodes
            sampled = Monitor(c)
            sampled._stream = c.sample_stream(OWNER_MARK, TC_READ_ARGV, 1.0)
            deadline = time.monotonic() + 60
            while len(sampled._stream.latest()) < len(c.workstations) and time.monotonic() < deadline:
                time.sleep(0.5)  # the samplers start
            measure("samplers", sampled)
            assert sampled.reads["sampled"] > 0, sampled.reads
            sampled._stream.close()
        finally:
            c.down()
    finally:
        dind.down()
    n = len(spec.names)
    table(f"a monitor read of {n} workstations on 3 Docker-in-Docker nodes, {args.samples} reads each way",
          ["readings by", "wall per read, median s", "controller CPU per read, median s",
           "nodes' CPU per second, median s"],
          [[arm, f"{statistics.median(r['wall_s'] for r in rs):.3f}",
            f"{statistics.median(r['controller_cpu_s'] for r in rs):.3f}",
            f"{statistics.median(r['nodes_cpu_s'] / r['span_s'] for r in rs):.3f}"] for arm, rs in rows.items()])


if __name__ == "__main__":
    main()
