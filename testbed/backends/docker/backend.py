"""The Docker backend: the workstations are containers on this host (testbed.backends.Backend).

The engine API (engine.py) makes and removes them, the host's cgroup v1 files (cgroups.py)
carry the caps and counters that change or are read often, and `docker exec` (control.py)
runs commands in them. A failed engine call here raises BackendError, not Docker's own
exception, so the monitor and the runner catch it without importing Docker.
"""
from __future__ import annotations

import contextlib
import subprocess
from pathlib import Path
from typing import Iterator, Sequence

import docker
import docker.errors

from testbed import state
from testbed.backends.base import BackendError, Capabilities, CpuCap, CpuLimits, Progress, Provisioned
from testbed.backends.docker import cgroups, engine
from testbed.backends.docker.control import DockerControl, netns_argv
from testbed.image import ensure_image
from testbed.parallel import parallel
from testbed.remote_exec import ExecResult
from testbed.spec import ClusterSpec


@contextlib.contextmanager
def _engine_errors(what: str) -> Iterator[None]:
    try:
        yield
    except docker.errors.DockerException as exc:
        raise BackendError(f"{what}: {exc}") from exc


class DockerBackend:
    """Containers pinned to this host's cores. The engine client is made on first use, so a
    backend that only writes cgroup files (the speed keeper) never connects."""

    kind = "docker"
    capabilities = Capabilities()  # one host, reached directly: nothing beyond `Backend`

    def __init__(self, client: docker.DockerClient | None = None, cgroup_root: Path = cgroups.CGROUP_ROOT):
        self._client = client
        self.cgroup_root = cgroup_root
        self._controls: dict[str, DockerControl] = {}
        self._pids: dict[str, int] = {}

    @property
    def client(self) -> docker.DockerClient:
        if self._client is None:
            self._client = engine.client()
        return self._client

    # -- capacity -------------------------------------------------------------------------
    def cores(self) -> list[int]:
        with _engine_errors("host cores"):
            return engine.host_cores(self.client)

    def pinned_load(self, exclude: str | None = None) -> dict[int, float]:
        with _engine_errors("pinned load"):
            return engine.pinned_load(self.client, exclude=exclude)

    # -- clusters -------------------------------------------------------------------------
    def up(self, spec: ClusterSpec, *, cores: dict[str, int], key_dir: Path, progress: Progress) -> Provisioned:
        client = self.client
        image = ensure_image(client, log=lambda msg: progress(msg, 0, 1))
        owned_by = engine.owner_labels(state.home())
        n = len(spec.names)
        net_id, subnet = engine.create_network(client, spec.name, n, owned_by)
        ips = engine.addresses(spec, subnet)
        configs = [engine.container_config(spec, ws, image=image, ips=ips, core=cores[ws], key_dir=key_dir)
                   for ws in spec.names]
        done = 0

        def create_and_start(cfg: dict) -> tuple[str, str]:
            nonlocal done
            cid = engine.create_container(client, net_id, cfg, owned_by)
            engine.start(client, cid)
            done += 1
            progress("starting workstations", done, n)
            return cfg["hostname"], cid

        machines = dict(parallel(create_and_start, configs))
        cgroups.prioritize_workstations(self.cgroup_root)  # the parent cgroup exists once a container runs
        return Provisioned(network=net_id, subnet=str(subnet), gateway=str(subnet[1]), image=image, ips=ips,
                           machines=machines)

    def remove(self, cluster: str) -> dict[str, int]:
        with _engine_errors(f"removing {cluster}"):
            for cid in engine.labelled(self.client, cluster)["containers"]:
                if cgroups.is_frozen(cid, self.cgroup_root):  # a killed run left it held: a frozen
                    cgroups.write_frozen(cid, False, self.cgroup_root)  # process cannot be killed
            return engine.remove(self.client, cluster)

    def cluster_names(self) -> list[str]:
        with _engine_errors("listing clusters"):
            return engine.cluster_names(self.client)

    def orphaned(self, cluster: str) -> bool:
        with _engine_errors(f"owner of {cluster}"):
            return engine.orphaned(self.client, cluster)

    def leftovers(self) -> list[str]:
        with _engine_errors("listing leftovers"):
            return engine.leftovers(self.client)

    def stranded(self, cluster: str) -> list[str]:
        return []  # one engine: `down` reaches everything or fails in the open

    def forget(self, cluster: str) -> list[str]:
        return []

    # -- one workstation ------------------------------------------------------------------
    def is_running(self, machine: str) -> bool:
        try:
            return bool(self.client.api.inspect_container(machine)["State"]["Running"])
        except (docker.errors.DockerException, KeyError, OSError, RuntimeError):
            return False

    def is_paused(self, machine: str) -> bool:
        try:
            return bool(self.client.api.inspect_container(machine)["State"]["Paused"])
        except (docker.errors.DockerException, KeyError, OSError, RuntimeError):
            return False

    def logs(self, machine: str, tail: int = 5) -> str:
        with _engine_errors(f"logs of {machine[:12]}"):
            return self.client.api.logs(machine, tail=tail).decode(errors="replace").strip()

    def set_cpu_cap(self, machine: str, cap: CpuCap) -> None:
        with _engine_errors(f"cpu cap of {machine[:12]}"):
            engine.update_cpu(self.client, machine, cap.cores, cap.period_us)

    def write_cpu_cap(self, machine: str, cap: CpuCap) -> None:
        cgroups.write_cap(machine, cap, self.cgroup_root)

    def hold(self, machine: str, held: bool) -> None:
        cgroups.write_frozen(machine, held, self.cgroup_root)

    def cpu_limits(self, machine: str) -> CpuLimits:
        return cgroups.read_limits(machine, self.cgroup_root)

    def cpu_usage_ns(self, machine: str) -> int:
        return cgroups.read_usage_ns(machine, self.cgroup_root)

    def oom_kills(self, machine: str) -> int:
        return cgroups.read_oom_kills(machine, self.cgroup_root)

    def processes_cpu_ns(self, machine: str, command_contains: str) -> int:
        procs = cgroups.cgroup_file(machine, "cpu", "cgroup.procs", self.cgroup_root)
        return cgroups.processes_cpu_ns(procs, command_contains)

    def control(self, machine: str) -> DockerControl:
        if machine not in self._controls:
            self._controls[machine] = DockerControl(self.client, machine)
        return self._controls[machine]

    def init_pid(self, machine: str) -> int:
        """The host pid of the container's init (its namespaces are /proc/PID/ns/*)."""
        if machine not in self._pids:
            with _engine_errors(f"pid of {machine[:12]}"):
                pid = self.client.api.inspect_container(machine)["State"]["Pid"]
            if not pid:
                raise BackendError(f"{machine[:12]}: not running")
            self._pids[machine] = int(pid)
        return self._pids[machine]

    def read_net(self, machine: str, argv: Sequence[str], timeout: float = 10.0) -> ExecResult:
        proc = subprocess.run(netns_argv(self.init_pid(machine), argv), capture_output=True, text=True,
                              timeout=timeout, check=False)
        return ExecResult(proc.returncode, proc.stdout, proc.stderr)

    def shape(self, machine: str, commands: Sequence[Sequence[str]]) -> None:
        """tc inside the container: it has NET_ADMIN in its own network namespace only."""
        for cmd in commands:
            self.control(machine).run(["tc", *cmd]).check(f"tc on {machine[:12]}")
