"""Warm launch paths: persistent SSH connections and resident rank hosts (zygotes).

A cold launch at p = 8 on 0.2-core workstations spends ~0.6 s per extra host in
ssh handshakes from the coordinator and ~1 s per rank importing numpy and mpi4py
(workloads/README.md, "Launch cost"). `warm(cluster)` removes both, once per
cluster: an OpenSSH master connection from every workstation to every
higher-numbered one (the coordinator is a job's lowest-numbered host, and
Open MPI is told not to tree-spawn, so no other pair is used), and one
`workloads.zygote` per workstation. Both are optional: ssh falls back to a
fresh connection and the zygote client to a cold `python3 -m` when they are missing.
The masters are n(n-1)/2 `docker exec`s in series and as many ssh sessions held open, the
first thing to break as clusters grow (docs/scale.md, "The first bottleneck"): above
MASTERS_UP_TO workstations none is opened, and `mpirun_popen` ssh's afresh. Malleable jobs
do not use them at any size: they launch on the resident world (testbed/pool.py), which
`testbed.lifecycle.start` starts right after these.
"""
from __future__ import annotations

import time
from typing import Protocol, Sequence

from testbed.mpi_command import GUEST_PREFIX, MUX_PATH
from testbed.parallel import parallel
from testbed.remote_exec import Control

# 16 workstations: 120 masters, a few seconds of `up`; 32 would be 496, 256 would be 32,640
MASTERS_UP_TO = 16
MASTER_WORKERS = 4  # engine calls opening masters at once (warm)
ZYGOTE_SOCKET = "/tmp/nowlab-zygote.sock"
ZYGOTE_ARGV = [*GUEST_PREFIX, "python3", "-m", "workloads.zygote", "--socket", ZYGOTE_SOCKET]


class Workstations(Protocol):
    """What the warm paths need of a cluster (testbed.cluster.Cluster is one): its workstations
    in order, and a way into each."""

    @property
    def workstations(self) -> list[str]: ...

    def control(self, ws: str) -> Control: ...


def master_pairs(workstations: Sequence[str]) -> list[tuple[str, str]]:
    """(from, to) for every workstation and each higher-numbered one; none above MASTERS_UP_TO."""
    if len(workstations) > MASTERS_UP_TO:
        return []
    return [(a, b) for i, a in enumerate(workstations) for b in workstations[i + 1:]]


def warm(cluster: Workstations) -> None:
    """Open the ssh masters and start the zygotes in the background; returns once each is asked.
    The asking is one engine call each (n(n-1)/2 + n): in series they took ~100 s of `up` at 16
    workstations (benchmarks/bench_controller_cost.py), so they go on threads: the zygotes all
    at once, the masters MASTER_WORKERS at a time, so that a workstation's sshd (at its small
    cap, with MaxStartups' default of 10 handshakes before it drops some) is not asked for
    many logins at once."""
    def master(pair: tuple[str, str]) -> None:
        src, dst = pair
        cluster.control(src).detach(["ssh", "-M", "-N", "-f", "-o", "ControlPersist=yes",
                                     "-o", f"ControlPath={MUX_PATH}", dst])

    parallel(master, master_pairs(cluster.workstations), workers=MASTER_WORKERS)
    parallel(lambda ws: cluster.control(ws).detach(ZYGOTE_ARGV), cluster.workstations)


def is_warm(cluster: Workstations, ws: str) -> bool:
    """This workstation's zygote listens and its masters to higher-numbered hosts (if any are
    opened) are up."""
    later = [dst for src, dst in master_pairs(cluster.workstations) if src == ws]
    ctl = cluster.control(ws)
    if not ctl.run(["test", "-S", ZYGOTE_SOCKET]).ok:
        return False
    return all(ctl.run(["ssh", "-o", f"ControlPath={MUX_PATH}", "-O", "check", dst]).ok for dst in later)


def wait_warm(cluster: Workstations, timeout: float = 60.0) -> float:
    """Block until every workstation is warm; the seconds it took."""
    t0 = time.monotonic()
    pending = list(cluster.workstations)
    while pending:
        warm_now = parallel(lambda ws: is_warm(cluster, ws), pending)  # each asks its masters in turn
        pending = [ws for ws, ok in zip(pending, warm_now) if not ok]
        if pending and time.monotonic() - t0 > timeout:
            raise TimeoutError(f"{', '.join(pending)}: not warm after {timeout:.0f} s")
        if pending:
            time.sleep(0.2)
    return time.monotonic() - t0
