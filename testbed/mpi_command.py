"""The mpiexec command line a cluster launches with: hosts, ranks, exported variables, MCA options.

Pure argv building, apart from any handle: the cluster (testbed/cluster.py), its resident
world (testbed/pool.py) and its warm paths (testbed/warm.py) all build on it, and none of
them needs another to know how an MPI job is started. What a backend adds to every rank's
environment (the interface Open MPI binds to, its launch agent) is the backend's own.
"""
from __future__ import annotations

from typing import Sequence

GUEST_PREFIX = ["chrt", "--idle", "0"]  # guests yield to owners (same core, same cgroup)

MUX_PATH = "/tmp/nowlab-mux-%C"  # %C: hash of local host, remote host, port and user
# ControlMaster=no: use a master when one is there, else connect as usual. No tree spawn:
# only the coordinator ssh's, over the masters it holds. The MPI transport is left as it
# was (Open MPI picks pml cm with libfabric's tcp provider): `pml ob1` would cut MPI_Init
# as much, but changes how the jobs communicate; the zygote preloads libfabric instead.
MPI_FAST_ARGS = ["--mca", "plm_rsh_args", f"-o ControlPath={MUX_PATH} -o ControlMaster=no",
                 "--mca", "plm_rsh_no_tree_spawn", "1"]
CLIENT_ARGV = ["python3", "-S", "-m", "workloads.zygote_client"]  # runs `-m MODULE` in a warm zygote


def through_zygote(argv: Sequence[str]) -> list[str]:
    """`python3 -m MODULE ...` as the zygote client's argv; anything else unchanged."""
    argv = list(argv)
    if len(argv) >= 3 and argv[0] == "python3" and argv[1] == "-m":
        return [*CLIENT_ARGV, *argv[1:]]
    return argv


def rank_order(workstations: Sequence[str], hosts: Sequence[str]) -> None:
    """Refuse hosts not listed each once, lowest-numbered first (by their place in `workstations`),
    so the coordinator (rank 0) is the job's lowest-numbered workstation, as the papers assume.
    A name outside `workstations` is the caller's to refuse (with its own message)."""
    if not hosts:
        raise ValueError("hosts: an MPI job needs at least one workstation")
    order = [workstations.index(h) for h in hosts]
    if order != sorted(set(order)):
        raise ValueError(f"hosts: list each workstation once, lowest-numbered first (got {', '.join(hosts)})")


def mpi_argv(workstations: Sequence[str], hosts: Sequence[str], argv: Sequence[str], *,
             env: dict[str, str] | None = None, forward: Sequence[str] = (), ranks_per_host: int = 1,
             guest: bool = True, fast: bool = True) -> list[str]:
    """mpiexec across `hosts` (of the cluster's `workstations`), `ranks_per_host` each, rank i on hosts[i].

    Ranks are guests: they run at SCHED_IDLE, so a workstation's owner processes preempt them.
    `fast` launches over the ssh masters and `python3 -m` programs through the zygotes the warm
    paths open (testbed/warm.py); each falls back to the cold path if missing. `env` is given on
    the command line (`-x K=V`); `forward` names variables mpiexec passes on from its own
    environment, so a secret is not on a command line that `ps` shows.
    """
    rank_order(workstations, hosts)
    hostlist = ",".join(f"{h}:{ranks_per_host}" for h in hosts)
    exports = [x for k, v in (env or {}).items() for x in ("-x", f"{k}={v}")]
    exports += [x for k in forward for x in ("-x", k)]
    return ["mpiexec", "--allow-run-as-root", "-H", hostlist, "-n", str(len(hosts) * ranks_per_host),
            "--map-by", "node", "--mca", "btl", "tcp,self", *(MPI_FAST_ARGS if fast else []),
            "-x", "PYTHONPATH", *exports, *(GUEST_PREFIX if guest else []),
            *(through_zygote(argv) if fast else argv)]


def with_recovery(argv: Sequence[str], output_dir: str) -> list[str]:
    """An mpiexec argv whose world outlives a dead rank (a dead workstation fails only the jobs
    on it, measured: with it, a job on ws1 and ws3 ran to the end after ws2 was killed; without,
    it died too), each rank's stray output to `output_dir`."""
    return [argv[0], "--enable-recovery", "--mca", "orte_abort_on_non_zero_status", "0",
            "--output-filename", output_dir, *argv[1:]]
