"""The resident MPI world of a cluster (workloads/pool.py): start it, find its ranks, stop it.

One mpiexec from the first workstation places `slots` ranks on every workstation
(Open MPI's round-robin by node: slot s of every host before slot s + 1). It is started
in the background at `up` (testbed/warm.py) and again by `pool_launcher` whenever it
does not answer, so a cluster that predates the pool, or whose world died, still works.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING

from workloads import pool_wire
from workloads.pool_client import PoolLauncher, PoolRank, ping

if TYPE_CHECKING:
    from testbed.cluster import Cluster

DEFAULT_SLOTS = 1
OUTPUT_DIR = "/tmp/nowlab-pool-output"  # mpiexec --output-filename: each rank's stray output
MARK = "workloads.pool"


def pool_argv(cluster: "Cluster", slots: int = DEFAULT_SLOTS) -> list[str]:
    if not 1 <= slots <= pool_wire.MAX_SLOTS:
        raise ValueError(f"slots: {slots} outside 1..{pool_wire.MAX_SLOTS}")
    argv = cluster.mpi_argv(cluster.workstations, ["python3", "-m", MARK], ranks_per_host=slots, fast=False)
    return [argv[0], "--output-filename", OUTPUT_DIR, *argv[1:]]


def stop(cluster: "Cluster") -> None:
    """Kill the world's mpiexec and every rank (each workstation, whatever state it is in)."""
    for ws in cluster.workstations:
        cluster.control(ws).run(["pkill", "-KILL", "-f", MARK])


def running(cluster: "Cluster") -> bool:
    """The world's mpiexec is alive on the first workstation."""
    return cluster.control(cluster.workstations[0]).run(["pgrep", "-f", f"mpiexec.*{MARK}"]).ok


def start(cluster: "Cluster", slots: int = DEFAULT_SLOTS) -> None:
    """Start a world in the background; `discover` waits for it."""
    cluster.control(cluster.workstations[0]).detach(pool_argv(cluster, slots))


def discover(cluster: "Cluster", slots: int = DEFAULT_SLOTS, timeout_s: float = 0.0) -> list[PoolRank]:
    """Every rank of a running world, after at most `timeout_s` of waiting; TimeoutError if incomplete."""
    ips = cluster.ips
    want = {(ws, s) for ws in cluster.workstations for s in range(slots)}
    found: dict[tuple[str, int], PoolRank] = {}
    deadline = time.monotonic() + timeout_s
    while True:
        sizes = set()
        for ws, s in sorted(want - set(found)):
            address = (ips[ws], pool_wire.PORT_BASE + s)
            try:
                pong = ping(address, timeout_s=1.0)
            except OSError:
                continue
            found[(ws, s)] = PoolRank(ws, s, int(pong["rank"]), address)
            sizes.add(int(pong["size"]))
        if len(found) == len(want) and sizes <= {len(want)}:
            return sorted(found.values(), key=lambda r: r.rank)
        if time.monotonic() >= deadline:
            missing = ", ".join(f"{ws}/{s}" for ws, s in sorted(want - set(found)))
            raise TimeoutError(f"pool: no rank answers on {missing} after {timeout_s:.0f} s")
        time.sleep(0.2)


def ensure(cluster: "Cluster", slots: int = DEFAULT_SLOTS, timeout_s: float = 90.0) -> list[PoolRank]:
    """The running world's ranks; a new world if this one is missing or incomplete."""
    try:
        ranks = discover(cluster, slots, timeout_s=0.0)
        if len(ranks) == len(cluster.workstations) * slots:
            return ranks
    except TimeoutError:
        pass
    if running(cluster):  # a world still starting (from `up`) answers soon; one that lost a rank never will
        try:
            return discover(cluster, slots, timeout_s=min(30.0, timeout_s))
        except TimeoutError:
            pass
    stop(cluster)
    start(cluster, slots)
    return discover(cluster, slots, timeout_s=timeout_s)


def pool_launcher(cluster: "Cluster", slots: int = DEFAULT_SLOTS) -> PoolLauncher:
    """A launcher on the cluster's resident world, started (or restarted) as needed."""
    def renew() -> list[PoolRank]:
        stop(cluster)
        start(cluster, slots)
        return discover(cluster, slots, timeout_s=90.0)

    return PoolLauncher(ensure(cluster, slots), renew=renew, fallback=cluster)
