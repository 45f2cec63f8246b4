"""What the layers above need from the machines under a cluster, whatever runs them.

`Cluster` (testbed/cluster.py) holds the policy: placement, the spec, live changes, MPI
argv, the resident pool. A backend only does what depends on where the workstations
are: make and remove them, cap their CPU, read their counters, run commands in them.
Docker on this host is the first (testbed/backends/docker/); SSH hosts and several hosts
plug in beside it by implementing `Backend` and adding their kind to
`testbed.backends.get`.

A workstation is named to a backend by its *machine id*, the handle `up` returned for
it (a container id with Docker, a host name with SSH); `Cluster` keeps the mapping.
Units are explicit: cores (a fraction of one host core), microseconds, nanoseconds.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Protocol, Sequence, runtime_checkable

from testbed.spec import cfs_quota_us

if TYPE_CHECKING:
    from testbed.backends.meter_stream import MeterStream
    from testbed.placement import Placement
    from testbed.remote_exec import Control, ExecResult
    from testbed.spec import ClusterSpec
    from workloads.host.launch import Handle
    from workloads.host.pool_client import Connect, PoolLauncher

MachineId = str
Progress = Callable[[str, int, int], None]  # (stage, done, total)


class BackendError(RuntimeError):
    """The backend could not reach a workstation or its engine (gone, or the engine failed).

    Raised instead of the engine's own exceptions, so callers (the monitor's thread) can
    catch it without importing Docker or paramiko."""


class Unsupported(RuntimeError):
    """Asked of a backend what its `Capabilities` say it cannot do; the message is one line naming
    the capability (`require` builds it), for the command line to print as it is."""


@dataclass(frozen=True)
class CpuCap:
    """A CFS bandwidth cap: `cores` of one core, enforced over every `period_us`."""

    cores: float
    period_us: int

    def __post_init__(self) -> None:
        if not self.cores > 0:
            raise ValueError(f"cores: a CPU cap must be above 0 cores, got {self.cores}")
        if self.period_us <= 0:
            raise ValueError(f"period_us: must be positive, got {self.period_us}")

    @property
    def quota_us(self) -> int:
        return cfs_quota_us(self.cores, self.period_us)


@dataclass(frozen=True)
class CpuLimits:
    """The cap and pinning as the kernel holds them now (not as the spec asked)."""

    quota_us: int
    period_us: int
    cpuset: str  # host cores, in the kernel's list syntax ("1", "0-1")

    @property
    def cores(self) -> float:
        return self.quota_us / self.period_us

    def as_dict(self) -> dict[str, object]:
        return {"quota_us": self.quota_us, "period_us": self.period_us, "cores": self.cores, "cpuset": self.cpuset}


@dataclass(frozen=True)
class Sampled:
    """One workstation's monitor readings taken on its host by the backend (Swarm's samplers);
    `t` the host's wall clock at the read."""

    t: float
    limits: CpuLimits
    procs_ns: int  # CPU time of the processes with the monitor's mark (the owners)
    tc: str  # "stamp\ntc output", as testbed/load/monitor.py read_tc returns; "" if that read failed


class SampleSource(Protocol):
    """A backend's own sampling of its workstations for the monitor (`Backend.sample_stream`,
    optional): the newest readings it has, by workstation; a workstation it has no fresh
    reading of is left out, and the monitor reads it itself."""

    def latest(self) -> dict[str, Sampled]: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Provisioned:
    """What `Backend.up` made: enough for `Cluster` to address, launch on and remove it."""

    network: str  # the backend's id of the cluster network
    subnet: str
    gateway: str  # the host as the workstations see it (where a job's coordinator listens)
    image: str  # what the workstations run (an image tag with Docker)
    ips: dict[str, str]  # workstation -> address; every workstation resolves every other's name
    machines: dict[str, MachineId] = field(default_factory=dict)


@dataclass(frozen=True)
class Capabilities:
    """What a backend does beyond `Backend`, declared by it and asked by its callers (rather
    than probed for with hasattr). Each flag that is set promises the methods of the protocol
    it names below; tests/unit/testbed/test_testbed_backends_capabilities.py holds every
    backend to its word."""

    places_on_hosts: bool = False  # HostPlacing: several hosts; `cores()` are slots and `place` places on them
    meters_remotely: bool = False  # RemoteMetering: the keeper follows speed probes on the hosts, by slot
    samples_itself: bool = False  # SelfSampling: the monitor reads a stream of the backend's own samples
    own_login: bool = False  # OwnLogin: a workstation's user and port (else root on port 22)
    gateway: bool = False  # Gateway: the controller reaches the workstations through a tunnel
    host_mpi: bool = False  # HostMpi: MPI jobs and the resident pool start on this host, not in a workstation
    controller_on_network: bool = True  # False: readiness is probed from inside each workstation
    # What a backend may lack of `Backend` itself (every machine backend has them all): asked
    # with `require`, which refuses in one line naming the flag.
    cpu_caps: bool = True  # caps and pins each workstation's CPU (caps, holds, the speed keeper)
    shapes_links: bool = True  # tc shapes each workstation's egress (shape, read_net)
    ssh_login: bool = True  # each workstation runs sshd with the cluster key (readiness, warm paths)
    own_machines: bool = True  # each workstation is a machine apart (its processes, counters, memory)


#: What each limit flag means, for the one-line refusals.
LIMITS = {"cpu_caps": "CPU caps", "shapes_links": "tc shaping", "ssh_login": "SSH to its workstations",
          "own_machines": "workstations apart from this host"}


def unsupported(backend: "Backend", capability: str, what: str) -> Unsupported:
    """The one-line refusal of `what`, which needs `capability` (a `LIMITS` flag)."""
    return Unsupported(f"{what}: the {backend.kind} backend has no {LIMITS[capability]} ({capability})")


def require(backend: "Backend", capability: str, what: str) -> None:
    """Refuse `what` if `backend` does not declare `capability` (a `LIMITS` flag)."""
    if not getattr(backend.capabilities, capability):
        raise unsupported(backend, capability, what)


@runtime_checkable
class Backend(Protocol):
    """One way of running a cluster's workstations. Methods taking a `machine` act on one
    workstation; the rest act on whole clusters, named as in their spec."""

    kind: str  # "docker"; recorded in the cluster's state so `Cluster.attach` picks it again
    capabilities: Capabilities  # what it does beyond this protocol (the protocols below)

    # -- capacity: what placement needs before anything starts ------------------------------
    def cores(self) -> list[int]:
        """The host cores workstations can be pinned to."""
        ...

    def pinned_load(self, exclude: str | None = None) -> dict[int, float]:
        """Cores of caps already pinned to each core by running clusters (but `exclude`)."""
        ...

    # -- clusters ---------------------------------------------------------------------------
    def up(self, spec: "ClusterSpec", *, cores: dict[str, int], key_dir: Path,
           progress: Progress) -> Provisioned:
        """Make and start every workstation of a resolved spec, pinned to `cores`, its links
        shaped, sshd running with the key pair in `key_dir`. On failure the caller calls
        `remove(spec.name)`, so everything made must be findable by the cluster's name."""
        ...

    def remove(self, cluster: str) -> dict[str, int]:
        """Remove everything of `cluster`; idempotent. Counts by kind ("containers", ...)."""
        ...

    def cluster_names(self) -> list[str]:
        """Every cluster this backend runs, whoever started it."""
        ...

    def orphaned(self, cluster: str) -> bool:
        """`cluster` exists and the process that brought it up is gone (a killed run left it)."""
        ...

    def leftovers(self) -> list[str]:
        """Clusters nobody looks after: never marked ready, and their `up` is gone (`gc`)."""
        ...

    def stranded(self, cluster: str) -> list[str]:
        """Hosts of `cluster` that did not answer when it was taken down, so it is still
        recorded and its name taken ([] if none: one engine has no such hosts)."""
        ...

    def forget(self, cluster: str) -> list[str]:
        """Drop a stranded cluster's record, freeing its name; returns the hosts it named. What
        is left on them stays there until `gc` reaches them again."""
        ...

    # -- one workstation --------------------------------------------------------------------
    def is_running(self, machine: MachineId) -> bool:
        """The workstation runs; one the backend cannot see is as good as gone."""
        ...

    def is_paused(self, machine: MachineId) -> bool:
        """Someone paused the workstation through the engine (`docker pause`). nowlab's own
        owner bursts freeze it behind the engine's back and do not count."""
        ...

    def logs(self, machine: MachineId, tail: int = 5) -> str:
        """The last lines the workstation's init wrote, to explain a failed start."""
        ...

    def set_cpu_cap(self, machine: MachineId, cap: CpuCap) -> None:
        """Change the cap and keep it (the engine's record changes too): `nowlab set`."""
        ...

    def write_cpu_cap(self, machine: MachineId, cap: CpuCap) -> None:
        """Change the cap in force now, as fast as possible, without touching the engine's
        record: for caps that move on a schedule (cap mode, the speed keeper)."""
        ...

    def hold(self, machine: MachineId, held: bool) -> None:
        """Stop every process of the workstation now (held) or let them go on: an owner's burst
        that leaves its guests nothing (cap mode's fraction 0). `remove` lets held ones go first."""
        ...

    def cpu_limits(self, machine: MachineId) -> CpuLimits:
        ...

    def cpu_usage_ns(self, machine: MachineId) -> int:
        """CPU time used by everything in the workstation since it started, in ns."""
        ...

    def oom_kills(self, machine: MachineId) -> int:
        """Processes the kernel has killed in the workstation for passing its memory limit,
        since it started (a job that failed is then said to have run out of memory)."""
        ...

    def processes_cpu_ns(self, machine: MachineId, command_contains: str) -> int:
        """CPU time of the workstation's processes whose command line contains the text, in
        ns (the owner agents: the monitor splits the workstation's use by process)."""
        ...

    def control(self, machine: MachineId) -> "Control":
        """Run, start and detach argv inside the workstation (MPI launches go through it)."""
        ...

    def read_net(self, machine: MachineId, argv: Sequence[str], timeout: float = 10.0) -> "ExecResult":
        """Run a short read-only network tool (`tc -s class show`) in the workstation's network
        view, more cheaply than `control().run`: the monitor reads every link once a second."""
        ...

    def shape(self, machine: MachineId, commands: Sequence[Sequence[str]]) -> None:
        """Apply tc commands (testbed/shaping.py renders them) to the workstation's egress."""
        ...


@runtime_checkable
class HostPlacing(Protocol):
    """A backend over several hosts places workstations itself (testbed.placement_hosts: a
    workstation may name its host). Its `cores()` are slots, numbered over all hosts, and
    `place` answers in them; `Cluster.provision` calls it instead of testbed.placement.place.
    Declared by `Capabilities.places_on_hosts`."""

    def place(self, spec: "ClusterSpec", factors: dict[int, float] | None = None) -> "Placement":
        ...


class RemoteMetering(Protocol):
    """Speed probes on other hosts (`Capabilities.meters_remotely`): the keeper
    (testbed/keeper.py) reads their samples, keyed by slot, instead of metering this machine."""

    def meter_stream(self, cluster: str) -> "MeterStream":
        ...

    def metered_slots(self, cluster: str) -> list[int]:
        """The slots whose probes the keeper follows (its `cores`)."""
        ...


class SelfSampling(Protocol):
    """The backend samples its workstations for the monitor itself (`Capabilities.samples_itself`)."""

    def sample_stream(self, machines: dict[str, MachineId], *, mark: str, tc_argv: Sequence[str],
                      interval_s: float) -> SampleSource:
        ...


class OwnLogin(Protocol):
    """Workstations logged in to as another user or port than root on 22 (`Capabilities.own_login`)."""

    def login(self, machine: MachineId) -> tuple[str, int]:
        """(user, port) Cluster.ssh logs in with."""
        ...


class Gateway(Protocol):
    """The controller is not on the cluster's network and connects through the backend (`Capabilities.gateway`)."""

    def connector(self, cluster: str) -> "Connect":
        ...


class HostMpi(Protocol):
    """MPI jobs start on this host, every rank a local process (`Capabilities.host_mpi`: the local
    backend), instead of from inside the first workstation with testbed/mpi_command.py's argv."""

    def mpirun_popen(self, hosts: Sequence[str], argv: Sequence[str], *,
                     env: dict[str, str] | None = None) -> "Handle":
        ...

    def job_launcher(self, cluster: str) -> "PoolLauncher":
        """The cluster's resident pool in this process, started on first call; `remove` stops it."""
        ...
