"""The resident MPI world of a cluster (workloads/pool.py): start it, find its ranks, stop it.

One mpiexec from the first running workstation places `slots` ranks on every running
workstation (Open MPI's round-robin by node: slot s of every host before slot s + 1). It
is started in the background at `up` (testbed/lifecycle.py, `start`) and again by `pool_launcher`
whenever it does not answer, so a cluster that predates the pool, or whose world died,
still works. With Open MPI's recovery on, a dead workstation takes only its own rank (and
so only the jobs on it); a world that is restarted spans the workstations still running.
The ranks serve only a host that holds the cluster's secret (`Cluster.secret`): it is in
mpiexec's environment, which `-x` hands on to every rank, never on a command line. A world
that does not take the secret (one from before it, or of an older secret) does not answer
`discover`, so `ensure` replaces it.
"""
from __future__ import annotations

import time
from typing import Protocol, Sequence

from testbed import mpi_command
from testbed.parallel import parallel
from testbed.remote_exec import Control
from testbed.spec import ClusterSpec
from workloads import channel_auth
from workloads.host.launch import Handle
from workloads.host.pool_client import Connect, PoolLauncher, PoolRank, ping
from workloads.wire import pool as pool_wire

DEFAULT_SLOTS = 1
OUTPUT_DIR = "/tmp/nowlab-pool-output"  # mpiexec --output-filename: each rank's stray output
MARK = "workloads.pool"


class PoolHost(Protocol):
    """What the resident world needs of a cluster (testbed.cluster.Cluster is one): its
    workstations, a way into each, how to reach their addresses, and the cluster's secret."""

    @property
    def workstations(self) -> list[str]: ...

    @property
    def spec(self) -> ClusterSpec: ...

    @property
    def ips(self) -> dict[str, str]: ...

    @property
    def secret(self) -> bytes: ...

    @property
    def connect(self) -> Connect: ...

    def is_running(self, ws: str) -> bool: ...

    def control(self, ws: str) -> Control: ...

    def oom_kills(self, ws: str) -> int: ...

    def mpirun_popen(self, hosts: Sequence[str], argv: Sequence[str], *,
                     env: dict[str, str] | None = None) -> Handle:
        """The launcher's fallback for anything but a `python3 -m` program."""
        ...


def alive(cluster: PoolHost) -> list[str]:
    """The cluster's workstations whose containers are running, in the cluster's order."""
    return [ws for ws in cluster.workstations if cluster.is_running(ws)]


def pool_argv(cluster: PoolHost, hosts: Sequence[str], slots: int = DEFAULT_SLOTS) -> list[str]:
    if not 1 <= slots <= pool_wire.MAX_SLOTS:
        raise ValueError(f"slots: {slots} outside 1..{pool_wire.MAX_SLOTS}")
    if not hosts:
        raise ValueError("hosts: no running workstation to start a pool on")
    argv = mpi_command.mpi_argv(cluster.workstations, list(hosts), ["python3", "-m", MARK], ranks_per_host=slots,
                                fast=False, forward=[channel_auth.POOL.secret_env])
    # recovery: a dead workstation must fail only the jobs on it, not the whole world
    return mpi_command.with_recovery(argv, OUTPUT_DIR)


def stop(cluster: PoolHost, hosts: Sequence[str]) -> None:
    """Kill the world's mpiexec and every rank on `hosts`, whatever state they are in."""
    for ws in hosts:
        cluster.control(ws).run(["pkill", "-KILL", "-f", MARK])


def running(cluster: PoolHost, hosts: Sequence[str]) -> bool:
    """The world's mpiexec is alive on the first of `hosts`."""
    return bool(hosts) and cluster.control(hosts[0]).run(["pgrep", "-f", f"mpiexec.*{MARK}"]).ok


def start(cluster: PoolHost, hosts: Sequence[str] | None = None, slots: int = DEFAULT_SLOTS) -> None:
    """Start a world on `hosts` (default: every workstation) in the background; `discover` waits for it."""
    hosts = list(cluster.workstations if hosts is None else hosts)
    cluster.control(hosts[0]).detach(pool_argv(cluster, hosts, slots),
                                     env=channel_auth.secret_env(cluster.secret, channel_auth.POOL.secret_env))


def discover(cluster: PoolHost, hosts: Sequence[str], slots: int = DEFAULT_SLOTS,
             timeout_s: float = 0.0) -> list[PoolRank]:
    """Every rank of a running world on `hosts`, after at most `timeout_s`; TimeoutError if incomplete."""
    ips, secret, connect = cluster.ips, cluster.secret, cluster.connect
    want = {(ws, s) for ws in hosts for s in range(slots)}
    found: dict[tuple[str, int], PoolRank] = {}
    sizes: set[int] = set()
    deadline = time.monotonic() + timeout_s

    def answer(key: tuple[str, int]) -> tuple[PoolRank, int] | None:
        ws, s = key
        address = (ips[ws], pool_wire.PORT_BASE + s)
        try:
            pong = ping(address, secret, timeout_s=1.0, connect=connect)
        except OSError:  # channel_auth.AuthError too: a world that does not take this secret
            return None
        return PoolRank(ws, s, int(pong["rank"]), address), int(pong["size"])

    while True:
        # every rank at once: a ping of a rank not up yet may wait its whole second
        missing = sorted(want - set(found))
        for key, got in zip(missing, parallel(answer, missing)):
            if got is not None:
                found[key], size = got
                sizes.add(size)
        if len(found) == len(want) and sizes <= {len(want)}:
            return sorted(found.values(), key=lambda r: r.rank)
        if time.monotonic() >= deadline:
            missing = ", ".join(f"{ws}/{s}" for ws, s in sorted(want - set(found))) or "none (a world of another size)"
            raise TimeoutError(f"pool: no rank answers on {missing} after {timeout_s:.0f} s")
        time.sleep(0.2)


#: A world's start, per workstation at 0.1 core: its ranks start Python, numpy and MPI under the
#: caps and one mpiexec reaches every workstation. 32 workstations at 0.053 core answered after
#: 124 s (benchmarks/probes/pool_start.py, 28 Nov 2026), where a fixed 96 s gave up on them.
START_S_PER_WS_AT_TENTH = 2.5
START_BASE_S = 90.0


def start_allowance_s(cluster: PoolHost, hosts: Sequence[str]) -> float:
    """Seconds of a world's start beyond its fixed part, for these workstations' count and smallest cap."""
    smallest = min((cluster.spec.cpu(ws) for ws in hosts), default=0.1)
    return START_S_PER_WS_AT_TENTH * len(hosts) * 0.1 / max(smallest, 0.01)


def start_timeout_s(cluster: PoolHost, hosts: Sequence[str]) -> float:
    """How long a new world on `hosts` may take to answer."""
    return START_BASE_S + start_allowance_s(cluster, hosts)


def ensure(cluster: PoolHost, slots: int = DEFAULT_SLOTS, timeout_s: float | None = None) -> list[PoolRank]:
    """The running world's ranks; a new world on the running workstations if it is missing or incomplete.
    `timeout_s`: how long a new world may take (default: `start_timeout_s`)."""
    hosts = alive(cluster)
    try:
        return discover(cluster, hosts, slots, timeout_s=0.0)
    except TimeoutError:
        pass
    allowance = start_allowance_s(cluster, hosts)
    if timeout_s is None:
        timeout_s = start_timeout_s(cluster, hosts)
    if running(cluster, hosts):  # a world still starting (from `up`) answers soon; one that lost a rank never will
        try:
            return discover(cluster, hosts, slots, timeout_s=min(max(30.0, allowance), timeout_s))
        except TimeoutError:
            pass
    stop(cluster, hosts)
    start(cluster, hosts, slots)
    return discover(cluster, hosts, slots, timeout_s=timeout_s)


def pool_launcher(cluster: PoolHost, slots: int = DEFAULT_SLOTS) -> PoolLauncher:
    """A launcher on the cluster's resident world, started (or restarted) as needed."""
    def renew() -> list[PoolRank]:
        hosts = alive(cluster)
        stop(cluster, hosts)
        start(cluster, hosts, slots)
        return discover(cluster, hosts, slots, timeout_s=start_timeout_s(cluster, hosts))

    return PoolLauncher(ensure(cluster, slots), secret=cluster.secret, renew=renew, fallback=cluster,
                        oom_kills=cluster.oom_kills, connect=cluster.connect)
