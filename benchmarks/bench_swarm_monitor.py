"""Benchmark: a monitor sample on a Swarm cluster, by three execs per workstation or from each host's sampler.

    .venv/bin/python -m benchmarks.bench_swarm_monitor --per-node 2 --samples 10

Issue 18 named the monitor's exec per reading as the first cost of many hosts: on another
host every reading (the cap, the owners' CPU time, the tc counters) is a `docker exec`
through that host's engine. testbed/backends/swarm/sampling.py replaces them with one
sampler container per host. This measures both on three Docker-in-Docker nodes of this
machine (tools/testbeds/dind.py): `--samples` monitor reads each way, alternately,
one second apart. Reported per read: its wall time, the controller's CPU (this process), and
the CPU the three nodes used (their engines, the execs' processes, the samplers; read from
each node container's cgroup), over the same span. Function, not timing, is what nested
nodes on one machine say in general; these are costs, which they do show.
"""
from __future__ import annotations

import argparse

import docker
from benchmarks._common import machines_cpu_s
from benchmarks._monitor_arms import both_arms, print_table
from testbed import backends, lifecycle
from testbed.backends.swarm.backend import SwarmBackend
from testbed.spec import from_dict
from tools.testbeds import dind


def node_ids(client: docker.DockerClient, nodes: list[dind.Node]) -> list[str]:
    """The nodes' container ids on this host, which the Docker backend's CPU counter takes."""
    return [client.api.inspect_container(f"nowlab-dind-{n.name}")["Id"] for n in nodes]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-node", type=int, default=2, help="workstations on each of the three nodes")
    parser.add_argument("--samples", type=int, default=10, help="monitor reads each way")
    parser.add_argument("--cpu", type=float, default=0.1)
    args = parser.parse_args()
    local = docker.from_env()
    host = backends.get("docker")  # the nodes are containers of this host
    nodes = dind.up(log=lambda _m: None)
    try:
        ids = node_ids(local, nodes)
        ws = [{"name": f"ws{i * args.per_node + j + 1}", "cpu": args.cpu, "host": n.name}
              for i, n in enumerate(nodes) for j in range(args.per_node)]
        spec = from_dict({"name": "bench-swmon", "workstation": ws,
                          "host": [{"name": n.name, "address": n.address, "docker": n.url} for n in nodes]})
        c = lifecycle.start(spec, backend=SwarmBackend(spec), ready_timeout=300)
        try:
            rows = both_arms("swarm_monitor", c, args.samples, lambda: machines_cpu_s(host, ids),
                             ("execs", "samplers"))
        finally:
            c.down()
    finally:
        dind.down()
    print_table(f"a monitor read of {len(spec.names)} workstations on 3 Docker-in-Docker nodes, {args.samples} reads "
                f"each way", "nodes", rows)


if __name__ == "__main__":
    main()
