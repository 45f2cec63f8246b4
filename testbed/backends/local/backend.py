"""The local backend: every workstation a name for this host, every job the host's own Open MPI.

What the Docker backend does with containers, this one does without any: no CPU caps, no tc
shaping, no SSH, no machine apart from this one, and its `Capabilities` say so, so a caller
that asks for any of them gets one line naming the capability (`base.require`) instead of a
silent no-op. Jobs start on this host (`host_mpi`): `mpirun_popen` is
workloads.host.launch.LocalLauncher (the one-host mpiexec command line, ranks on loopback),
and the resident pool is workloads/host/pool_local.py's, started in this process on the first
`job_launcher` and stopped by `remove` (or when the process exits). A local cluster is
recorded like any other (`nowlab status` lists it, `Cluster.attach` finds it); another
process that attaches it starts a pool of its own.
"""
from __future__ import annotations

import atexit
import contextlib
import errno
import itertools
import os
import random
import socket
import threading
from pathlib import Path
from typing import Sequence

from testbed import state
from testbed.backends.base import LIMITS, Capabilities, CpuCap, CpuLimits, Progress, Provisioned, unsupported
from testbed.backends.local.control import HostControl
from testbed.backends.ownership import owner_tag, tag_alive, unattended
from testbed.remote_exec import Control, ExecResult
from testbed.spec import ClusterSpec, SpecError, from_dict
from workloads.host.launch import Launcher, LocalHandle, LocalLauncher
from workloads.host.pool_local import local_pool

KIND = "local"
ADDRESS = "127.0.0.1"  # every workstation's address: the ranks talk over loopback
NETWORK = "127.0.0.0/8"  # Provisioned.subnet: the control channel refuses any peer outside it
OWNER_FILE = "local.owner"  # in the cluster's state folder: `pid:start-time` of the process that ran `up`
PORT_LOW, PORT_HIGH = 20000, 30000  # where a pool's ranks listen (one port each, consecutive)

_seq = itertools.count(1)
_pools: dict[str, tuple[contextlib.ExitStack, Launcher]] = {}  # this process's pools, by cluster
_pools_lock = threading.Lock()


def local_spec(n: int, name: str | None = None) -> ClusterSpec:
    """A spec of `n` workstations ws1..wsN with nothing asked of them but their names (the
    `--local P` options), named uniquely in this process unless `name` is given."""
    if n < 1:
        raise SpecError(f"workstations: a local cluster needs at least one, got {n}")
    return from_dict({"name": name or f"local-{os.getpid()}-{next(_seq)}",
                      "workstation": [{"name": f"ws{i + 1}"} for i in range(n)]})


#: The spec fields this backend cannot honour, by the capability each needs.
_WORKSTATION_NEEDS = {"cpu": "cpu_caps", "speed": "cpu_caps", "speed_class": "cpu_caps", "egress": "shapes_links",
                      "links": "shapes_links", "memory": "own_machines", "owner": "own_machines",
                      "host": "places_on_hosts"}
_DEFAULTS_NEED = {"cpu": "cpu_caps", "speed": "cpu_caps", "cfs_period_us": "cpu_caps", "egress": "shapes_links",
                  "tcp": "shapes_links", "memory": "own_machines", "owner": "own_machines"}


_WHAT = {**LIMITS, "places_on_hosts": "hosts but this one"}


def refuse_unsupported(spec: ClusterSpec) -> None:
    """Refuse, naming the field and the capability, a spec that asks for what runs only on
    machines (a cap, a speed, a shaped link, memory, owners, other hosts): silently ignored, it
    would give numbers that are not what the spec says."""
    def no(field: str, capability: str) -> SpecError:
        return SpecError(f"{field}: the {KIND} backend has no {_WHAT[capability]} ({capability})")

    if spec.hosts:
        raise no("host", "places_on_hosts")
    for field in sorted(spec.defaults.model_fields_set & set(_DEFAULTS_NEED)):
        raise no(f"defaults.{field}", _DEFAULTS_NEED[field])
    for ws in spec.workstations:
        for field in sorted(ws.model_fields_set & set(_WORKSTATION_NEEDS)):
            value = getattr(ws, field)
            if value is not None and value != {}:
                raise no(f"workstation {ws.name}: {field}", _WORKSTATION_NEEDS[field])


def free_port_base(n: int, rng: random.Random | None = None, tries: int = 50) -> int:
    """The first of `n` consecutive loopback ports nothing listens on now (a pool's ranks take
    them a moment later: another process may win the race, and the pool then fails to start)."""
    rng = rng or random.Random()
    for _ in range(tries):
        base = rng.randrange(PORT_LOW, PORT_HIGH - n)
        with contextlib.ExitStack() as held:
            try:
                for port in range(base, base + n):
                    s = held.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
                    s.bind((ADDRESS, port))
            except OSError as exc:
                if exc.errno != errno.EADDRINUSE:
                    raise
                continue
        return base
    raise RuntimeError(f"pool: no {n} free consecutive loopback ports found in {PORT_LOW}-{PORT_HIGH}")


def _stop_pools() -> None:
    """Stop every pool this process started (at exit: a pool is this process's children)."""
    with _pools_lock:
        stacks = [stack for stack, _ in _pools.values()]
        _pools.clear()
    for stack in stacks:
        stack.close()


atexit.register(_stop_pools)


class LocalBackend:
    """This host as every workstation. `pool`: jobs go through a resident pool (as on a cluster);
    False, each job is an mpiexec of its own (as LocalLauncher has always run them)."""

    kind = KIND
    capabilities = Capabilities(host_mpi=True, cpu_caps=False, shapes_links=False, ssh_login=False,
                                own_machines=False)

    def __init__(self, *, pool: bool = True, launcher: LocalLauncher | None = None) -> None:
        self.pool = pool
        self.launcher = launcher or LocalLauncher()

    # -- capacity -------------------------------------------------------------------------
    def cores(self) -> list[int]:
        return sorted(os.sched_getaffinity(0))

    def pinned_load(self, exclude: str | None = None) -> dict[int, float]:
        return {}  # nothing is pinned: no caps

    # -- clusters -------------------------------------------------------------------------
    def up(self, spec: ClusterSpec, *, cores: dict[str, int], key_dir: Path, progress: Progress) -> Provisioned:
        refuse_unsupported(spec)
        folder = state.cluster_dir(spec.name)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / OWNER_FILE).write_text(owner_tag())
        progress("workstations", len(spec.names), len(spec.names))
        return Provisioned(network=KIND, subnet=NETWORK, gateway=ADDRESS, image="host",
                           ips={ws: ADDRESS for ws in spec.names}, machines={ws: ws for ws in spec.names})

    def remove(self, cluster: str) -> dict[str, int]:
        """Stop this process's pool of `cluster`; its record is `Cluster.down`'s to forget. A pool
        another process started is that process's (it stops with it)."""
        with _pools_lock:
            held = _pools.pop(cluster, None)
        if held is not None:
            held[0].close()
        return {"containers": 0, "networks": 0, "volumes": 0, "pools": int(held is not None)}

    def cluster_names(self) -> list[str]:
        names = []
        for name in state.running_names():
            try:
                if state.ClusterState.load(name).backend == KIND:
                    names.append(name)
            except (LookupError, ValueError, TypeError):  # a record being written or removed
                continue
        return names

    def orphaned(self, cluster: str) -> bool:
        return cluster in self.cluster_names() and not tag_alive(self._owner(cluster))

    def leftovers(self) -> list[str]:
        return [n for n in self.cluster_names() if unattended(n, str(state.home()), self._owner(n))]

    def stranded(self, cluster: str) -> list[str]:
        return []  # one host: `down` reaches everything

    def forget(self, cluster: str) -> list[str]:
        return []

    @staticmethod
    def _owner(cluster: str) -> str:
        path = state.cluster_dir(cluster) / OWNER_FILE
        return path.read_text().strip() if path.exists() else ""

    # -- one workstation ------------------------------------------------------------------
    def is_running(self, machine: str) -> bool:
        return True  # a workstation is this host: up as long as the caller is

    def is_paused(self, machine: str) -> bool:
        return False  # there is no engine to pause it through

    def logs(self, machine: str, tail: int = 5) -> str:
        return ""

    def set_cpu_cap(self, machine: str, cap: CpuCap) -> None:
        raise unsupported(self, "cpu_caps", f"{machine}: a CPU cap")

    def write_cpu_cap(self, machine: str, cap: CpuCap) -> None:
        raise unsupported(self, "cpu_caps", f"{machine}: a CPU cap")

    def hold(self, machine: str, held: bool) -> None:
        raise unsupported(self, "cpu_caps", f"{machine}: holding its processes")

    def cpu_limits(self, machine: str) -> CpuLimits:
        raise unsupported(self, "cpu_caps", f"{machine}: its CPU limits")

    def cpu_usage_ns(self, machine: str) -> int:
        raise unsupported(self, "own_machines", f"{machine}: its own CPU time")

    def oom_kills(self, machine: str) -> int:
        raise unsupported(self, "own_machines", f"{machine}: its own memory limit")

    def processes_cpu_ns(self, machine: str, command_contains: str) -> int:
        raise unsupported(self, "own_machines", f"{machine}: its own processes")

    def control(self, machine: str) -> Control:
        return HostControl()

    def read_net(self, machine: str, argv: Sequence[str], timeout: float = 10.0) -> ExecResult:
        raise unsupported(self, "shapes_links", f"{machine}: reading its shaped link")

    def shape(self, machine: str, commands: Sequence[Sequence[str]]) -> None:
        raise unsupported(self, "shapes_links", f"{machine}: shaping its link")

    # -- host MPI (Capabilities.host_mpi) -------------------------------------------------
    def mpirun_popen(self, hosts: Sequence[str], argv: Sequence[str], *,
                     env: dict[str, str] | None = None) -> LocalHandle:
        return self.launcher.mpirun_popen(hosts, argv, env=env)

    def job_launcher(self, cluster: str) -> Launcher:
        """The cluster's resident pool in this process (one rank per workstation), started now if
        it is not running; without `pool`, the host's mpiexec per job."""
        if not self.pool:
            return self.launcher
        with _pools_lock:
            if cluster in _pools:
                return _pools[cluster][1]
        names = state.ClusterState.load(cluster).cluster_spec.names
        stack = contextlib.ExitStack()
        try:
            launcher = stack.enter_context(local_pool(len(names), port_base=free_port_base(len(names)),
                                                      local=self.launcher, names=names))
        except BaseException:
            stack.close()
            raise
        with _pools_lock:
            if cluster not in _pools:
                _pools[cluster] = (stack, launcher)
                return launcher
            other = _pools[cluster][1]
        stack.close()  # another thread started one meanwhile: keep the first
        return other
