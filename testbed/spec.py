"""The cluster spec: what workstations exist, how fast they are, and how their links are shaped.

A spec is a description only. It is validated here, rendered to Docker parameters, tc
commands and Compose files elsewhere, and never starts anything by itself.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ByteSize, ConfigDict, Field, field_validator, model_validator

from testbed.config_loader import load_toml, validate
from testbed.idle_hold import HostIdle
from testbed.units import RateError, format_rate, parse_rate

HOSTNAME = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")
DOCKER_URL = re.compile(r"^(tcp://[^\s/:@]+:\d{1,5}|ssh://([^\s/:@]+@)?[^\s/:@]+(:\d{1,5})?)$")
USER_NAME = re.compile(r"^[a-z_][a-z0-9._-]{0,31}$", re.IGNORECASE)
CLUSTER_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,30}$")
DEFAULT_EGRESS = 1_000_000_000  # 1 Gbit/s: an unshaped Gigabit Ethernet NOW
# A workstation's memory, RAM and swap together: the largest shipped job (CG 500) peaked at
# 531 MB on one workstation, and 16 workstations at 1 GiB stay under this host's 24 GiB.
DEFAULT_MEMORY = 1 << 30
MIN_MEMORY = 64 << 20  # below this the resident MPI rank (numpy and mpi4py loaded) cannot start


class SpecError(ValueError):
    """A spec that can't be used; the message is one line and names the field."""


def _rate(value: Any) -> int:
    try:
        return parse_rate(value)
    except RateError as exc:
        raise ValueError(str(exc)) from None


def _memory(v: int | None) -> int | None:
    if v is not None and v < MIN_MEMORY:
        raise ValueError(f"must be at least {MIN_MEMORY >> 20} MiB (the resident MPI rank needs it), got {v} bytes")
    return v


def _speed(v: float | None) -> float | None:
    if v is not None and not 0 < v < float("inf"):  # also refuses NaN
        raise ValueError(f"must be > 0 reference cores, and finite, got {v}")
    return v


class _Strict(BaseModel):
    # Misspelled options are errors, not silently ignored keys; NaN and infinity are never a
    # valid number here ("nan" compared False with every bound and failed later, naming no field).
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class OwnerLoad(_Strict):
    """Owner processes of a workstation (Menascé & Rao): N, think time Z s, CPU demand D s."""

    n: int = Field(ge=0)
    z: float = Field(gt=0)
    d: float = Field(gt=0)


class Defaults(_Strict):
    cpu: float = Field(0.25, description="CPU share in cores of a workstation with none given")
    egress: int = Field(DEFAULT_EGRESS, description="egress bandwidth, bit/s")
    cfs_period_us: int | None = Field(None, description="CFS period in µs; None picks it from the share")
    # Reno, the TCP of the NOWs these papers measured, fills a shaped link; BBR (this host's
    # default) paces below it and delivered 4-6% less than asked at 1-2 Mbit/s here.
    tcp: Literal["reno", "bbr"] = Field("reno", description="TCP congestion control inside workstations")
    owner: OwnerLoad | None = Field(None, description="owner load started with the cluster")
    speed: float | None = Field(None, description="reference cores of a workstation with no cpu, class or speed")
    governor: bool = Field(True, description="keep speed workstations on their reference speed live")
    # A core's speed differs by kernel: on this host multiply ran at 0.86 and matvec at 1.5-1.6
    # reference-seconds per CPU-second, so speeds held for their mean gave multiply-bound jobs
    # 23% less than asked (zb4, 25 Nov 2026). Name the kernel the cluster's jobs are made of.
    speed_kernel: Literal["mean", "multiply", "matvec"] = Field(
        "mean", description="the reference kernel speeds are held for: one kernel, or the mean of both")
    memory: ByteSize = Field(ByteSize(DEFAULT_MEMORY), description="memory of a workstation (RAM, no swap), bytes or '512MiB'")
    # An idle core of this host (a KVM guest) halts at once, and a rank waking from a polite wait
    # then waits for its vCPU: CG alone in the cluster ran 7-13% slower than among other jobs
    # (testbed/idle_hold.py, checks/idle_cores.py). "poll" holds PM QoS latency 0 while
    # the cluster is up, so idle cores poll and a job's speed no longer depends on the others.
    host_idle: HostIdle = Field("poll", description="how the controller host's cores idle while the cluster is up: "
                                                    "poll (held by the speed keeper) or halt (the kernel's default)")

    _egress = field_validator("egress", mode="before")(lambda v: _rate(v))

    @field_validator("cpu")
    @classmethod
    def _positive_cpu(cls, v: float) -> float:
        if v <= 0:
            raise ValueError(f"must be > 0 cores, got {v}")
        return v

    _speed = field_validator("speed")(lambda v: _speed(v))
    _memory = field_validator("memory")(lambda v: _memory(v))

    @field_validator("cfs_period_us")
    @classmethod
    def _period(cls, v: int | None) -> int | None:
        if v is not None and not 1_000 <= v <= 1_000_000:
            raise ValueError(f"must be between 1000 and 1000000 µs, got {v}")
        return v


class HostSpec(_Strict):
    """A machine the cluster may use (issue 18). Without any, the cluster is on this one host."""

    name: str
    address: str = Field(description="where the controller reaches it: a hostname or IP")
    cores: list[int] | Literal["all"] = Field("all", description="core ids it may pin workstations to")
    factors: dict[int, float] | None = Field(None, description="measured core factors: core id -> reference cores")
    # How the SSH backend logs in (testbed/backends/ssh/); the Docker backends ignore them.
    user: str = Field("root", description="SSH login")
    port: int = Field(22, ge=1, le=65535, description="SSH port")
    identity: str | None = Field(None, description="private key file; None: the SSH agent and ~/.ssh defaults")
    # How the Swarm backend reaches the host's dockerd (testbed/backends/swarm/hosts.py); the others ignore it.
    docker: str | None = Field(None, description="Docker API URL (tcp://HOST:PORT or ssh://USER@HOST[:PORT]); "
                                                 "None: tcp://ADDRESS:2375")

    @field_validator("user")
    @classmethod
    def _user(cls, v: str) -> str:
        if not USER_NAME.match(v):
            raise ValueError(f"{v!r} is not a valid login name (letters, digits, '.', '_', '-', max 32)")
        return v

    @field_validator("identity")
    @classmethod
    def _identity(cls, v: str | None) -> str | None:
        if v is not None and not Path(v).expanduser().is_file():
            raise ValueError(f"no key file {v!r}")
        return v

    @field_validator("docker")
    @classmethod
    def _docker(cls, v: str | None) -> str | None:
        if v is not None and not DOCKER_URL.match(v):
            raise ValueError(f"{v!r} is not a Docker API URL (tcp://HOST:PORT or ssh://[USER@]HOST[:PORT])")
        return v

    @field_validator("name")
    @classmethod
    def _hostname(cls, v: str) -> str:
        if not HOSTNAME.match(v):
            raise ValueError(f"{v!r} is not a valid host name (lowercase letters, digits and '-', max 63)")
        return v

    @field_validator("address")
    @classmethod
    def _address(cls, v: str) -> str:
        if not v or any(ch.isspace() for ch in v):
            raise ValueError(f"must be a hostname or IP without spaces, got {v!r}")
        return v

    @field_validator("cores")
    @classmethod
    def _cores(cls, v: list[int] | str) -> list[int] | str:
        if isinstance(v, list):
            if not v:
                raise ValueError('a host with no cores (list some, or "all")')
            if any(c < 0 for c in v) or len(set(v)) != len(v):
                raise ValueError(f"core ids must be distinct and >= 0, got {v}")
        return v

    @model_validator(mode="after")
    def _factors(self) -> "HostSpec":
        for core, f in (self.factors or {}).items():
            if not 0 < f < float("inf"):
                raise ValueError(f"factors.{core}: must be > 0 reference cores, and finite, got {f}")
            if self.cores != "all" and core not in self.cores:
                raise ValueError(f"factors.{core}: core {core} is not among the host's cores {self.cores}")
        return self


class WorkstationSpec(_Strict):
    name: str
    cpu: float | None = Field(None, description="CPU share in cores (a raw cap); overrides the speed class")
    speed: float | None = Field(None, description="reference cores (workloads.reference), governed live")
    speed_class: str | None = Field(None, alias="class", description="name of a speed class")
    egress: int | None = Field(None, description="egress bandwidth, bit/s")
    links: dict[str, int] = Field(default_factory=dict, description="per-peer bandwidth, bit/s")
    owner: OwnerLoad | None = Field(None, description="owner load started with the cluster")
    host: str | None = Field(None, description="the host it runs on (one of the spec's hosts); None: placement picks")
    memory: ByteSize | None = Field(None, description="memory (RAM, no swap), bytes or '512MiB'; None: the default")

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, allow_inf_nan=False)

    @field_validator("name")
    @classmethod
    def _hostname(cls, v: str) -> str:
        if not HOSTNAME.match(v):
            raise ValueError(f"{v!r} is not a valid hostname (lowercase letters, digits and '-', max 63)")
        return v

    @field_validator("cpu")
    @classmethod
    def _positive(cls, v: float | None) -> float | None:
        if v is not None and v <= 0:
            raise ValueError(f"must be > 0 cores, got {v}")
        if v is not None and v > 1:
            raise ValueError(f"a workstation is pinned to one core, so at most 1.0 core, got {v}")
        return v

    _speed = field_validator("speed")(lambda v: _speed(v))
    _memory = field_validator("memory")(lambda v: _memory(v))

    @model_validator(mode="after")
    def _cpu_or_speed(self) -> "WorkstationSpec":
        if self.speed is not None and (self.cpu is not None or self.speed_class is not None):
            what = "cpu" if self.cpu is not None else "class"
            raise ValueError(f"give either speed (reference cores) or {what}, not both")
        return self

    @field_validator("egress", mode="before")
    @classmethod
    def _egress(cls, v: Any) -> int | None:
        return None if v is None else _rate(v)

    @field_validator("links", mode="before")
    @classmethod
    def _links(cls, v: Any) -> dict[str, int]:
        if not isinstance(v, dict):
            raise ValueError("must be a table of peer = rate")
        out = {}
        for peer, rate in v.items():
            try:
                out[peer] = parse_rate(rate)
            except RateError as exc:
                raise ValueError(f"{peer}: {exc}") from None
        return out


class ClusterSpec(_Strict):
    """A cluster of emulated workstations. Rates are bit/s, CPU shares are cores."""

    name: str = "nowlab"
    defaults: Defaults = Field(default_factory=Defaults)
    classes: dict[str, float] = Field(default_factory=dict, description="speed classes: name -> cores")
    workstations: list[WorkstationSpec] = Field(alias="workstation", min_length=1)
    hosts: list[HostSpec] = Field(default_factory=list, alias="host",
                                  description="machines to spread over; none: this one host, as before")
    symmetric_links: bool = Field(True, description="a per-link rate applies both ways unless the peer sets its own")
    oversubscribe: bool = Field(False, description="warn instead of refusing caps above 90% of a core")
    seed: int = Field(0, description="seed of the owner load, for repeatable runs")
    # Filled by placement for speed workstations, never written by hand: the cores reserved
    # (the container's cap, the governor's ceiling) and the core's factor when placed.
    resolved_cpu: dict[str, float] = Field(default_factory=dict)
    placed_factor: dict[str, float] = Field(default_factory=dict)

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, allow_inf_nan=False)

    @field_validator("name")
    @classmethod
    def _cluster_name(cls, v: str) -> str:
        if not CLUSTER_NAME.match(v):
            raise ValueError(f"{v!r} is not a valid cluster name (lowercase letters, digits, '-', max 31)")
        return v

    @field_validator("classes")
    @classmethod
    def _classes(cls, v: dict[str, float]) -> dict[str, float]:
        for name, cores in v.items():
            if cores <= 0 or cores > 1:
                raise ValueError(f"{name}: a speed must be in (0, 1] cores, got {cores}")
        return v

    @model_validator(mode="after")
    def _cross_checks(self) -> "ClusterSpec":
        hosts: set[str] = set()
        for i, h in enumerate(self.hosts):
            if h.name in hosts:
                raise ValueError(f"host[{i}].name: duplicate host name {h.name!r}")
            hosts.add(h.name)
        for i, ws in enumerate(self.workstations):
            if ws.host is not None and ws.host not in hosts:
                known = ", ".join(h.name for h in self.hosts) or "none listed"
                raise ValueError(f"workstation[{i}].host: unknown host {ws.host!r} (known: {known})")
        seen: set[str] = set()
        for i, ws in enumerate(self.workstations):
            if ws.name in seen:
                raise ValueError(f"workstation[{i}].name: duplicate name {ws.name!r}")
            seen.add(ws.name)
            if ws.speed_class is not None and ws.speed_class not in self.classes:
                known = ", ".join(sorted(self.classes)) or "none defined"
                raise ValueError(f"workstation[{i}].class: unknown speed class {ws.speed_class!r} (known: {known})")
        for i, ws in enumerate(self.workstations):
            for peer in ws.links:
                if peer not in seen:
                    raise ValueError(f"workstation[{i}].links.{peer}: unknown peer {peer!r}")
                if peer == ws.name:
                    raise ValueError(f"workstation[{i}].links.{peer}: a link to itself")
        return self

    # -- derived views -------------------------------------------------------------------
    @property
    def names(self) -> list[str]:
        return [ws.name for ws in self.workstations]

    def workstation(self, name: str) -> WorkstationSpec:
        for ws in self.workstations:
            if ws.name == name:
                return ws
        raise KeyError(f"no workstation named {name!r} (known: {', '.join(self.names)})")

    def speed(self, name: str) -> float | None:
        """Reference cores asked of a workstation, or None when it has a raw cap in cores."""
        ws = self.workstation(name)
        if ws.speed is not None:
            return ws.speed
        if ws.cpu is None and ws.speed_class is None and self.defaults.speed is not None:
            return self.defaults.speed
        return None

    def governed(self, name: str) -> bool:
        return self.defaults.governor and self.speed(name) is not None

    @property
    def kernel(self) -> str | None:
        """The kernel speeds are metered and held by (None: the mean of the meter's kernels)."""
        return None if self.defaults.speed_kernel == "mean" else self.defaults.speed_kernel

    def cpu(self, name: str) -> float:
        """The cap in cores. A speed workstation's is what placement reserved for it (before
        placement: its speed, as if one core gave one reference core, which overstates it)."""
        ws = self.workstation(name)
        if ws.cpu is not None:
            return ws.cpu
        if ws.speed_class is not None:
            return self.classes[ws.speed_class]
        speed = self.speed(name)
        if speed is not None:
            return self.resolved_cpu.get(name, min(1.0, speed))
        return self.defaults.cpu

    def nominal_cpu(self, name: str) -> float:
        """Cores that give a speed workstation its speed at the factor seen at placement."""
        speed, f = self.speed(name), self.placed_factor.get(name)
        return self.cpu(name) if speed is None or f is None else min(self.cpu(name), speed / f)

    def scaled(self, k: float) -> "ClusterSpec":
        """Every speed in reference cores times `k` (raw caps in cores unchanged): the same cluster,
        uniformly slower, for a host whose cores cannot give the speeds asked (testbed.speed_fit)."""
        if not 0 < k < float("inf"):
            raise SpecError(f"speed_scale: must be > 0 and finite, got {k}")
        if k == 1:
            return self
        workstations = [w if w.speed is None else w.model_copy(update={"speed": w.speed * k})
                        for w in self.workstations]
        defaults = self.defaults if self.defaults.speed is None else self.defaults.model_copy(
            update={"speed": self.defaults.speed * k})
        return self.model_copy(update={"workstations": workstations, "defaults": defaults})

    def resolve(self, cpu: dict[str, float], factor: dict[str, float]) -> "ClusterSpec":
        return self.model_copy(update={"resolved_cpu": dict(cpu), "placed_factor": dict(factor)})

    def memory(self, name: str) -> int:
        """Bytes of memory, RAM and swap together: a job past it is killed inside the workstation."""
        own = self.workstation(name).memory
        return int(own if own is not None else self.defaults.memory)

    def egress(self, name: str) -> int:
        ws = self.workstation(name)
        return ws.egress if ws.egress is not None else self.defaults.egress

    def link_rates(self, name: str) -> dict[str, int]:
        """Per-peer caps on this workstation's egress, after symmetry is applied."""
        own = dict(self.workstation(name).links)
        if self.symmetric_links:
            for other in self.workstations:
                if name in other.links and other.name not in own:
                    own[other.name] = other.links[name]
        return own

    def link_rate(self, src: str, dst: str) -> int:
        """What src can send to dst: the smaller of its egress and any per-link cap."""
        return min(self.egress(src), self.link_rates(src).get(dst, self.egress(src)))

    def owner(self, name: str) -> OwnerLoad | None:
        ws = self.workstation(name)
        return ws.owner if ws.owner is not None else self.defaults.owner

    def cfs_period_us(self, name: str) -> int:
        return cfs_period_us(self.cpu(name), self.defaults.cfs_period_us)

    def describe(self) -> list[dict[str, Any]]:
        return [{"name": n, "cpu": self.cpu(n), "speed": self.speed(n), "egress": format_rate(self.egress(n)),
                 "links": {p: format_rate(r) for p, r in self.link_rates(n).items()}} for n in self.names]

    def with_name(self, name: str) -> "ClusterSpec":
        return self.model_copy(update={"name": ClusterSpec._cluster_name(name)})


# The kernel refuses a CFS quota below 1 ms, so a share s needs a period of at least 1 ms/s.
MIN_QUOTA_US = 1_000
# 10 ms: at 0.1 core a rank is throttled for at most 9 ms at a time instead of 90 ms with
# Docker's default 100 ms, which keeps MPI latency from being quantised by the throttle
# (measured in checks/cfs_period.py; see docs/cpu.md).
DEFAULT_CFS_PERIOD_US = 10_000


def cfs_period_us(share: float, requested: int | None = None) -> int:
    """The CFS period for a share: the requested or default one, raised so the quota is >= 1 ms."""
    period = requested if requested is not None else DEFAULT_CFS_PERIOD_US
    return max(period, int(-(-MIN_QUOTA_US // share)) if share < 1 else period)


def cfs_quota_us(share: float, period_us: int) -> int:
    return max(MIN_QUOTA_US, int(round(share * period_us)))


#: The most workstations a spec may name, counts expanded: four times the largest cluster nowlab is
#: sized for (1,024, docs/scale.md). Checked before expanding, so a stray `count = 1e9` is a
#: one-line error, not a list that takes the host's memory (the fuzzer found one: 23 GB, OOM-killed).
MAX_WORKSTATIONS = 4096


def _expand(raw: dict[str, Any]) -> dict[str, Any]:
    """`count = n` on a workstation table expands it to name1..nameN (handy for big clusters)."""
    items = raw.get("workstation")
    if not isinstance(items, list):
        return raw
    expanded = []
    for i, item in enumerate(items):
        if isinstance(item, dict) and "count" in item:
            count = item["count"]
            if not isinstance(count, int) or count < 1:
                raise SpecError(f"workstation[{i}].count: must be a whole number >= 1, got {count!r}")
            if len(expanded) + count > MAX_WORKSTATIONS:
                raise SpecError(f"workstation[{i}].count: {count} makes more than {MAX_WORKSTATIONS} "
                                f"workstations in all, the most a spec may name")
            base = {k: v for k, v in item.items() if k != "count"}
            expanded.extend({**base, "name": f"{base.get('name', 'ws')}{j}"} for j in range(1, count + 1))
        else:
            expanded.append(item)
    if len(expanded) > MAX_WORKSTATIONS:
        raise SpecError(f"workstation: {len(expanded)} workstations, more than the {MAX_WORKSTATIONS} "
                        f"a spec may name")
    return {**raw, "workstation": expanded}


def from_dict(raw: dict[str, Any]) -> ClusterSpec:
    """Validate a raw mapping; any problem becomes one SpecError line naming the field."""
    return validate(ClusterSpec, _expand(raw), SpecError, unknown_word="option")


def load(path: str | Path) -> ClusterSpec:
    """Read a TOML spec; the cluster is named after the file unless it names itself."""
    path = Path(path)
    name = re.sub(r"[^a-z0-9-]", "-", path.stem.lower())[:31]
    return load_toml(path, ClusterSpec, SpecError, unknown_word="option", kind="spec file",
                     prepare=lambda raw: _expand({"name": name, **raw}))
