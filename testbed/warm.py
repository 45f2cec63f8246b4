"""Warm launch paths: persistent SSH connections and resident rank hosts (zygotes).

A cold launch at p = 8 on 0.2-core workstations spends ~0.6 s per extra host in
ssh handshakes from the coordinator and ~1 s per rank importing numpy and mpi4py
(workloads/README.md, "Launch cost"). `warm(cluster)` removes both, once per
cluster: an OpenSSH master connection from every workstation to every
higher-numbered one (the coordinator is a job's lowest-numbered host, and
Open MPI is told not to tree-spawn, so no other pair is used), and one
`workloads.zygote` per workstation. Both are optional: ssh falls back to a
fresh connection and the zygote client to a cold `python3 -m` when they are missing.
The masters are n(n-1)/2 ssh sessions held open (opened by one `workloads.ssh_masters`
process per workstation), the first thing to break as clusters grow (docs/scale.md, "The first bottleneck"): above
MASTERS_UP_TO workstations none is opened, and `mpirun_popen` ssh's afresh. Malleable jobs
do not use them at any size: they launch on the resident world.
It also starts the cluster's resident MPI world (testbed/pool.py), where malleable jobs
launch without any mpiexec; `cluster.job_launcher()` waits for it or starts it again.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Sequence

from testbed import pool
from testbed.parallel import parallel

if TYPE_CHECKING:
    from testbed.cluster import Cluster

MUX_PATH = "/tmp/nowlab-mux-%C"  # %C: hash of local host, remote host, port and user
# ControlMaster=no: use a master when one is there, else connect as usual. No tree spawn:
# only the coordinator ssh's, over the masters it holds. The MPI transport is left as it
# was (Open MPI picks pml cm with libfabric's tcp provider): `pml ob1` would cut MPI_Init
# as much, but changes how the jobs communicate; the zygote preloads libfabric instead.
MPI_FAST_ARGS = ["--mca", "plm_rsh_args", f"-o ControlPath={MUX_PATH} -o ControlMaster=no",
                 "--mca", "plm_rsh_no_tree_spawn", "1"]
# 16 workstations: 120 masters, a few seconds of `up`; 32 would be 496, 256 would be 32,640
MASTERS_UP_TO = 16
ZYGOTE_SOCKET = "/tmp/nowlab-zygote.sock"
ZYGOTE_ARGV = ["chrt", "--idle", "0", "python3", "-m", "workloads.zygote", "--socket", ZYGOTE_SOCKET]
CLIENT_ARGV = ["python3", "-S", "-m", "workloads.zygote_client"]
MASTERS_ARGV = ["python3", "-S", "-m", "workloads.ssh_masters"]


def master_pairs(workstations: Sequence[str]) -> list[tuple[str, str]]:
    """(from, to) for every workstation and each higher-numbered one; none above MASTERS_UP_TO."""
    if len(workstations) > MASTERS_UP_TO:
        return []
    return [(a, b) for i, a in enumerate(workstations) for b in workstations[i + 1:]]


def through_zygote(argv: Sequence[str]) -> list[str]:
    """`python3 -m MODULE ...` as the zygote client's argv; anything else unchanged."""
    argv = list(argv)
    if len(argv) >= 3 and argv[0] == "python3" and argv[1] == "-m":
        return [*CLIENT_ARGV, *argv[1:]]
    return argv


def later_hosts(workstations: Sequence[str]) -> dict[str, list[str]]:
    """Each workstation's master destinations (master_pairs grouped by source), in order."""
    out: dict[str, list[str]] = {}
    for src, dst in master_pairs(workstations):
        out.setdefault(src, []).append(dst)
    return out


def warm(cluster: "Cluster") -> None:
    """Open the ssh masters and start the zygotes in the background; returns once each is asked.
    One engine call per workstation for its masters (workloads.ssh_masters opens them in turn
    there), not one per pair: 120 calls in series took ~100 s of `up` at 16 workstations
    (benchmarks/bench_controller_cost.py)."""
    later = later_hosts(cluster.workstations)
    parallel(lambda src: cluster.control(src).detach([*MASTERS_ARGV, "open", "--path", MUX_PATH, *later[src]]),
             list(later))
    parallel(lambda ws: cluster.control(ws).detach(ZYGOTE_ARGV), cluster.workstations)
    pool.start(cluster)  # the resident MPI world jobs launch on (cluster.job_launcher)


def is_warm(cluster: "Cluster", ws: str) -> bool:
    """This workstation's zygote listens and its masters to higher-numbered hosts (if any are
    opened) are up."""
    later = later_hosts(cluster.workstations).get(ws, [])
    ctl = cluster.control(ws)
    if not ctl.run(["test", "-S", ZYGOTE_SOCKET]).ok:
        return False
    return not later or ctl.run([*MASTERS_ARGV, "check", "--path", MUX_PATH, *later]).ok


def wait_warm(cluster: "Cluster", timeout: float = 60.0) -> float:
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
