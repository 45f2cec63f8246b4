"""A running emulated cluster: create it, drive it, change it live, take it down.

`Cluster.provision(spec)` builds the workstations (containers, links, ssh) and answers once
each takes an SSH login; `testbed.lifecycle.start(spec)` brings it the rest of the way up in
one visible order (warm paths, the resident MPI world, the speed keeper), `lifecycle.up(spec)`
adds the load the spec asks for (its owners) and is what users call, and
`testbed.lifecycle.cluster(spec)` always tears it down.
`Cluster.attach(name)` picks up a cluster started by another process (the CLI).
The machines under it are a backend's (testbed/backends/: Docker, SSH, Swarm, or this host's own
Open MPI with `local`); this module holds what does not depend on where they run, and imports no
engine itself. What a backend cannot do (the local one has no caps, tc or SSH) its `Capabilities`
say, and the methods here that need it refuse in one line naming the capability.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Sequence, cast

import paramiko

from testbed import backends, cluster_secret, keeper, meter, mpi_command, pool, shaping, state
from testbed.backends import Backend, CpuCap, require
from testbed.backends.base import SampleSource
from testbed.mpi_command import GUEST_PREFIX  # noqa: F401  (named here by its users: experiments, benchmarks)
from testbed.parallel import parallel
from testbed.placement import CORE_LIMIT, place, place_on_readings, unpinned
from testbed.remote_exec import Control, ExecResult, RemoteProcess, SshControl
from testbed.spec import ClusterSpec, SpecError
from testbed.sshkeys import KEY_NAME, make_keypair
from testbed.units import RateError, parse_rate
from workloads.host.launch import Handle, Launcher
from workloads.host.pool_client import Connect, direct

Progress = Callable[[str, int, int], None]  # (stage, done, total)


def quiet(_stage: str, _done: int, _total: int) -> None:
    """A Progress that shows nothing."""
    return None


def listening_ports(ss_output: str) -> set[int]:
    """The TCP ports listened on, from `ss -Hltn` (columns: State Recv-Q Send-Q Local:Port Peer)."""
    ports = set()
    for line in ss_output.splitlines():
        cols = line.split()
        if len(cols) >= 4 and cols[3].rpartition(":")[2].isdigit():
            ports.add(int(cols[3].rpartition(":")[2]))
    return ports


def with_workstation(spec: ClusterSpec, ws: str, **changes: object) -> ClusterSpec:
    """`spec` with workstation `ws` changed. Pydantic's model_copy(update=) keeps a misspelled
    field silently (the change is lost, or lands in an attribute nothing reads), so the names
    are checked against the model's fields first."""
    w = spec.workstation(ws)
    known = type(w).model_fields
    for name in changes:
        if name not in known:
            raise SpecError(f"{name}: not a workstation field (known: {', '.join(known)})")
    changed = w.model_copy(update=changes)
    return spec.model_copy(update={"workstations": [changed if x.name == ws else x for x in spec.workstations]})


class InsideSsh:
    """An ssh login from a workstation to `target` (itself: its sshd and the cluster key), run
    through the backend's control: readiness where the controller is not on the network."""

    def __init__(self, control: Control, target: str):
        self.control, self.target = control, target

    def run(self, argv: Sequence[str]) -> ExecResult:
        return self.control.run(["ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=3", self.target, *argv],
                                timeout=10)

    def close(self) -> None:
        return None


class Cluster:
    def __init__(self, st: state.ClusterState, backend: Backend):
        self.state = st
        self.backend = backend
        self._jobs: Launcher | None = None

    # -- lifecycle ---------------------------------------------------------------------
    @classmethod
    def provision(cls, spec: ClusterSpec, *, progress: Progress = quiet, ready_timeout: float = 60.0,
                  backend: Backend | None = None) -> "Cluster":
        """Start every workstation and wait until each answers SSH; undo everything on failure.
        Nothing runs on them yet, and the cluster is not marked ready: `testbed.lifecycle.start`
        goes on from here (warm paths, resident world, keeper), `lifecycle.up` adds the owners."""
        be = backend if backend is not None else backends.get()
        if spec.name in be.cluster_names():
            if stranded := be.stranded(spec.name):
                raise SpecError(f"name: cluster {spec.name!r} was taken down but {', '.join(stranded)} did not answer, "
                                f"so it is still recorded: `nowlab gc` removes it once they answer, "
                                f"`nowlab forget {spec.name}` drops the record now")
            raise SpecError(f"name: a cluster named {spec.name!r} is already running (nowlab down {spec.name})")
        host_cores = be.cores()
        if be.capabilities.places_on_hosts:  # several hosts: the backend places on its hosts' cores
            placement = cast(backends.HostPlacing, be).place(spec)  # refuses before starting, naming the host
        elif not be.capabilities.cpu_caps:  # nothing to pin (the local backend: its `up` refuses caps)
            placement = unpinned(spec)
        else:
            if any(spec.speed(n) is not None for n in spec.names):  # refuses before starting, after re-reading
                placement = place_on_readings(spec, host_cores, be.pinned_load(),
                                              lambda: meter.quick_factors(host_cores, kernel=spec.kernel))
            else:
                placement = place(spec, host_cores, be.pinned_load())  # refuses before starting
        spec = placement.resolve(spec)  # speed workstations get their caps in cores
        try:
            key_dir = state.cluster_dir(spec.name) / "ssh"
            if be.capabilities.ssh_login:
                make_keypair(key_dir, comment=f"nowlab-{spec.name}")
            cluster_secret.make(state.cluster_dir(spec.name))  # the pool's and the time-share managers'
            made = be.up(spec, cores=placement.cores, key_dir=key_dir, progress=progress)
            st = state.ClusterState(spec=spec.model_dump(by_alias=True), network=made.network, subnet=made.subnet,
                                    gateway=made.gateway, image=made.image, ips=made.ips, cores=placement.cores,
                                    containers=made.machines, backend=be.kind)
            st.save()
            cluster = cls(st, be)
            cluster.wait_ssh_ready(timeout=ready_timeout, progress=progress)
            return cluster
        except BaseException:
            # A half-built cluster is removed whatever went wrong, Ctrl-C included.
            keeper.stop(spec.name)
            be.remove(spec.name)
            state.forget(spec.name)
            raise

    @classmethod
    def attach(cls, name: str | None = None) -> "Cluster":
        names = state.running_names()
        if name is None:
            if len(names) != 1:
                raise LookupError("name a cluster: " + (", ".join(names) if names else "none is running"))
            name = names[0]
        st = state.ClusterState.load(name)
        return cls(st, backends.get(st.backend))

    def start_keeper(self) -> None:
        """The speed keeper (testbed/keeper.py): meter + governor; cap mode and owners run on top.
        It meters this machine's cores, or (several hosts) reads their probes' samples by slot."""
        caps = self.backend.capabilities
        if not caps.cpu_caps:
            return  # no caps to govern (local): no keeper, and no meter (`meter_dir` is None)
        if not caps.places_on_hosts:
            keeper.start(self.name, self.backend.cores())
        elif caps.meters_remotely:
            keeper.start(self.name, cast(backends.RemoteMetering, self.backend).metered_slots(self.name))

    @property
    def meter_dir(self) -> Path | None:
        """Where the speed keeper writes its meter and quotas (the cluster's state folder); None
        for a backend without CPU caps, which has no keeper."""
        return state.cluster_dir(self.name) if self.backend.capabilities.cpu_caps else None

    def mark_ready(self) -> None:
        """Record that the cluster came all the way up (`gc` spares a ready cluster)."""
        self.state.ready = True
        self.state.save()

    def down(self) -> dict[str, int]:
        keeper.stop(self.name)
        removed = self.backend.remove(self.name)
        state.forget(self.name)
        return removed

    def __enter__(self) -> "Cluster":
        return self

    def __exit__(self, *exc: object) -> None:
        self.down()

    # -- facts -------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.state.name

    @property
    def spec(self) -> ClusterSpec:
        return self.state.cluster_spec

    @property
    def workstations(self) -> list[str]:
        return self.spec.names

    @property
    def ips(self) -> dict[str, str]:
        return dict(self.state.ips)

    @property
    def controller_address(self) -> str:
        """The host as the workstations see it: a coordinator connects back to it here."""
        return self.state.gateway

    @property
    def control_network(self) -> str:
        """The network the workstations reach the host from: the control channel refuses every other peer."""
        return self.state.subnet

    @property
    def key_path(self) -> Path:
        return state.cluster_dir(self.name) / "ssh" / KEY_NAME

    @property
    def secret(self) -> bytes:
        """The cluster's secret (testbed/cluster_secret.py): the pool's ranks and the time-sharing
        managers serve only a peer that proves it holds it. Made now for a cluster from before it."""
        return cluster_secret.load_or_make(state.cluster_dir(self.name))

    def container_id(self, ws: str) -> str:
        """The backend's machine id of `ws` (a container id with Docker)."""
        try:
            return self.state.containers[ws]
        except KeyError:
            raise KeyError(f"no workstation {ws!r} in cluster {self.name!r} "
                           f"(known: {', '.join(self.workstations)})") from None

    # -- running things ----------------------------------------------------------------
    def is_running(self, ws: str) -> bool:
        """The workstation runs (one the backend cannot see is as good as gone)."""
        try:
            return self.backend.is_running(self.container_id(ws))
        except KeyError:
            return False

    def is_paused(self, ws: str) -> bool:
        """Paused through the engine by someone outside nowlab (its owner bursts do not count)."""
        try:
            return self.backend.is_paused(self.container_id(ws))
        except KeyError:
            return False

    def control(self, ws: str) -> Control:
        return self.backend.control(self.container_id(ws))

    def ssh(self, ws: str) -> SshControl:
        """SSH to the workstation with the cluster key, as the backend says to log in (root on
        port 22 for containers; the host's own user and port for the SSH backend)."""
        require(self.backend, "ssh_login", f"{ws}: an SSH login")
        if self.backend.capabilities.own_login:
            user, port = cast(backends.OwnLogin, self.backend).login(self.container_id(ws))
        else:
            user, port = "root", 22
        return SshControl(self.ips[ws], str(self.key_path), user=user, port=port)

    def exec(self, ws: str, argv: Sequence[str], *, env: dict[str, str] | None = None,
             timeout: float | None = None) -> ExecResult:
        return self.control(ws).run(argv, env=env, timeout=timeout)

    def start(self, ws: str, argv: Sequence[str], *, env: dict[str, str] | None = None) -> RemoteProcess:
        return self.control(ws).start(argv, env=env)

    def detach(self, ws: str, argv: Sequence[str]) -> None:
        """Start a daemon in `ws` and return at once: nothing on this side waits for it or reads it."""
        self.control(ws).detach(argv)

    def wait_listening(self, ws: str, port: int, timeout: float = 5.0) -> None:
        """Wait until a TCP server on `ws` listens on `port` (a server started in the background)."""
        deadline = time.monotonic() + timeout
        while port not in listening_ports(self.exec(ws, ["ss", "-Hltn"]).stdout):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{ws}: nothing listens on port {port} after {timeout:g} s")
            time.sleep(0.05)

    def mpi_argv(self, hosts: Sequence[str], argv: Sequence[str], *, env: dict[str, str] | None = None,
                 forward: Sequence[str] = (), ranks_per_host: int = 1, guest: bool = True,
                 fast: bool = True) -> list[str]:
        """mpiexec across `hosts`, one rank each in the order given (rank i on hosts[i]), listed
        lowest-numbered first; testbed/mpi_command.py says what each part is for. A backend that
        starts MPI on this host (`host_mpi`, local) has no such command: `mpirun_popen` runs there."""
        if self.backend.capabilities.host_mpi:
            raise backends.Unsupported(f"mpi_argv: the {self.backend.kind} backend starts MPI on this host "
                                       f"(host_mpi): run the job with mpirun_popen")
        workstations = self.workstations
        for h in hosts:
            if h not in workstations:
                self.container_id(h)  # refuses, naming the cluster's workstations
        return mpi_command.mpi_argv(workstations, hosts, argv, env=env, forward=forward,
                                    ranks_per_host=ranks_per_host, guest=guest, fast=fast)

    def mpirun(self, hosts: Sequence[str], argv: Sequence[str], *, env: dict[str, str] | None = None,
               timeout: float | None = None) -> ExecResult:
        if self.backend.capabilities.host_mpi:
            handle = self.mpirun_popen(hosts, argv, env=env)
            try:
                done = handle.wait(timeout)
            except TimeoutError:
                handle.terminate()
                raise
            return ExecResult(done.exit_code, done.stdout, done.stderr)
        return self.exec(hosts[0], self.mpi_argv(hosts, argv, forward=sorted(env or {})), env=env, timeout=timeout)

    def mpirun_popen(self, hosts: Sequence[str], argv: Sequence[str], *,
                     env: dict[str, str] | None = None) -> Handle:
        """mpiexec of `argv` across `hosts`: from the first workstation, or on this host for a
        backend that starts MPI itself (`host_mpi`: every rank a local process)."""
        if self.backend.capabilities.host_mpi:
            for h in hosts:
                self.container_id(h)  # refuses, naming the cluster's workstations
            return cast(backends.HostMpi, self.backend).mpirun_popen(hosts, argv, env=env)
        return self.start(hosts[0], self.mpi_argv(hosts, argv, forward=sorted(env or {})), env=env)

    @property
    def connect(self) -> Connect:
        """How the controller opens a TCP connection to a workstation's address: directly, or
        through the backend's gateway where the controller is not on the cluster's network
        (the Swarm overlay: testbed/backends/swarm/gateway.py)."""
        if self.backend.capabilities.gateway:
            return cast(backends.Gateway, self.backend).connector(self.name)
        return direct

    def job_launcher(self) -> Launcher:
        """Where malleable jobs launch: the cluster's resident MPI world (testbed/pool.py; the
        local backend's own, workloads/host/pool_local.py, in this process).

        A launch or a relaunch is then a message to already-initialised ranks, not an
        mpiexec (tens of milliseconds against 1-1.6 s warm; workloads/README.md).
        `mpirun_popen` stays the way to run any other MPI program.
        """
        if self._jobs is None:
            if self.backend.capabilities.host_mpi:
                self._jobs = cast(backends.HostMpi, self.backend).job_launcher(self.name)
            else:
                self._jobs = pool.pool_launcher(self)
        return self._jobs

    def wait_ssh_ready(self, *, timeout: float = 60.0, progress: Progress = quiet) -> None:
        """Every workstation accepts the cluster key over SSH and runs a command. A backend whose
        workstations the controller cannot reach (`controller_on_network` False: Swarm's overlay)
        is probed from inside each workstation, over its own sshd."""
        if not self.backend.capabilities.ssh_login:
            progress("waiting for ssh", len(self.workstations), len(self.workstations))
            return  # no sshd to wait for (local): a workstation is ready as soon as it is named
        deadline = time.monotonic() + timeout
        ready = 0
        direct = self.backend.capabilities.controller_on_network

        def probe(ws: str) -> None:
            nonlocal ready
            while True:
                ctl = self.ssh(ws) if direct else InsideSsh(self.control(ws), ws)
                try:
                    if ctl.run(["true"]).ok:
                        ready += 1
                        progress("waiting for ssh", ready, len(self.workstations))
                        return
                except (OSError, paramiko.SSHException, EOFError, backends.BackendError):
                    pass
                finally:
                    ctl.close()
                if time.monotonic() > deadline:
                    logs = self.backend.logs(self.container_id(ws), tail=5)
                    raise TimeoutError(f"{ws}: no SSH after {timeout:.0f} s; its log says: {logs}")
                time.sleep(0.1)

        parallel(probe, self.workstations)

    # -- live changes ------------------------------------------------------------------
    def _replace_spec(self, spec: ClusterSpec) -> None:
        self.state.spec = spec.model_dump(by_alias=True)
        self.state.save()

    def _with_workstation(self, spec: ClusterSpec, ws: str, **changes: object) -> ClusterSpec:
        return with_workstation(spec, ws, **changes)

    def set_cpu(self, ws: str, cores: float) -> None:
        """Change a workstation's CPU cap in place (no restart)."""
        require(self.backend, "cpu_caps", f"cpu: {ws}'s cap")
        spec = self.spec
        spec.workstation(ws)
        if cores <= 0 or cores > 1:
            raise SpecError(f"cpu: must be in (0, 1] cores, got {cores}")
        new = self._with_workstation(spec, ws, cpu=float(cores))
        core = self.state.cores[ws]
        load = sum(new.cpu(w) for w, c in self.state.cores.items() if c == core)
        load += self.backend.pinned_load(exclude=self.name).get(core, 0.0)
        if load > CORE_LIMIT + 1e-9 and not spec.oversubscribe:
            raise SpecError(f"cpu: core {core} would carry {load:.2f} cores of caps, above {CORE_LIMIT:.0%}")
        self.backend.set_cpu_cap(self.container_id(ws), CpuCap(float(cores), new.cfs_period_us(ws)))
        self._replace_spec(new)

    def set_bandwidth(self, ws: str, rate: int | str, *, to: str | None = None) -> None:
        """Change a workstation's egress, or its link to `to` (both ways if links are symmetric)."""
        require(self.backend, "shapes_links", f"bw: {ws}'s link")
        try:
            bits = parse_rate(rate)
        except RateError as exc:
            raise SpecError(f"bw: {exc}") from None
        spec = self.spec
        spec.workstation(ws)
        if to is None:
            new = self._with_workstation(spec, ws, egress=bits)
            touched = [ws]
        else:
            spec.workstation(to)
            if to == ws:
                raise SpecError(f"to: a link from {ws} to itself")
            new = self._with_workstation(spec, ws, links={**spec.workstation(ws).links, to: bits})
            touched = [ws]
            if spec.symmetric_links:
                new = self._with_workstation(new, to, links={**new.workstation(to).links, ws: bits})
                touched.append(to)
        for name in touched:
            try:
                self.backend.shape(self.container_id(name), shaping.change_commands(new, name, self.ips))
            except RuntimeError as exc:
                raise RuntimeError(f"{name}: {exc}") from exc
        self._replace_spec(new)

    def hold(self, ws: str, held: bool) -> None:
        """Stop (held) or continue every process on `ws` at once: cap mode's owner bursts."""
        require(self.backend, "cpu_caps", f"{ws}: holding its processes")
        self.backend.hold(self.container_id(ws), held)

    def write_cpu_cap(self, ws: str, cores: float, period_us: int) -> None:
        """The cap in force now, written straight to the kernel; the spec and the engine keep
        the nominal cap. For caps that move on a schedule (cap mode): a `set_cpu` costs
        15-200 ms of dockerd here, a write about 0.2 ms."""
        require(self.backend, "cpu_caps", f"{ws}: a CPU cap")
        self.backend.write_cpu_cap(self.container_id(ws), CpuCap(cores, period_us))

    # -- reading back what the kernel enforces ------------------------------------------
    def cpu_limits(self, ws: str) -> dict[str, object]:
        """The quota, period, cores and cpuset as the kernel holds them now."""
        return self.backend.cpu_limits(self.container_id(ws)).as_dict()

    def cpu_usage_ns(self, ws: str) -> int:
        """CPU time used by everything on `ws`, in ns."""
        return self.backend.cpu_usage_ns(self.container_id(ws))

    def oom_kills(self, ws: str) -> int:
        """Processes killed on `ws` for passing its memory limit since it started; 0 when the
        workstation cannot be read (gone: its jobs fail for that reason instead), or is this host
        (local: no memory limit of its own to pass)."""
        if not self.backend.capabilities.own_machines:
            return 0
        try:
            return self.backend.oom_kills(self.container_id(ws))
        except (OSError, ValueError, KeyError, backends.BackendError):  # Swarm: its host gone
            return 0

    def processes_cpu_ns(self, ws: str, command_contains: str) -> int:
        """CPU time of the processes on `ws` whose command line contains the text, in ns."""
        return self.backend.processes_cpu_ns(self.container_id(ws), command_contains)

    def read_net(self, ws: str, argv: Sequence[str], timeout: float = 10.0) -> ExecResult:
        """A short network read (`tc -s`) on `ws`, cheaper than `exec` (backend.read_net)."""
        return self.backend.read_net(self.container_id(ws), argv, timeout=timeout)

    def sample_stream(self, mark: str, tc_argv: Sequence[str], interval_s: float) -> SampleSource | None:
        """The backend's own sampling of every workstation for the monitor, if it has one (Swarm:
        one sampler per host instead of three execs per workstation per sample); None: the
        monitor reads each workstation through cpu_limits, processes_cpu_ns and read_net."""
        if not self.backend.capabilities.samples_itself:
            return None
        return cast(backends.SelfSampling, self.backend).sample_stream({ws: self.container_id(ws) for ws in self.workstations}, mark=mark,
                                          tc_argv=tc_argv, interval_s=interval_s)

    def tc_show(self, ws: str, what: str = "class") -> str:
        require(self.backend, "shapes_links", f"{ws}: its tc classes")
        return self.exec(ws, ["tc", what, "show", "dev", shaping.DEV]).check("tc show").stdout
